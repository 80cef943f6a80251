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

from specbench.analysis import intervals as I
from specbench.analysis.table import to_json
from specbench.common.errors import SpecbenchError
from specbench.render.markdown import join_sections, to_markdown, to_rich
from specbench.render.outcome import FORMATS, ReportOptions, ReportOutcome
from specbench.render.section import ReportInputs, build_sections
from specbench.render.sections import SECTIONS
from specbench.results import frame as F
from specbench.results import loading as L
from specbench.results.missing import describe_missing, missing_cells
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
    return report_page(
        HtmlReport(
            results=tuple(str(d) for d in options.results_dirs),
            baselines=tuple(selection.baselines),
            speculative=tuple(selection.speculative),
            tables=tuple(outcome.tables),
            figures=tuple(outcome.html_figures),
            markdown_sections=tuple(extra),
            not_built=tuple(outcome.not_built),
            failed=tuple(f"`{f.path.parent}`: {f.reason}" for f in failed),
            missing=tuple(f"`{key}`" for key in _missing(options)),
            provenance=tuple(provenance(d) for d in options.results_dirs),
            gate=gate,
        )
    )


def _markdown(
    outcome: ReportOutcome,
    selection: Selection,
    options: ReportOptions,
    failed: Sequence[L.FailedCell],
    extra: Sequence[str],
) -> str:
    lines = ["# specbench report", ""]
    lines.append("Results: " + ", ".join(f"`{d}`" for d in options.results_dirs) + ".")
    if selection.baselines:
        lines.append(f"Baseline: {', '.join(selection.baselines)}.")
    if selection.speculative:
        lines.append(f"Speculative: {', '.join(selection.speculative)}.")
    lines.append("")
    sections = ["\n".join(lines)]
    sections += [to_markdown(t) for t in outcome.tables]
    if outcome.figures:
        figure_lines = ["## Figures", ""]
        for title, paths in outcome.figures:
            shown = next((p for p in paths if p.suffix == ".png"), paths[0])
            figure_lines.append(f"![{title}]({shown.relative_to(outcome.out_dir).as_posix()})")
            figure_lines.append("")
        sections.append("\n".join(figure_lines))
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


def _write_data(
    outcome: ReportOutcome,
    frame: pd.DataFrame,
    categories: pd.DataFrame,
    cells: Sequence[L.LoadedCell],
    formats: Sequence[str],
    calibration: I.Calibration | None,
) -> None:
    """The tidy frames, every table as md/csv, tables.json and the vllm-bench files."""
    out = outcome.out_dir
    # Every file is written to a temporary name and renamed: a failed write (a full disk)
    # leaves the previous file or none, never a cut-off one.
    write_atomic(out / "summary.csv", frame.to_csv(index=False))
    write_atomic(out / "summary.parquet", frame.to_parquet(None, index=False))
    write_atomic(out / "summary_by_category.csv", categories.to_csv(index=False))
    mean = I.summary_mean(frame, calibration)
    write_atomic(out / "summary_mean.csv", mean.to_csv(index=False))
    names = ("summary.csv", "summary.parquet", "summary_by_category.csv", "summary_mean.csv")
    outcome.files += [out / name for name in names]
    for table in outcome.tables:
        if "md" in formats:
            write_atomic(out / "tables" / f"{table.name}.md", to_markdown(table))
        if "csv" in formats:
            write_atomic(out / "tables" / f"{table.name}.csv", table.data.to_csv(index=False))
    if "json" in formats:
        payload = {"tables": [to_json(t) for t in outcome.tables], "not_built": outcome.not_built}
        write_atomic(out / "tables.json", json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        outcome.files.append(out / "tables.json")
    if "vllm-bench" in formats:
        from specbench.analysis.vllm_bench import write_vllm_bench

        outcome.files += write_vllm_bench(cells, out / "vllm-bench")


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
    out = _out_dir(options)
    out.mkdir(parents=True, exist_ok=True)
    outcome = ReportOutcome(out_dir=out)
    build_sections(
        outcome, SECTIONS, ReportInputs(frame, categories, cells, selection, options, calibration)
    )
    _write_data(outcome, frame, categories, cells, options.formats, calibration)
    extra = [*_lossless_sections(options), *_cost_sections(options)]
    if "md" in options.formats:
        report = out / "report.md"
        write_atomic(report, _markdown(outcome, selection, options, failed, extra))
        outcome.files.append(report)
    if "html" in options.formats:
        page = out / "report.html"
        write_atomic(page, _html(outcome, selection, options, failed, extra))
        outcome.files.append(page)
    for _, paths in outcome.figures:
        outcome.files += paths
    if console is not None:
        _print(outcome, failed, options, console, warnings or console)
    return outcome
