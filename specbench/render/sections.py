"""The report's sections, in the order report.md and report.html print them.

`SECTIONS` is the report as a declaration: each entry names a section and the function
that yields its parts (the analysis layer's table builders, the figures drawn from them,
and why a table is absent). Adding a section is one entry here plus its table-data
function in `analysis/`; `render.section.build_sections` walks the list.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from specbench.advise import pareto as PF
from specbench.advise.slo import capacity_table
from specbench.advise.tables import advice_tables
from specbench.analysis import table_data as D
from specbench.analysis import tables as T
from specbench.analysis import wording as W
from specbench.analysis.basis import figure_cells
from specbench.analysis.cuts_tables import al_by_position, thinking_vs_answer
from specbench.analysis.domain_speedup import domain_speedup, mixed_workloads
from specbench.analysis.health import cell_health
from specbench.analysis.intervals import summary_mean
from specbench.render import plots as P
from specbench.render.outcome import FigureShown, al_copies, points
from specbench.render.section import FigureSpec, Part, ReportInputs, Section, TablePart
from specbench.results import columns as C
from specbench.results.selection import (
    Comparison,
    common_concurrencies,
    mixed_cells,
    ordered_datasets,
    pick_concurrency,
)
from specbench.stats.launches import KIND_WORDS

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from specbench.analysis.table import Table
    from specbench.results.loading import LoadedCell

#: A figure of one AL definition's copy of a table: (data, labels, title) → Figure.
AlPlot = Callable[["pd.DataFrame", Sequence[str], str], "Figure"]
#: An issue-18 cut's table (from the requests' records) and its plot.
CutsBuilder = Callable[[Sequence["LoadedCell"], Sequence[str]], "Table"]
CutsPlot = Callable[["pd.DataFrame", str], "Figure"]


def _al_name(data: pd.DataFrame) -> str:
    """The definition a figure plots, as its title says it."""
    shown = str(data[T.AL_DEFINITION].iloc[0]) if T.AL_DEFINITION in data else "step_weighted"
    return "official AL (SPEED-Bench)" if shown == "official" else "step-weighted AL"


def _al_by_domain(inputs: ReportInputs) -> Iterator[Part]:
    speculative = list(inputs.selection.speculative)
    if not speculative:
        yield "acceptance tables: no speculative config (no label has spec-decode counters)"
        return
    groups = D.domain_groups(inputs.categories, speculative)
    if not groups:
        yield (
            "AL by domain: no per-category acceptance (run speed-bench:qualitative mixed "
            "with a speculative config)"
        )
    for group in groups:
        yield _domain_part(inputs, group, speculative)


def _domain_part(inputs: ReportInputs, group: str, speculative: list[str]) -> TablePart:
    """AL by domain of one group of categories, and its figure in each AL definition."""
    frame, options = inputs.frame, inputs.options
    build = partial(T.al_by_domain, frame, inputs.categories, group, speculative)

    def figures(table: Table) -> list[FigureSpec]:
        basis = figure_cells(frame[frame[C.GROUP] == group], speculative)
        return [
            _al_figure(table.name, copy, shown, P.al_by_domain, speculative, copy.title)
            for copy, shown in al_copies(table, build, basis, options)
        ]

    return TablePart(partial(build, options.al_definition), figures)


def _al_figure(
    name: str, copy: Table, shown: FigureShown, plot: AlPlot, labels: list[str], title: str
) -> FigureSpec:
    """One copy of an AL figure (the page switches between the two definitions)."""
    title = f"{title}, {_al_name(copy.data)}"
    return FigureSpec(name, title, partial(plot, copy.data, labels, title), shown)


def _al_by_context(inputs: ReportInputs) -> Iterator[Part]:
    frame, options = inputs.frame, inputs.options
    speculative = list(inputs.selection.speculative)
    if not speculative:
        return
    build = partial(T.al_by_context, frame, speculative)

    def figures(table: Table) -> list[FigureSpec]:
        basis = figure_cells(frame[frame[C.CONTEXT_K].notna()], speculative)
        title = "Acceptance length vs context length"
        return [
            _al_figure("al_vs_context", copy, shown, P.al_vs_context, speculative, title)
            for copy, shown in al_copies(table, build, basis, options)
        ]

    yield TablePart(partial(build, options.al_definition), figures)


def _serving(inputs: ReportInputs) -> Iterator[Part]:
    selection = inputs.selection
    if not selection.speculative:
        yield "serving and concurrency tables: no speculative config"
    elif not selection.comparisons:
        note = selection.baseline_note or "no baseline for the speculative configs"
        yield f"serving and concurrency tables: {note} (pass --baseline NAME)"
    for comparison in selection.comparisons:
        yield from _serving_pair(inputs, comparison)


def _serving_pair(inputs: ReportInputs, comparison: Comparison) -> Iterator[Part]:
    """The serving table and the concurrency sweep of one pair on every dataset both ran."""
    frame, options = inputs.frame, inputs.options
    mixed = mixed_cells(frame)
    pair = [comparison.speculative, comparison.baseline]
    shared = [
        d
        for d in ordered_datasets(mixed, C.VIEW)
        if set(pair) <= set(mixed.loc[mixed[C.VIEW] == d, C.LABEL])
    ]
    if not shared:
        yield (
            f"serving results {comparison.speculative} vs {comparison.baseline}: no dataset "
            "run (mixed) by both"
        )
    for dataset in shared:
        available = common_concurrencies(mixed, pair, dataset)
        concurrency = pick_concurrency(available, options.concurrency)
        if concurrency is None:
            yield (
                f"serving results at concurrency {options.concurrency} on {dataset}: not run by "
                f"both {comparison.speculative} and {comparison.baseline} "
                f"(both ran: {', '.join(map(str, available)) or 'none'})"
            )
        else:
            yield TablePart(
                partial(T.serving, frame, comparison, dataset, concurrency, inputs.calibration)
            )
        figures = partial(_throughput_figure, frame, comparison, dataset)
        sweep = partial(T.concurrency_sweep, frame, comparison, dataset, inputs.calibration)
        yield TablePart(sweep, figures)


def _throughput_figure(
    frame: pd.DataFrame, comparison: Comparison, dataset: str, table: Table
) -> list[FigureSpec]:
    """Output throughput vs concurrency, when the sweep has two points or more."""
    if len(table.data) < 2:
        return []
    splits = frame.loc[frame[C.VIEW] == dataset, C.SPLIT].dropna()
    phrase = W.dataset_phrase(dataset, str(splits.iloc[0]) if len(splits) else None)
    per = "per GPU" if "/GPU" in table.columns[1] else "per server"
    title = f"Output throughput {per} vs concurrency ({phrase})"
    draw = partial(
        P.throughput_vs_concurrency, table.data, comparison.speculative, comparison.baseline, title
    )
    name = table.name.replace("concurrency_sweep", "throughput_vs_concurrency")
    pair = [comparison.speculative, comparison.baseline]
    basis = figure_cells(frame[frame[C.VIEW] == dataset], pair)
    hover = _with_intervals(points(table), table, comparison)
    return [FigureSpec(name, title, draw, FigureShown(basis=basis, points=hover, card=True))]


def _with_intervals(
    shown: tuple[str, ...], table: Table, comparison: Comparison
) -> tuple[str, ...]:
    """Each point's hover text with both sides' 95% interval and its kind, and the
    speedup's (`table_data.interval_columns`)."""
    lines = []
    for text, row in zip(shown, table.data.to_dict(orient="records"), strict=True):
        extra = []
        sides = ((D.SPECULATIVE, comparison.speculative), (D.BASELINE, comparison.baseline))
        for side, label in sides:
            half, kind = row.get(side + D.SUFFIX_CI_HALF), row.get(side + D.SUFFIX_CI_KIND)
            if isinstance(half, float) and math.isfinite(half) and kind:
                value = float(row[side])
                extra.append(
                    f"{label} 95% interval: {value - half:,.1f}–{value + half:,.1f} "
                    f"({KIND_WORDS[str(kind)]})"
                )
        low, high = row.get(D.RATIO + D.SUFFIX_CI_LOW), row.get(D.RATIO + D.SUFFIX_CI_HIGH)
        if isinstance(low, float) and isinstance(high, float) and math.isfinite(low + high):
            extra.append(f"speedup 95% interval: {W.ratio_range(low, high)}")
        lines.append("\n".join([text, *extra]))
    return tuple(lines)


