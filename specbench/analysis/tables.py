"""The report's tables, worded as the model cards print them.

Each builder returns a `Table` (display rows + the unrounded data) or raises
`TableUnavailable` saying which data is missing, so the report can build the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeGuard

from specbench.analysis import energy as E
from specbench.analysis import table_data as D
from specbench.analysis import wording as W
from specbench.analysis.aggregate import N_CELLS
from specbench.analysis.intervals import Calibration
from specbench.analysis.table import Table
from specbench.common.naming import bounded_slug, slug
from specbench.data.categories import category_name
from specbench.metrics.declarations import ChangeWording, Figure, Wording, serving_rows
from specbench.results.columns import (
    ACCEPTANCE_DEFINITION,
    ACCEPTANCE_LENGTH,
    ACCEPTANCE_SOURCE,
    CATEGORY,
    COALESCING_CHECK,
    CONCURRENCY,
    CONTEXT_K,
    DRAFT_ACCEPTANCE_RATE,
    DRAFTED_STEP_SHARE,
    ENERGY_DETAIL,
    ENERGY_SOURCE,
    GROUP,
    LABEL,
    MERGED_CHUNKS,
    NUM_QUESTIONS,
    NUM_SUCCEEDED,
    OFFICIAL_ACCEPTANCE_LENGTH,
    OFFICIAL_IS_ESTIMATE,
    OFFICIAL_NOTE,
    OUTPUT_TOK_S,
    OUTPUT_TOK_S_PER_GPU,
    SPLIT,
    STEP_WEIGHTED_ACCEPTANCE_LENGTH,
    VIEW,
    WORKLOAD,
    position_columns,
)
from specbench.results.selection import Comparison, ordered_datasets
from specbench.stats.launches import KIND_WORDS

if TYPE_CHECKING:
    import pandas as pd


#: Footnote of a throughput that is not divided by GPUs: the count was not given.
PER_SERVER_NOTE = (
    "Throughput per server, not per GPU: a config's GPU count is unknown (bench without "
    "--gpus), and specbench never divides by a guess."
)


class TableUnavailable(Exception):
    """A table whose data is absent from the results; the message says what is missing."""


_SOURCES = {
    "per_request_metrics": "vLLM's per-request metrics (`metrics.speculative_decoding`)",
    "tokens_per_chunk": "tokens per streamed chunk (an estimate: one chunk per engine step)",
    "server_counters": "the server's spec-decode counters of single-category runs",
}
_DEFINITIONS = {
    "step_weighted": "step-weighted AL (1 + Σaccepted / Σsteps, pooled over requests)",
    "mean_over_requests": (
        "tokens-per-chunk estimate (per turn, tokens of chunks 2..n / (n − 1), mean over "
        "turns; not the official AL, only used when the server sent no per-request metrics)"
    ),
}
#: Column of a table's data naming the definition in `acceptance_length`.
AL_DEFINITION = "al_definition"


def _scope(concurrencies: Sequence[int], repeats: Sequence[int], cells: int) -> str:
    conc = ", ".join(map(str, concurrencies))
    plural = "s" if len(repeats) > 1 else ""
    return f"{cells} cells (concurrency {conc}; {len(repeats)} repeat{plural})"


OFFICIAL_FOOTNOTE = (
    "Official AL (SPEED-Bench, NVIDIA specdec_bench's definition, the one model cards "
    "publish): per question Σ tokens / Σ streamed chunks over all its turns (prefill chunk "
    "counted, a final EOS removed); per domain the mean over questions; Overall the mean over "
    "all questions."
)


def _official_value(row: Mapping[Any, Any] | None) -> str:
    if row is None:
        return "n/a"
    value = float(row[OFFICIAL_ACCEPTANCE_LENGTH])
    if not math.isfinite(value):
        return "n/a"
    return ("≈" if row[OFFICIAL_IS_ESTIMATE] else "") + W.fixed(value, 2)


def _official_notes(official: pd.DataFrame, present: Sequence[str]) -> list[str]:
    notes = [OFFICIAL_FOOTNOTE]
    if not len(official):
        notes.append(
            "Official AL n/a: no cell has streamed chunk counts (summary.json without "
            "official_acceptance and no readable requests.jsonl)."
        )
        return notes
    overall = official[official[CATEGORY] == D.OVERALL]
    for row in overall.to_dict(orient="records"):
        if row[LABEL] not in present:
            continue
        if not row[N_CELLS]:
            notes.append(
                f"{row[LABEL]} official AL n/a: {row[OFFICIAL_NOTE] or 'no chunk counts'}."
            )
            continue
        scope = _scope(row[D.CONCURRENCIES], row[D.REPEATS], int(row[N_CELLS]))
        line = (
            f"{row[LABEL]} official: mean over {int(row[NUM_QUESTIONS])} (cell, question) "
            f"pairs of {scope}."
        )
        if row[OFFICIAL_IS_ESTIMATE]:
            line += (
                f" ≈ estimate: {int(row[MERGED_CHUNKS])} merged chunks seen (steps the server "
                "streamed as one chunk count once, which raises the figure)."
            )
        if row[OFFICIAL_NOTE]:
            line += f" ({row[OFFICIAL_NOTE]})."
        if "none" in str(row.get(COALESCING_CHECK) or ""):
            line += (
                " Merged chunks could not be checked in some cells (no per-request metrics, "
                "so K and the step counts are unknown)."
            )
        share = row.get(DRAFTED_STEP_SHARE)
        if share is not None and math.isfinite(float(share)) and float(share) < 0.999:
            line += (
                f" Steps that carried drafts: {float(share):.1%} (the others are 1-token "
                "steps the official AL counts and vLLM's counters skip)."
            )
        notes.append(line)
    return notes


def al_by_domain(
    frame: pd.DataFrame,
    categories: pd.DataFrame,
    group: str,
    labels: Sequence[str],
    definition: str = "official",
) -> Table:
    """The categories by descending AL (of the first label), then **Overall**.

    `definition` ("official" or "step_weighted") picks the AL printed first and sorted by;
    the other definition is printed beside it, each column labelled with its definition.
    """
    data = D.domain_data(frame, categories, group, labels)
    if not len(data) or not (data[CATEGORY] != D.OVERALL).any():
        raise TableUnavailable(f"AL by domain: no per-category acceptance for {group}")
    official = D.official_domain_data(frame, categories, group, labels)
    present = [label for label in labels if label in set(data[LABEL])]
    value = data.set_index([LABEL, CATEGORY])[ACCEPTANCE_LENGTH]
    official_by = (
        {(str(r[LABEL]), str(r[CATEGORY])): r for r in official.to_dict(orient="records")}
        if len(official)
        else {}
    )

    def official_float(label: str, category: str) -> float:
        row = official_by.get((label, category))
        return float(row[OFFICIAL_ACCEPTANCE_LENGTH]) if row else math.nan

    primary = "official" if definition == "official" else "step_weighted"
    names = sorted(set(data[CATEGORY]) - {D.OVERALL})
    first = present[0]

    def sort_key(category: str) -> float:
        v = (
            official_float(first, category)
            if primary == "official"
            else value.get((first, category))
        )
        return -v if v is not None and math.isfinite(v) else math.inf

    names.sort(key=sort_key)

    # Without per-request metrics a category has only the tokens-per-chunk estimate: it is
    # not step-weighted, so that column says n/a rather than print it under that name.
    definitions = data.set_index([LABEL, CATEGORY])[ACCEPTANCE_DEFINITION]
    estimated = {key for key, kind in definitions.items() if kind == "mean_over_requests"}

    def cells(label: str, category: str) -> tuple[str, str]:
        official_text = _official_value(official_by.get((label, category)))
        step_text = W.fixed(value.get((label, category), math.nan), 2)
        if (label, category) in estimated:
            step_text = "n/a"
        return (official_text, step_text) if primary == "official" else (step_text, official_text)

    rows = [
        (category_name(c), *(text for label in present for text in cells(label, c))) for c in names
    ]
    rows.append(("Overall", *(text for lb in present for text in cells(lb, D.OVERALL))))
    order = (
        ("official", "step_weighted") if primary == "official" else ("step_weighted", "official")
    )
    columns: list[str] = []
    for label in present:
        for shown in order:
            name = f"AL ({W.AL_NAMES[shown]})"
            columns.append(name if len(labels) == 1 else f"{label} {name}")
    notes = _domain_notes(data, official, present, estimated)
    merged, shown = _domain_figure_data(data, official_float, primary)
    merged[AL_DEFINITION] = shown
    return Table(
        name="al_by_domain" + view_suffix(group, frame, GROUP),
        title=f"Acceptance length by domain ({W.dataset_phrase(group, _split(frame, group))})",
        columns=("Domain", *columns),
        rows=tuple(rows),
        data=merged,
        bold_rows=frozenset({len(rows) - 1}),
        footnotes=tuple(notes),
    )


def _domain_notes(
    data: pd.DataFrame, official: pd.DataFrame, present: Sequence[str], estimated: set[object]
) -> list[str]:
    """The footnotes of `al_by_domain`: each AL's definition, source and pooling scope."""
    notes = _official_notes(official, present)
    per_category = data[data[CATEGORY] != D.OVERALL]
    if estimated:
        notes.append(
            "Per-domain step-weighted AL n/a where the server sent no per-request metrics "
            "(start vLLM with --per-request-spec-decode-metrics summary or detailed); "
            "summary.json keeps a tokens-per-chunk estimate there (not the official AL)."
        )
    per_category = per_category[per_category[ACCEPTANCE_DEFINITION] != "mean_over_requests"]
    for (source, kind_definition), kind in per_category.groupby(
        [ACCEPTANCE_SOURCE, ACCEPTANCE_DEFINITION]
    ):
        concurrencies = sorted({c for cs in kind[D.CONCURRENCIES] for c in cs})
        repeats = sorted({r for rs in kind[D.REPEATS] for r in rs})
        cells_n = int(kind[N_CELLS].max())
        notes.append(
            f"Per-domain {_DEFINITIONS.get(str(kind_definition), kind_definition)}, from "
            f"{_SOURCES.get(str(source), source)}, pooled over "
            f"{_scope(concurrencies, repeats, cells_n)}."
        )
    overall = data[data[CATEGORY] == D.OVERALL]
    if len(overall):
        concurrencies = sorted({c for cs in overall[D.CONCURRENCIES] for c in cs})
        repeats = sorted({r for rs in overall[D.REPEATS] for r in rs})
        notes.append(
            "Overall step-weighted: over all verification steps, 1 + Σaccepted / Σdrafts from "
            "the server's spec-decode counters, counts pooled over "
            f"{_scope(concurrencies, repeats, int(overall[N_CELLS].max()))} "
            "(not an average of ALs; steps without drafts are not counted)."
        )
    return notes


