"""The report's tables, worded as the model cards print them.

Each builder returns a `Table` (display rows + the unrounded data) or raises
`TableUnavailable` saying which data is missing, so the report can build the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from specbench.analysis import table_data as D
from specbench.analysis import wording as W
from specbench.analysis.aggregate import N_CELLS
from specbench.analysis.markdown import Table
from specbench.common.naming import bounded_slug, slug
from specbench.data.categories import category_name
from specbench.results.columns import (
    ACCEPTANCE_DEFINITION,
    ACCEPTANCE_LENGTH,
    ACCEPTANCE_SOURCE,
    CATEGORY,
    CONCURRENCY,
    CONTEXT_K,
    DRAFT_ACCEPTANCE_RATE,
    E2E_MS_MEDIAN,
    GROUP,
    LABEL,
    NUM_SUCCEEDED,
    OUTPUT_TOK_S,
    OUTPUT_TOK_S_PER_GPU,
    SPLIT,
    TTFT_MS_MEDIAN,
    VIEW,
    position_columns,
)
from specbench.results.selection import Comparison, ordered_datasets

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
    "step_weighted": "step-weighted (1 + Σaccepted / Σsteps, pooled over requests)",
    "mean_over_requests": (
        "the mean over requests of each request's AL (specdec_bench's definition)"
    ),
}


def _scope(concurrencies: Sequence[int], repeats: Sequence[int], cells: int) -> str:
    conc = ", ".join(map(str, concurrencies))
    plural = "s" if len(repeats) > 1 else ""
    return f"{cells} cells (concurrency {conc}; {len(repeats)} repeat{plural})"


def _label_header(labels: Sequence[str], what: str) -> tuple[str, ...]:
    return (what,) if len(labels) == 1 else tuple(f"{label} {what}" for label in labels)


def al_by_domain(
    frame: pd.DataFrame, categories: pd.DataFrame, group: str, labels: Sequence[str]
) -> Table:
    """The 11 categories by descending AL (of the first label), then **Overall**."""
    data = D.domain_data(frame, categories, group, labels)
    if not len(data) or not (data[CATEGORY] != D.OVERALL).any():
        raise TableUnavailable(f"AL by domain: no per-category acceptance for {group}")
    present = [label for label in labels if label in set(data[LABEL])]
    value = data.set_index([LABEL, CATEGORY])[ACCEPTANCE_LENGTH]
    names = sorted(set(data[CATEGORY]) - {D.OVERALL})
    first = present[0]
    names.sort(key=lambda c: -value.get((first, c), -math.inf))
    rows = [
        (category_name(c), *(W.fixed(value.get((label, c), math.nan), 2) for label in present))
        for c in names
    ]
    rows.append(("Overall", *(W.fixed(value.get((lb, D.OVERALL), math.nan), 2) for lb in present)))
    notes = []
    per_category = data[data[CATEGORY] != D.OVERALL]
    for (source, definition), kind in per_category.groupby(
        [ACCEPTANCE_SOURCE, ACCEPTANCE_DEFINITION]
    ):
        concurrencies = sorted({c for cs in kind[D.CONCURRENCIES] for c in cs})
        repeats = sorted({r for rs in kind[D.REPEATS] for r in rs})
        cells = int(kind[N_CELLS].max())
        notes.append(
            f"Per-domain AL: {_DEFINITIONS.get(str(definition), definition)}, from "
            f"{_SOURCES.get(str(source), source)}, pooled over "
            f"{_scope(concurrencies, repeats, cells)}."
        )
    overall = data[data[CATEGORY] == D.OVERALL]
    if len(overall):
        concurrencies = sorted({c for cs in overall[D.CONCURRENCIES] for c in cs})
        repeats = sorted({r for rs in overall[D.REPEATS] for r in rs})
        notes.append(
            "Overall: step-weighted over all verification steps, 1 + Σaccepted / Σdrafts from "
            "the server's spec-decode counters, counts pooled over "
            f"{_scope(concurrencies, repeats, int(overall[N_CELLS].max()))} "
            "(not an average of ALs)."
        )
    return Table(
        name="al_by_domain" + _suffix(group, frame, GROUP),
        title=f"Acceptance length by domain ({W.dataset_phrase(group, _split(frame, group))})",
        columns=("Domain", *_label_header(present, "AL")),
        rows=tuple(rows),
        data=data,
        bold_rows=frozenset({len(rows) - 1}),
        footnotes=tuple(notes),
    )


def al_by_context(frame: pd.DataFrame, labels: Sequence[str]) -> Table:
    """AL per throughput split (1K … 32K) that was run."""
    data = D.context_data(frame, labels)
    if not len(data):
        raise TableUnavailable("AL by context length: no throughput split (throughput_Nk) was run")
    present = [label for label in labels if label in set(data[LABEL])]
    value = data.set_index([LABEL, CONTEXT_K])[ACCEPTANCE_LENGTH]
    contexts = sorted({int(k) for k in data[CONTEXT_K]})
    measured = D.context_input_data(frame, labels).set_index(CONTEXT_K)[D.MEAN_INPUT_TOKENS]
    rows = tuple(
        (
            W.context_name(k),
            W.number(measured.get(k, math.nan), 0),
            *(W.fixed(value.get((lb, k), math.nan), 2) for lb in present),
        )
        for k in contexts
    )
    return Table(
        name="al_by_context",
        title="Acceptance length by context length (SPEED-Bench throughput splits)",
        columns=("Context length", "Mean input tokens", *_label_header(present, "AL")),
        rows=rows,
        data=data,
        footnotes=(
            "Step-weighted from the server's spec-decode counters (1 + Σaccepted / Σdrafts), "
            "counts pooled over every concurrency and repeat of each split. Context lengths "
            "are thousands of o200k tokens per prompt.",
            "Mean input tokens: measured, Σ prompt tokens the server reported (its tokenizer "
            "and chat template) / successful requests, over the same cells.",
        ),
    )


def serving(frame: pd.DataFrame, comparison: Comparison, view: str, concurrency: int) -> Table:
    """Serving results at one concurrency: speculative vs baseline, with the card's Change."""
    data = D.serving_data(frame, comparison, view, concurrency)
    by_metric = data.set_index(D.METRIC).to_dict(orient="index")
    per_gpu = OUTPUT_TOK_S_PER_GPU in by_metric
    tok_metric = OUTPUT_TOK_S_PER_GPU if per_gpu else OUTPUT_TOK_S
    tok, e2e, ttft = (by_metric[m] for m in (tok_metric, E2E_MS_MEDIAN, TTFT_MS_MEDIAN))
    tok_name = "Output throughput/GPU" if per_gpu else "Output throughput per server"
    rows = (
        (tok_name, W.tok_s(tok[D.SPECULATIVE]), W.tok_s(tok[D.BASELINE]),
         W.throughput_change(tok[D.SPECULATIVE], tok[D.BASELINE])),
        ("Median E2E latency", W.seconds_from_ms(e2e[D.SPECULATIVE]),
         W.seconds_from_ms(e2e[D.BASELINE]), W.latency_change(e2e[D.SPECULATIVE], e2e[D.BASELINE])),
        ("Median TTFT", W.milliseconds(ttft[D.SPECULATIVE]), W.milliseconds(ttft[D.BASELINE]),
         W.percent_latency_change(ttft[D.SPECULATIVE], ttft[D.BASELINE])),
    )  # fmt: skip
    n_spec, n_base = int(tok[D.N_SPECULATIVE]), int(tok[D.N_BASELINE])
    notes = [
        f"Means over repeats ({comparison.speculative}: {n_spec}, {comparison.baseline}: "
        f"{n_base}); Change uses unrounded values."
    ]
    if not per_gpu:
        notes.append(PER_SERVER_NOTE)
    for side, label, n in ((D.SPECULATIVE, comparison.speculative, n_spec),
                           (D.BASELINE, comparison.baseline, n_base)):  # fmt: skip
        if n >= 2:
            notes.append(
                f"{label} throughput{'/GPU' if per_gpu else ' per server'} over repeats: "
                f"{tok[side + '_min']:.1f}–"
                f"{tok[side + '_max']:.1f} tok/s (95% CI ±{tok[side + '_ci95']:.1f})."
            )
    name = W.dataset_name(view, _split(frame, view))
    return Table(
        name=f"serving_c{concurrency}_{slug(comparison.speculative)}"
        f"_vs_{slug(comparison.baseline)}{_suffix(view, frame, VIEW)}",
        title=f"Serving results at concurrency {concurrency}, {name}",
        columns=("Metric", comparison.speculative, comparison.baseline, "Change"),
        rows=rows,
        data=data,
        footnotes=tuple(notes),
    )


