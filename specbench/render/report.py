"""`specbench report`: results directories → tables, figures, `report.md` and `report.html`.

Reads only the results directories (never the network). Writes into the output folder:

    report.md                  every table, ready to paste, and links to the figures
    summary.csv, summary.parquet   the tidy frame, one row per cell
    summary_by_category.csv    one row per cell × category
    summary_mean.csv           repeats and launches collapsed: means with min/max/std/n/ci95,
                               each interval figure's launch-level interval (<figure>_ci_low,
                               _ci_high, _ci_kind, _between_launch_sd, _within_launch_se)
                               and `launches` (analysis.intervals)
    tables/<name>.md|.csv      each table (md: display; csv: unrounded data)   [md, csv]
    tables.json                every table, display rows and data             [json]
    figures/<name>.png|.svg    the figures                                    [png, svg]
    report.html                one self-contained page: every table, the figures as
                               inline SVG, provenance, the gate verdict if given  [html]
    vllm-bench/*.json          one `vllm bench serve`-shaped result per cell  [vllm-bench]

A table whose data is absent is listed under "Not built" with the reason; the others are
still built. A table of one of several datasets ends its name with the suite's workload
names of its cells (never a dataset path: the same on every machine), bounded in length so
every file name stays writable. The tables and figures are `render.sections.SECTIONS`,
built in order by `render.section.build_sections`; this module loads, walks that list and
writes the files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from specbench.advise.advice import Advice, advice_json
from specbench.advise.inputs import grid_advice
from specbench.advise.slo import Slo, recorded_slo
from specbench.analysis import intervals as I
from specbench.analysis.header import card_header, report_title
from specbench.analysis.headline import headline
from specbench.analysis.table import Table, to_json
from specbench.common.errors import SpecbenchError
from specbench.render.layout import LEAD_SECTION, arrange
from specbench.render.markdown import join_sections, to_markdown, to_rich
from specbench.render.outcome import FORMATS, ReportOptions, ReportOutcome, SavedFigure
from specbench.render.section import ReportInputs, build_sections
from specbench.render.sections import SECTIONS
from specbench.results import frame as F
from specbench.results import loading as L
from specbench.results.missing import describe_missing, missing_cells
from specbench.results.names import display_names, relative_paths
from specbench.results.selection import Selection, check_concurrency, select_labels
from specbench.store.files import write_atomic

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console


def _out_dir(options: ReportOptions) -> Path:
    if options.out is not None:
        return options.out
    if len(options.results_dirs) == 1:
        return options.results_dirs[0] / "report"
    raise SpecbenchError("--out is required when merging several results directories")


def _lossless_sections(options: ReportOptions) -> list[str]:
    """Optional: the lossless check and the three ALs of each directory (specbench.lossless)."""
    from specbench.lossless import report_section

    found = (report_section(d, options.baseline, options.speculative) for d in options.results_dirs)
    return [section for section in found if section]


def _cost_sections(options: ReportOptions) -> list[str]:
    """Optional: conversations, precision and GPU-hours per directory (issue 19)."""
    from specbench.analysis.cost_report import report_section

    found = (report_section(d) for d in options.results_dirs)
    return [section for section in found if section]


def _html(
    outcome: ReportOutcome,
    selection: Selection,
    options: ReportOptions,
    failed: Sequence[L.FailedCell],
    extra: Sequence[str],
) -> str:
    """report.html from the same tables, figures and sections as report.md."""
    from specbench.analysis.provenance import provenance
    from specbench.render.html import HtmlReport, report_page, verdict_fragment

    gate = None
    if options.gate_page is not None:
        try:
            text = options.gate_page.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or "not UTF-8 text"
            raise SpecbenchError(f"--gate {options.gate_page}: {reason}") from None
        gate = verdict_fragment(text, str(options.gate_page))
    names = display_names(options.results_dirs)
    return report_page(
        HtmlReport(
            title=report_title(options.results_dirs),
            results=tuple(names[d] for d in options.results_dirs),
            baselines=tuple(selection.baselines),
            speculative=tuple(selection.speculative),
            layout=arrange(outcome.tables, outcome.html_figures, outcome.section_of),
            markdown_sections=tuple(extra),
            not_built=tuple(outcome.not_built),
            failed=tuple(f"`{f.path.parent}`: {f.reason}" for f in failed),
            missing=tuple(f"`{key}`" for key in _missing(options)),
            provenance=tuple((names[d], provenance(d)) for d in options.results_dirs),
            gate=gate,
        )
    )


def _figure_markdown(figure: SavedFigure, out_dir: Path) -> str:
    shown = next((p for p in figure.paths if p.suffix == ".png"), figure.paths[0])
    return (
        f"![{figure.title}]({shown.relative_to(out_dir).as_posix()})\n\n_Figure: {figure.title}._\n"
    )


def _blocks_markdown(blocks: Sequence[Table | SavedFigure], out_dir: Path) -> list[str]:
    return [
        to_markdown(b, fold=True) if isinstance(b, Table) else _figure_markdown(b, out_dir)
        for b in blocks
    ]


def _markdown(
    outcome: ReportOutcome,
    selection: Selection,
    options: ReportOptions,
    failed: Sequence[L.FailedCell],
    extra: Sequence[str],
) -> str:
    """report.md: the lead (what was measured, the headline), the card's tables with its
    figure, the other figures and tables, then what was left out (`render.layout`)."""
    layout = arrange(outcome.tables, outcome.figures, outcome.section_of)
    sections = [f"# {report_title(options.results_dirs)}\n"]
    sections += [to_markdown(t) for t in layout.lead]
    if layout.card:
        sections.append("## The model card's tables\n")
        sections += _blocks_markdown(layout.card, outcome.out_dir)
    if layout.figures:
        sections.append("## Figures\n")
        sections += _blocks_markdown(layout.figures, outcome.out_dir)
    if layout.details:
        sections.append("## More tables\n")
        sections += _blocks_markdown(layout.details, outcome.out_dir)
    sections += extra
    if outcome.not_built:
        sections.append("## Not built\n\n" + "\n".join(f"- {n}" for n in outcome.not_built))
    if failed:
        sections.append(
            "## Failed cells\n\n" + "\n".join(f"- `{f.path.parent}`: {f.reason}" for f in failed)
        )
    left_out = _left_out(options)
    if left_out:
        sections.append(
            "## Rows left out\n\nRows the prepared data lacks (`data prepare --skip-gated`; "
            "the workload set `accept_partial`); every figure is over the rest.\n\n"
            + "\n".join(f"- {line}" for line in left_out)
        )
    missing = _missing(options)
    if missing:
        sections.append(
            "## Missing cells\n\nCells of the suite with no results (never measured, or "
            "interrupted); `specbench run` on the same --output measures them.\n\n"
            + "\n".join(f"- `{key}`" for key in missing)
        )
    return join_sections(sections)


def _left_out(options: ReportOptions) -> list[str]:
    """Rows left out of partial prepared data, per workload (prefixed when several dirs)."""
    from specbench.analysis.provenance import provenance

    several = len(options.results_dirs) > 1
    return [
        f"{directory}/{line}" if several else line
        for directory in options.results_dirs
        for line in provenance(directory).left_out
    ]


def _missing(options: ReportOptions) -> list[str]:
    """Missing cells of every results directory (prefixed by it when there are several)."""
    several = len(options.results_dirs) > 1
    return [
        f"{directory}/{key}" if several else key
        for directory in options.results_dirs
        for key in missing_cells(directory)
    ]


def _portable(frame: pd.DataFrame, names: dict[Path, str]) -> pd.DataFrame:
    """The frame with every text naming a results directory (its `results_dir` and
    `cell_dir` columns, a note quoting a file) by the report's name for it, never by the
    absolute path it had on the measuring machine (`results.names`)."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    portable = frame.copy()
    for column in portable.columns:
        if is_object_dtype(portable[column]) or is_string_dtype(portable[column]):
            portable[column] = portable[column].map(
                lambda v: relative_paths(v, names) if isinstance(v, str) else v
            )
    return portable