def _domain_figure_data(
    data: pd.DataFrame, official_float: Callable[[str, str], float], primary: str
) -> tuple[pd.DataFrame, str]:
    """`data` with both AL definitions as columns, and `acceptance_length` set to the one
    the figure plots (official when every row has it): one definition for every bar."""
    merged = data.copy()
    merged[STEP_WEIGHTED_ACCEPTANCE_LENGTH] = merged[ACCEPTANCE_LENGTH]
    merged[OFFICIAL_ACCEPTANCE_LENGTH] = [
        official_float(str(r[LABEL]), str(r[CATEGORY])) for r in merged.to_dict(orient="records")
    ]
    if primary == "official" and merged[OFFICIAL_ACCEPTANCE_LENGTH].notna().all():
        merged[ACCEPTANCE_LENGTH] = merged[OFFICIAL_ACCEPTANCE_LENGTH]
        return merged, "official"
    return merged, "step_weighted"


def al_by_context(
    frame: pd.DataFrame, labels: Sequence[str], definition: str = "official"
) -> Table:
    """AL per throughput split (1K … 32K) that was run, both definitions side by side."""
    data = D.context_data(frame, labels)
    if not len(data):
        raise TableUnavailable("AL by context length: no throughput split (throughput_Nk) was run")
    present = [label for label in labels if label in set(data[LABEL])]
    indexed = data.set_index([LABEL, CONTEXT_K])
    contexts = sorted({int(k) for k in data[CONTEXT_K]})
    measured = D.context_input_data(frame, labels).set_index(CONTEXT_K)[D.MEAN_INPUT_TOKENS]
    has_official = OFFICIAL_ACCEPTANCE_LENGTH in data
    records = {(str(r[LABEL]), int(r[CONTEXT_K])): r for r in data.to_dict(orient="records")}

    def official_text(label: str, k: int) -> str:
        return _official_value(records.get((label, k))) if has_official else "n/a"

    def cells(label: str, k: int) -> tuple[str, str]:
        step = W.fixed(indexed[ACCEPTANCE_LENGTH].get((label, k), math.nan), 2)
        official = official_text(label, k)
        return (official, step) if definition == "official" else (step, official)

    order = ("official", "step_weighted")
    if definition != "official":
        order = order[::-1]
    columns = [
        f"AL ({W.AL_NAMES[shown]})" if len(labels) == 1 else f"{label} AL ({W.AL_NAMES[shown]})"
        for label in present
        for shown in order
    ]
    rows = tuple(
        (
            W.context_name(k),
            W.number(measured.get(k, math.nan), 0),
            *(text for lb in present for text in cells(lb, k)),
        )
        for k in contexts
    )
    out = data.copy()
    out[STEP_WEIGHTED_ACCEPTANCE_LENGTH] = out[ACCEPTANCE_LENGTH]
    shown = "step_weighted"
    if definition == "official" and has_official and out[OFFICIAL_ACCEPTANCE_LENGTH].notna().all():
        out[ACCEPTANCE_LENGTH] = out[OFFICIAL_ACCEPTANCE_LENGTH]
        shown = "official"
    out[AL_DEFINITION] = shown
    return Table(
        name="al_by_context",
        title="Acceptance length by context length (SPEED-Bench throughput splits)",
        columns=("Context length", "Mean input tokens", *columns),
        rows=rows,
        data=out,
        footnotes=(
            OFFICIAL_FOOTNOTE.replace("per domain the mean over questions; Overall the", "the")
            + " Mean over every question of every cell of the split (≈: merged chunks seen).",
            "Step-weighted from the server's spec-decode counters (1 + Σaccepted / Σdrafts), "
            "counts pooled over every concurrency and repeat of each split. Context lengths "
            "are thousands of o200k tokens per prompt.",
            "Mean input tokens: measured, Σ prompt tokens the server reported (its tokenizer "
            "and chat template) / successful requests, over the same cells.",
        ),
    )