def _cell_health(inputs: ReportInputs) -> Iterator[Part]:
    if len(inputs.frame):
        yield TablePart(partial(cell_health, inputs.frame))


def _acceptance_summary(inputs: ReportInputs) -> Iterator[Part]:
    frame = inputs.frame
    speculative = list(inputs.selection.speculative)
    if not speculative:
        return

    def figures(table: Table) -> list[FigureSpec]:
        title, data = "Per-position acceptance rate", table.data
        if len(speculative) > 1:
            # Several configs: one line per config on the first dataset (qualitative
            # when run), else the figure drowns in config × dataset lines.
            first = ordered_datasets(frame[frame[C.LABEL].isin(speculative)], C.VIEW)[0]
            data = data[data[C.VIEW] == first]
            splits = data[C.SPLIT].dropna()
            phrase = W.dataset_phrase(first, str(splits.iloc[0]) if len(splits) else None)
            title = f"{title} ({phrase})"
        basis = figure_cells(frame[frame[C.VIEW].isin(set(data[C.VIEW]))], speculative)
        draw = partial(P.per_position_acceptance, data, title)
        return [FigureSpec("per_position_acceptance", title, draw, FigureShown(basis=basis))]

    yield TablePart(partial(T.acceptance_summary, frame, speculative), figures)