def _write_data(
    outcome: ReportOutcome,
    frame: pd.DataFrame,
    categories: pd.DataFrame,
    cells: Sequence[L.LoadedCell],
    options: ReportOptions,
    calibration: I.Calibration | None,
) -> None:
    """The tidy frames, every table as md/csv, tables.json and the vllm-bench files."""
    out, formats = outcome.out_dir, options.formats
    names = display_names(options.results_dirs)

    def portable(text: str) -> str:
        return relative_paths(text, names)

    # Every file is written to a temporary name and renamed: a failed write (a full disk)
    # leaves the previous file or none, never a cut-off one.
    tidy = _portable(frame, names)
    write_atomic(out / "summary.csv", tidy.to_csv(index=False))
    write_atomic(out / "summary.parquet", tidy.to_parquet(None, index=False))
    write_atomic(out / "summary_by_category.csv", _portable(categories, names).to_csv(index=False))
    mean = _portable(I.summary_mean(frame, calibration), names)
    write_atomic(out / "summary_mean.csv", mean.to_csv(index=False))
    names_written = (
        "summary.csv",
        "summary.parquet",
        "summary_by_category.csv",
        "summary_mean.csv",
    )
    outcome.files += [out / name for name in names_written]
    for table in outcome.tables:
        if "md" in formats:
            write_atomic(out / "tables" / f"{table.name}.md", portable(to_markdown(table)))
        if "csv" in formats:
            text = portable(table.data.to_csv(index=False))
            write_atomic(out / "tables" / f"{table.name}.csv", text)
    if "json" in formats:
        payload = {"tables": [to_json(t) for t in outcome.tables], "not_built": outcome.not_built}
        text = portable(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        write_atomic(out / "tables.json", text)
        outcome.files.append(out / "tables.json")
    if "vllm-bench" in formats:
        from specbench.analysis.vllm_bench import write_vllm_bench

        outcome.files += write_vllm_bench(cells, out / "vllm-bench")


def _compared(selection: Selection) -> str:
    """`eagle3 vs baseline; ngram vs baseline`, or the configs when nothing is compared."""
    if selection.comparisons:
        return "; ".join(f"{c.speculative} vs {c.baseline}" for c in selection.comparisons)
    labels = [*selection.speculative, *selection.baselines]
    return ", ".join(labels) + " (no comparison)" if labels else "no config"


def _lead(outcome: ReportOutcome, selection: Selection, options: ReportOptions) -> None:
    """The report's first tables: what was measured (`card_header`) and the headline, from
    the first AL by domain table and each comparison's first serving table."""
    names = display_names(options.results_dirs)
    lead = [card_header(options.results_dirs, names, _compared(selection))]
    al_table: Table | None = None
    serving: dict[tuple[str, ...], Table] = {}  # (speculative, baseline) → its first table
    for table in outcome.tables:
        section = outcome.section_of.get(table.name)
        if section == "al_by_domain" and al_table is None:
            al_table = table
        elif section == "serving" and table.name.startswith("serving_"):
            serving.setdefault(table.columns[1:3], table)
    try:
        lead.append(headline(al_table, list(serving.values()), selection.speculative))
    except ValueError as why:
        outcome.not_built.append(f"headline: {why}")
    outcome.tables[:0] = lead
    outcome.section_of.update((t.name, LEAD_SECTION) for t in lead)


def _print(
    outcome: ReportOutcome,
    failed: Sequence[L.FailedCell],
    options: ReportOptions,
    console: Console,
    warn: Console,
) -> None:
    """The tables to `console`; what was left out to `warn`."""
    for table in outcome.tables:
        console.print(to_rich(table))
    for note in outcome.not_built:
        warn.print(f"not built: {note}", style="yellow", soft_wrap=True, markup=False)
    if failed:
        warn.print(f"[yellow]{len(failed)} failed cell(s) left out (see report.md)[/]")
    missing = describe_missing(_missing(options))
    if missing:
        warn.print(missing, style="yellow", soft_wrap=True, markup=False)
    console.print(f"report written to {outcome.out_dir}", markup=False)


def _advice(options: ReportOptions, outcome: ReportOutcome, slo: Slo | None) -> Advice | None:
    """The K grid's advice, None without one; a grid the advice cannot use is noted."""
    try:
        return grid_advice(options.results_dirs, slo)
    except SpecbenchError as why:
        outcome.not_built.append(f"which K to ship: {why}")
        return None


def build_report(
    options: ReportOptions, console: Console | None = None, warnings: Console | None = None
) -> ReportOutcome:
    """Load, tabulate, plot and write everything; print the tables to `console` if given.

    What was left out (tables not built, failed and missing cells) goes to `warnings`
    (the CLI's stderr), else to `console`.
    """
    for fmt in options.formats:
        if fmt not in FORMATS:
            raise SpecbenchError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    cells, failed = L.load_cells(options.results_dirs)
    frame = F.cells_frame(cells)
    categories = F.category_frame(cells)
    check_concurrency(frame, options.concurrency)
    selection = select_labels(frame, options.baseline, options.speculative)
    calibration = (
        I.load_calibration(options.variance_from, options.results_dirs)
        if options.variance_from is not None
        else None
    )
    slo = options.slo or recorded_slo(options.results_dirs)
    out = _out_dir(options)
    out.mkdir(parents=True, exist_ok=True)
    outcome = ReportOutcome(out_dir=out)
    advice = _advice(options, outcome, slo)
    inputs = ReportInputs(frame, categories, cells, selection, options, calibration, advice, slo)
    build_sections(outcome, SECTIONS, inputs)
    _lead(outcome, selection, options)
    _write_data(outcome, frame, categories, cells, options, calibration)
    if advice is not None and "json" in options.formats:
        path = out / "advice.json"
        payload = json.dumps(advice_json(advice), indent=2, ensure_ascii=False) + "\n"
        write_atomic(path, relative_paths(payload, display_names(options.results_dirs)))
        outcome.files.append(path)
    extra = [*_lossless_sections(options), *_cost_sections(options)]
    names = display_names(options.results_dirs)
    if "md" in options.formats:
        report = out / "report.md"
        text = _markdown(outcome, selection, options, failed, extra)
        write_atomic(report, relative_paths(text, names))
        outcome.files.append(report)
    if "html" in options.formats:
        page = out / "report.html"
        write_atomic(page, relative_paths(_html(outcome, selection, options, failed, extra), names))
        outcome.files.append(page)
    for figure in outcome.figures:
        outcome.files += figure.paths
    if console is not None:
        _print(outcome, failed, options, console, warnings or console)
    return outcome