_WORDINGS: dict[Wording, Callable[[float, str], str]] = {
    "rate": W.rate,
    "seconds": lambda value, _: W.seconds_from_ms(value),
    "milliseconds": lambda value, _: W.milliseconds(value),
    "significant": W.significant,
}
_CHANGES: dict[ChangeWording, Callable[[float, float], str]] = {
    "ratio": W.throughput_change,
    "latency": W.latency_change,
    "percent_latency": W.percent_latency_change,
    "percent_energy": W.percent_energy_change,
}


#: Interval kinds a serving cell shows as `value ± half-width`; a one-launch interval (no
#: between-launch variance in it) stays in a footnote, so the card's cells keep their shape.
_SHOWN_KINDS = ("launches", "calibrated")


def _shown_value(
    shown: Callable[[float, str], str], row: Mapping[Any, Any], side: str, unit: str
) -> str:
    """A side's value, with `± half-width` when its interval spans launches (or is
    calibrated by an earlier campaign's)."""
    text = shown(row[side], unit)
    half = row.get(side + D.SUFFIX_CI_HALF)
    if row.get(side + D.SUFFIX_CI_KIND) in _SHOWN_KINDS and _finite(half):
        return W.with_half_width(text, shown(half, unit))
    return text


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _with_ratio_range(change: str, row: Mapping[Any, Any]) -> str:
    """A ratio's Change with its 95% range, when both sides' intervals span launches."""
    low, high = row.get(D.RATIO + D.SUFFIX_CI_LOW), row.get(D.RATIO + D.SUFFIX_CI_HIGH)
    if row.get(D.RATIO + D.SUFFIX_CI_KIND) in _SHOWN_KINDS and _finite(low) and _finite(high):
        return f"{change} {W.ratio_range(low, high)}"
    return change