def _cut(name: str, build: CutsBuilder, plot: CutsPlot) -> Section:
    """An issue-18 cut (an AL over requests' records) and its figure, titled as its table:
    the title names the AL it holds (step-weighted, or a chunk estimate)."""

    def parts(inputs: ReportInputs) -> Iterator[Part]:
        speculative = list(inputs.selection.speculative)
        if not speculative:
            return
        basis = figure_cells(inputs.frame, speculative)

        def figures(table: Table) -> list[FigureSpec]:
            title = table.title
            kinds = set(table.data[T.AL_DEFINITION]) if T.AL_DEFINITION in table.data else set()
            # The page's AL switch shows or hides it as step-weighted only when it is that.
            al = "step_weighted" if kinds == {"step_weighted"} else None
            shown = FigureShown(basis=basis, al=al)
            return [FigureSpec(name, title, partial(plot, table.data, title), shown)]

        yield TablePart(partial(build, inputs.cells, speculative), figures)

    return Section(name, parts)


def _domain_speedup(inputs: ReportInputs) -> Iterator[Part]:
    if not inputs.selection.speculative:
        return
    for comparison in inputs.selection.comparisons:
        workloads = mixed_workloads(inputs.cells, comparison)
        if not workloads:
            yield (
                f"per-domain speedup {comparison.speculative} vs {comparison.baseline}: n/a, "
                "no mixed workload run by both"
            )
        for workload in workloads:
            build = partial(domain_speedup, inputs.cells, comparison, workload)
            yield TablePart(partial(_folded, build, inputs.options.concurrency))


def _energy(inputs: ReportInputs) -> Iterator[Part]:
    """Energy per output token vs concurrency of each pair, where a server measured it."""
    frame = inputs.frame
    mixed = mixed_cells(frame)
    for comparison in inputs.selection.comparisons:
        pair = [comparison.speculative, comparison.baseline]
        for dataset in ordered_datasets(mixed, C.VIEW):
            if not set(pair) <= set(mixed.loc[mixed[C.VIEW] == dataset, C.LABEL]):
                continue
            figures = partial(_energy_figure, frame, comparison, dataset)
            build = partial(T.energy_per_token, frame, comparison, dataset, inputs.calibration)
            yield TablePart(build, figures)