def concurrency_sweep(frame: pd.DataFrame, comparison: Comparison, view: str) -> Table:
    """tok/s/GPU of both configs and the speedup at every concurrency."""
    data = D.sweep_data(frame, comparison, view)
    if len(data) < 1:
        raise TableUnavailable(f"concurrency sweep: no mixed cells of {view}")
    rows = tuple(
        (
            str(int(r[CONCURRENCY])),
            W.number(r[D.SPECULATIVE], 1),
            W.number(r[D.BASELINE], 1),
            W.throughput_change(r[D.SPECULATIVE], r[D.BASELINE]),
        )
        for r in data.to_dict(orient="records")
    )
    name = W.dataset_name(view, _split(frame, view))
    per_gpu = not len(data) or data[D.THROUGHPUT_METRIC].iloc[0] == OUTPUT_TOK_S_PER_GPU
    unit = "tok/s/GPU" if per_gpu else "tok/s per server"
    notes = ["Means over repeats; speedups from unrounded values."]
    if not per_gpu:
        notes.append(PER_SERVER_NOTE)
    return Table(
        name=f"concurrency_sweep_{slug(comparison.speculative)}"
        f"_vs_{slug(comparison.baseline)}{_suffix(view, frame, VIEW)}",
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
                str(int(r[NUM_SUCCEEDED])),
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
            "Mean accepted length",
            "Draft accept rate",
            f"Per-position accept rate (pos {pos_names})",
        ),
        rows=tuple(rows),
        data=data,
        footnotes=(
            "Server spec-decode counters pooled over every cell of the dataset (all "
            "concurrencies and repeats); n counts their successful requests. Mean accepted "
            "length = 1 + Σaccepted / Σdrafts (bonus token included).",
        ),
    )


def _split(frame: pd.DataFrame, name: str) -> str | None:
    """The SPEED-Bench split of a group or view."""
    splits = frame.loc[(frame[GROUP] == name) | (frame[VIEW] == name), SPLIT].dropna()
    return str(splits.iloc[0]) if len(splits) else None


def _suffix(name: str, frame: pd.DataFrame, column: str) -> str:
    """File-name suffix naming the group or view when the results hold several.

    Bounded (`bounded_slug`): a view named by a deep dataset path would make the file name
    longer than the file system allows.
    """
    return "" if frame[column].nunique() == 1 else "_" + bounded_slug(name)