def _serving_row(figure: Figure, row: Mapping[Any, Any]) -> tuple[str, str, str, str]:
    """Label, speculative, baseline and Change of one figure, worded as declared."""
    assert figure.table is not None, f"{figure.name}: a serving row without a table format"
    shown = _WORDINGS[figure.table.wording]
    unit = figure.table.shown_unit
    spec, base = row[D.SPECULATIVE], row[D.BASELINE]
    change = _CHANGES[figure.table.change](spec, base)
    if figure.table.change == "ratio":
        change = _with_ratio_range(change, row)
    return (
        figure.table.label,
        _shown_value(shown, row, D.SPECULATIVE, unit),
        _shown_value(shown, row, D.BASELINE, unit),
        change,
    )


def _launches(tok: Mapping[Any, Any], side: str) -> int:
    """Launches behind one side's value (1 when the data predates launches)."""
    n = tok.get(side + D.SUFFIX_LAUNCHES)
    return int(n) if n is not None and math.isfinite(float(n)) else 1


def _interval_note(tok: Mapping[Any, Any], comparison: Comparison, per_gpu: bool) -> str | None:
    """What the ± and the Change's range are, or the one-launch interval and why it is
    not shown in the cells."""
    kinds = {tok.get(side + D.SUFFIX_CI_KIND) for side in (D.SPECULATIVE, D.BASELINE)}
    launches = {tok.get(side + D.SUFFIX_LAUNCHES) for side in (D.SPECULATIVE, D.BASELINE)}
    if kinds <= {None}:
        return None
    if kinds <= set(_SHOWN_KINDS):
        counts = "/".join(str(n) for n in sorted(int(n) for n in launches if n is not None))
        what = (
            f"95% interval over {counts} launches (Student t over launch values)"
            if kinds == {"launches"}
            else f"95% interval ({', '.join(KIND_WORDS[k] for k in sorted(str(k) for k in kinds))})"
        )
        return (
            f"± {what}; a ratio's range in Change: its 95% interval (delta method, "
            "stats/launches.py)."
        )
    unit = "tok/s/GPU" if per_gpu else "tok/s per server"
    sides = ((D.SPECULATIVE, comparison.speculative), (D.BASELINE, comparison.baseline))
    halves = [
        f"{label} ±{half:.1f}"
        for side, label in sides
        if _finite(half := tok.get(side + D.SUFFIX_CI_HALF))
    ]
    within = f"; within-launch 95% interval of {unit}: {', '.join(halves)}" if halves else ""
    return f"{KIND_WORDS['one-launch'].capitalize()}{within}."