def _energy_figure(
    frame: pd.DataFrame, comparison: Comparison, dataset: str, table: Table
) -> list[FigureSpec]:
    """Energy per output token vs concurrency, when a side has two measured points."""
    measured = table.data[[D.SPECULATIVE, D.BASELINE]].notna().sum()
    if measured.max() < 2:
        return []
    title = table.title.replace(" vs concurrency (GPU board energy),", " vs concurrency,")
    draw = partial(
        P.energy_vs_concurrency, table.data, comparison.speculative, comparison.baseline, title
    )
    pair = [comparison.speculative, comparison.baseline]
    basis = figure_cells(frame[frame[C.VIEW] == dataset], pair)
    name = table.name.replace("energy_", "energy_vs_concurrency_", 1)
    return [FigureSpec(name, title, draw, FigureShown(basis=basis, points=points(table)))]


def _advice(inputs: ReportInputs) -> Iterator[Part]:
    """Which K to ship, where the results hold a K sweep (`advise`): the picks per objective,
    per-position acceptance by K, the schedule, the cells left out."""
    if inputs.advice is None:
        return
    for table in advice_tables(inputs.advice):
        yield TablePart(partial(lambda built: built, table))


def _pareto(inputs: ReportInputs) -> Iterator[Part]:
    """The Pareto frontier of each workload that two configs or more ran, and its figure."""
    mixed = mixed_cells(inputs.frame)
    if not len(mixed):
        return
    points = summary_mean(mixed, inputs.calibration)
    for view in ordered_datasets(mixed, C.VIEW):
        if mixed.loc[mixed[C.VIEW] == view, C.LABEL].nunique() < 2:
            continue
        build = partial(PF.pareto_frontier, points, view, PF.split_of(points, view))
        yield TablePart(build, partial(_pareto_figure, mixed, points, view))


def _pareto_figure(
    mixed: pd.DataFrame, points: pd.DataFrame, view: str, table: Table
) -> list[FigureSpec]:
    """Throughput against interactivity, every point of the workload; hover shows the cell."""
    every = PF.pareto_points(points)
    every = every[every[C.VIEW] == view].reset_index(drop=True)
    title = table.title
    name = table.name.replace("pareto_frontier", "throughput_vs_interactivity", 1)
    draw = partial(P.throughput_vs_interactivity, every, title, name)
    basis = figure_cells(mixed[mixed[C.VIEW] == view], sorted(set(every[C.LABEL])))
    shown = FigureShown(basis=basis, points=PF.hover_texts(every))
    return [FigureSpec(name, title, draw, shown)]


def _capacity(inputs: ReportInputs) -> Iterator[Part]:
    """Capacity of every config under the SLO (`--slo`, else the suite's `[slo]`)."""
    if inputs.slo is None:
        return
    mixed = mixed_cells(inputs.frame)
    points = summary_mean(mixed, inputs.calibration) if len(mixed) else mixed
    names = {
        view: W.dataset_name(view, PF.split_of(points, view))
        for view in ordered_datasets(mixed, C.VIEW)
    }
    yield TablePart(partial(capacity_table, points, inputs.slo, names))


def _folded(build: Callable[[], Table], requested: int | None) -> Table:
    """A per-concurrency table folded to the card's concurrency (`pick_concurrency`): a
    page shows those rows first and the rest one click away; its files keep every row."""
    table = build()
    concurrencies = [int(c) for c in table.data[C.CONCURRENCY]]
    concurrency = pick_concurrency(sorted(set(concurrencies)), requested)
    if concurrency is None or len(set(concurrencies)) < 2:
        return table
    shown = frozenset(i for i, c in enumerate(concurrencies) if c == concurrency)
    note = f"Shown: concurrency {concurrency}, the serving table's"
    return replace(table, shown_rows=shown, folded_note=note)


#: The report, in order. A later section: one entry here and its table data in `analysis/`.
SECTIONS: tuple[Section, ...] = (
    Section("al_by_domain", _al_by_domain),
    Section("al_by_context", _al_by_context),
    Section("serving", _serving),
    Section("energy", _energy),
    Section("advice", _advice),
    Section("pareto", _pareto),
    Section("capacity", _capacity),
    Section("cell_health", _cell_health),
    Section("acceptance_summary", _acceptance_summary),
    _cut("al_by_position", al_by_position, P.al_by_position),
    _cut("thinking_vs_answer", thinking_vs_answer, P.thinking_vs_answer),
    Section("domain_speedup", _domain_speedup),
)