def serving(
    frame: pd.DataFrame,
    comparison: Comparison,
    view: str,
    concurrency: int,
    calibration: Calibration | None = None,
) -> Table:
    """Serving results at one concurrency: speculative vs baseline, with the card's Change.

    A value over two or more launches (or one launch calibrated by `--variance-from`) shows
    `± half-width` and the throughput's Change its ratio's interval; a one-launch interval
    goes to a footnote that says so.
    """
    data = D.serving_data(frame, comparison, view, concurrency, calibration)
    fewest = D.under_loaded(frame, [comparison.speculative, comparison.baseline], view).get(
        concurrency
    )
    data = data.assign(
        **{
            CONCURRENCY: concurrency,
            D.UNDER_LOADED_CONVERSATIONS: float("nan") if fewest is None else fewest,
        }
    )
    by_metric = data.set_index(D.METRIC).to_dict(orient="index")
    per_gpu = OUTPUT_TOK_S_PER_GPU in by_metric
    tok = by_metric[OUTPUT_TOK_S_PER_GPU if per_gpu else OUTPUT_TOK_S]
    shown = [
        f
        for f in serving_rows(per_gpu)
        if not f.only_where_measured
        or any(_finite(by_metric[f.name][side]) for side in (D.SPECULATIVE, D.BASELINE))
    ]
    rows = tuple(_serving_row(f, by_metric[f.name]) for f in shown)
    sides = ((D.SPECULATIVE, comparison.speculative, int(tok[D.N_SPECULATIVE])),
             (D.BASELINE, comparison.baseline, int(tok[D.N_BASELINE])))  # fmt: skip
    launches = {side: _launches(tok, side) for side, _, _ in sides}
    several = max(launches.values()) > 1
    counts = ", ".join(
        f"{label}: {n}" + (f" on {launches[side]} launches" if several else "")
        for side, label, n in sides
    )
    notes = [
        f"Means over {'cells' if several else 'repeats'} ({counts}); Change uses unrounded values."
    ]
    interval_note = _interval_note(tok, comparison, per_gpu)
    if interval_note:
        notes.append(interval_note)
    if not per_gpu:
        notes.append(PER_SERVER_NOTE)
    if any(f.only_where_measured for f in shown):
        notes.append(f"Energy per output token (GPU board): {ENERGY_NOTE}")
    what = f"throughput{'/GPU' if per_gpu else ' per server'}"
    for side, label, n in sides:
        if n >= 2 and launches[side] > 1:  # its interval is the launch-level one above
            notes.append(
                f"{label} {what} over its {n} cells: {tok[side + '_min']:.1f}–"
                f"{tok[side + '_max']:.1f} tok/s."
            )
        elif n >= 2:
            notes.append(
                f"{label} {what} over repeats: {tok[side + '_min']:.1f}–"
                f"{tok[side + '_max']:.1f} tok/s (95% CI ±{tok[side + '_ci95']:.1f})."
            )
    name = W.dataset_name(view, _split(frame, view))
    if fewest is not None:
        notes.insert(0, W.under_loaded_note(concurrency, fewest))
    return Table(
        name=f"serving_c{concurrency}_{slug(comparison.speculative)}"
        f"_vs_{slug(comparison.baseline)}{view_suffix(view, frame, VIEW)}",
        title=f"Serving results at concurrency {W.marked(concurrency, fewest)}, {name}"
        + (f" (under-loaded: {fewest} conversations)" if fewest is not None else ""),
        columns=("Metric", comparison.speculative, comparison.baseline, "Change"),
        rows=rows,
        data=data,
        footnotes=tuple(notes),
    )


def _sweep_row(row: Mapping[Any, Any]) -> tuple[str, str, str, str]:
    """One concurrency: both sides' throughput (± over launches) and the speedup, with its
    95% range when both sides' intervals span launches."""

    def shown(value: float, _: str) -> str:
        return W.number(value, 1)

    fewest = row.get(D.UNDER_LOADED_CONVERSATIONS)
    return (
        W.marked(int(row[CONCURRENCY]), int(fewest) if _finite(fewest) else None),
        _shown_value(shown, row, D.SPECULATIVE, ""),
        _shown_value(shown, row, D.BASELINE, ""),
        _with_ratio_range(W.throughput_change(row[D.SPECULATIVE], row[D.BASELINE]), row),
    )


def concurrency_sweep(
    frame: pd.DataFrame,
    comparison: Comparison,
    view: str,
    calibration: Calibration | None = None,
) -> Table:
    """tok/s/GPU of both configs and the speedup at every concurrency (its data also holds
    each point's launch-level interval: the figure's error bars and hover)."""
    data = D.sweep_data(frame, comparison, view, calibration)
    if len(data) < 1:
        raise TableUnavailable(f"concurrency sweep: no mixed cells of {view}")
    records = data.to_dict(orient="records")
    rows = tuple(_sweep_row(r) for r in records)
    name = W.dataset_name(view, _split(frame, view))
    per_gpu = not len(data) or data[D.THROUGHPUT_METRIC].iloc[0] == OUTPUT_TOK_S_PER_GPU
    unit = "tok/s/GPU" if per_gpu else "tok/s per server"
    sides = (D.SPECULATIVE, D.BASELINE)
    several = any(_launches(r, side) > 1 for r in records for side in sides)
    notes = [f"Means over {'cells' if several else 'repeats'}; speedups from unrounded values."]
    shown = [r for r in records if {r.get(s + D.SUFFIX_CI_KIND) for s in sides} <= {*_SHOWN_KINDS}]
    interval_note = _interval_note(shown[0], comparison, per_gpu) if shown else None
    if interval_note:  # a one-launch point's own note stays in the serving table at its c
        notes.append(interval_note.replace("in Change", "in Speedup"))
    if not per_gpu:
        notes.append(PER_SERVER_NOTE)
    notes += [
        W.under_loaded_note(int(r[CONCURRENCY]), int(r[D.UNDER_LOADED_CONVERSATIONS]))
        for r in records
        if _finite(r.get(D.UNDER_LOADED_CONVERSATIONS))
    ]
    return Table(
        name=f"concurrency_sweep_{slug(comparison.speculative)}"
        f"_vs_{slug(comparison.baseline)}{view_suffix(view, frame, VIEW)}",
        title=f"Output throughput {'per GPU' if per_gpu else 'per server'} vs concurrency, {name}",
        columns=(
            "Concurrency",
            f"{comparison.speculative} {unit}",
            f"{comparison.baseline} {unit}",
            "Speedup",
        ),
        rows=rows,
        data=data,
        footnotes=tuple(notes),
    )


def acceptance_summary(frame: pd.DataFrame, labels: Sequence[str]) -> Table:
    """Per dataset: n, mean accepted length, draft accept rate, per-position rates."""
    data = D.acceptance_summary_data(frame, labels)
    if not len(data):
        raise TableUnavailable("acceptance summary: no cell has spec-decode counters")
    order = {d: i for i, d in enumerate(ordered_datasets(frame, VIEW))}
    data = data.sort_values(
        [LABEL, VIEW], key=lambda s: s.map(order) if s.name == VIEW else s
    ).reset_index(drop=True)
    positions = position_columns(data)
    several = len(set(data[LABEL])) > 1
    header = ("Config",) if several else ()
    pos_names = " / ".join(str(i + 1) for i in range(len(positions)))
    rows = []
    for r in data.to_dict(orient="records"):
        rates = " / ".join(W.fixed(r[p], 3) for p in positions)
        view = str(r[VIEW])
        rows.append(
            ((str(r[LABEL]),) if several else ())
            + (
                W.dataset_name(view, _split(frame, view)),
                W.fixed(r[D.NUM_PROMPTS], 0),
                W.fixed(r[ACCEPTANCE_LENGTH], 3),
                W.percent(r[DRAFT_ACCEPTANCE_RATE]),
                rates,
            )
        )
    return Table(
        name="acceptance_summary",
        title="Acceptance per dataset",
        columns=(
            *header,
            "Dataset",
            "n",
            f"Mean accepted length ({W.AL_NAMES['step_weighted']})",
            "Draft accept rate",
            f"Per-position accept rate (pos {pos_names})",
        ),
        rows=tuple(rows),
        data=data,
        footnotes=(
            "n counts prompts (questions), as the model cards do. Server spec-decode counters "
            "pooled over every cell of the dataset (all concurrencies and repeats): "
            + "; ".join(
                f"{W.dataset_name(str(r[VIEW]), _split(frame, str(r[VIEW])))}"
                + (f" ({r[LABEL]})" if several else "")
                + f": {int(r[NUM_SUCCEEDED])} turns pooled over {int(r[N_CELLS])} "
                + ("cell" if int(r[N_CELLS]) == 1 else "cells")
                for r in data.to_dict(orient="records")
            )
            + ". Mean accepted length = 1 + Σaccepted / Σdrafts (step-weighted, bonus token "
            "included; steps without drafts are not counted): the GQA card's layout and "
            "definition, not the official SPEED-Bench AL that the AL by domain table's "
            "Overall prints (the AMD card's figure).",
        ),
    )


def _split(frame: pd.DataFrame, name: str) -> str | None:
    """The SPEED-Bench split of a group or view."""
    splits = frame.loc[(frame[GROUP] == name) | (frame[VIEW] == name), SPLIT].dropna()
    return str(splits.iloc[0]) if len(splits) else None


def view_suffix(name: str, frame: pd.DataFrame, column: str) -> str:
    """File-name suffix naming the group or view when the results hold several.

    Named after the suite's workload names of its cells (sorted, joined with `+`), never its
    dataset spec: a spec may hold the dataset's local path, and a file name must be the
    same on every machine. Two groups with the same workloads (merged directories) get
    `-2`, `-3`, … in the order of their names. Bounded (`bounded_slug`) all the same.
    """
    if frame[column].nunique() == 1:
        return ""
    keys: dict[str, str] = {}
    taken: dict[str, int] = {}
    for value, rows in sorted(frame.groupby(column, sort=True), key=lambda item: str(item[0])):
        key = bounded_slug("+".join(sorted({str(w) for w in rows[WORKLOAD]})))
        taken[key] = taken.get(key, 0) + 1
        keys[str(value)] = key if taken[key] == 1 else f"{key}-{taken[key]}"
    return "_" + keys[name]


#: What every energy figure is, in the tables' footnotes.
ENERGY_NOTE = (
    "GPU board energy: Σ over each server's GPUs of its energy counter's delta over the "
    "cell's window (read beside the window's /metrics scrapes) / Δ vllm:generation_tokens_total; "
    "CPU, memory, network and cooling are not in it (docs/energy.md)."
)


def energy_per_token(
    frame: pd.DataFrame,
    comparison: Comparison,
    view: str,
    calibration: Calibration | None = None,
) -> Table:
    """GPU board energy per output token of both configs at every concurrency, the Change,
    tokens per joule, and where speculation's energy per token crosses the baseline's; a
    point without a figure shows `—` and its reason, never 0."""
    cells = E.pair_cells(frame, comparison, view)
    sources = E.measured_sources(cells)
    if not sources:
        what = f"energy per output token of {comparison.speculative} vs {comparison.baseline}"
        if ENERGY_SOURCE not in cells or cells[ENERGY_SOURCE].isna().all():
            raise TableUnavailable(f"{what}: not in these results (written before energy was)")
        details = sorted({str(d) for d in cells[ENERGY_DETAIL].dropna()})
        why = f" ({details[0]})" if len(details) == 1 else ""
        raise TableUnavailable(f"{what}: not measured, GPU telemetry off{why}")
    data = E.energy_data(frame, comparison, view, calibration)
    missing = E.missing_cells(cells)
    labels = {D.SPECULATIVE: comparison.speculative, D.BASELINE: comparison.baseline}

    def side_text(row: Mapping[Any, Any], side: str) -> str:
        if _finite(row[side]):
            return _shown_value(W.significant, row, side, "J/token")
        reasons = sorted(
            {
                m.reason
                for m in missing
                if m.label == labels[side] and m.concurrency == row[CONCURRENCY]
            }
        )
        return f"— ({', '.join(reasons)})" if reasons else "—"

    rows = tuple(
        (
            str(int(r[CONCURRENCY])),
            side_text(r, D.SPECULATIVE),
            side_text(r, D.BASELINE),
            W.percent_energy_change(r[D.SPECULATIVE], r[D.BASELINE]),
            W.number(r[E.SPECULATIVE_TOKENS_PER_JOULE], 2),
            W.number(r[E.BASELINE_TOKENS_PER_JOULE], 2),
        )
        for r in data.to_dict(orient="records")
    )
    notes = [f"{ENERGY_NOTE} Source: {', '.join(sources)}."]
    cross = E.crossover(data)
    if cross is not None:
        before, after = ("below", "above") if cross.lower_before else ("above", "below")
        notes.append(
            f"Crossover: {comparison.speculative} spends {before} the baseline's energy per "
            f"token at concurrency {cross.below} and {after} it at {cross.above}."
        )
    else:
        notes.append("No crossover: speculation stays on one side of the baseline's energy.")
    for m in missing[:8]:
        notes.append(
            f"— {m.label} at concurrency {m.concurrency} (launch {m.launch + 1}, repeat "
            f"{m.repeat + 1}): {m.reason}" + (f": {m.detail}" if m.detail else "")
        )
    if len(missing) > 8:
        notes.append(f"… and {len(missing) - 8} more cells without an energy figure.")
    name = W.dataset_name(view, _split(frame, view))
    return Table(
        name=f"energy_{slug(comparison.speculative)}_vs_{slug(comparison.baseline)}"
        f"{view_suffix(view, frame, VIEW)}",
        title=f"Energy per output token vs concurrency (GPU board energy), {name}",
        columns=(
            "Concurrency",
            f"{comparison.speculative} J/token",
            f"{comparison.baseline} J/token",
            "Change",
            f"{comparison.speculative} tok/J",
            f"{comparison.baseline} tok/J",
        ),
        rows=rows,
        data=data,
        footnotes=tuple(notes),
    )
