"""The numbers behind each report table, as tidy frames (unrounded; figures read them too).

Acceptance is always pooled from counts over the cells it covers (see `aggregate`);
serving metrics are means over repeats at one concurrency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from specbench.analysis.aggregate import (
    N_CELLS,
    N_REPEATS,
    SUFFIX_MAX,
    SUFFIX_MIN,
    aggregate_repeats,
    ci_column,
    pool_acceptance,
    pool_category_acceptance,
)
from specbench.analysis.intervals import Calibration, figure_interval
from specbench.metrics.declarations import serving_rows
from specbench.metrics.speedup import compare_per_gpu
from specbench.results.columns import (
    ACCEPTANCE_DEFINITION,
    ACCEPTANCE_LENGTH,
    ACCEPTANCE_SOURCE,
    CATEGORY,
    COALESCING_CHECK,
    CONCURRENCY,
    CONTEXT_K,
    DATASET,
    DRAFTED_STEP_SHARE,
    FULL_SELECTION,
    GROUP,
    INPUT_TOKENS,
    LABEL,
    MERGED_CHUNKS,
    NUM_CONVERSATIONS,
    NUM_DRAFTS,
    NUM_QUESTIONS,
    NUM_REQUESTS,
    NUM_SUCCEEDED,
    OFFICIAL_ACCEPTANCE_LENGTH,
    OFFICIAL_IS_ESTIMATE,
    OFFICIAL_NOTE,
    OFFICIAL_TRIMMED_ACCEPTANCE_LENGTH,
    OUTPUT_TOK_S,
    OUTPUT_TOK_S_PER_GPU,
    OUTPUT_TOKENS_PER_JOULE,
    REPEAT,
    SPLIT,
    VIEW,
)
from specbench.results.selection import Comparison, mixed_cells
from specbench.stats.launches import Interval, ratio_interval

if TYPE_CHECKING:
    import pandas as pd

OVERALL = "overall"
#: Columns of `serving_data` and `sweep_data`.
SPECULATIVE = "speculative"
BASELINE = "baseline"
RATIO = "ratio"
METRIC = "metric"
N_SPECULATIVE = "n_speculative"
N_BASELINE = "n_baseline"
#: Prompts (questions) of a view: the n of the acceptance summary.
NUM_PROMPTS = "num_prompts"
CONCURRENCIES = "concurrencies"
REPEATS = "repeats"
#: Column of `sweep_data`: the throughput compared, output_tok_s_per_gpu or output_tok_s.
THROUGHPUT_METRIC = "throughput_metric"
#: Suffixes of a side's launch-level interval (`analysis.intervals`) in the serving and
#: sweep data: `speculative_ci_half`, `baseline_ci_kind`, …; the ratio's `ratio_ci_low`, ….
SUFFIX_CI_HALF = "_ci_half"
SUFFIX_CI_KIND = "_ci_kind"
SUFFIX_LAUNCHES = "_launches"
SUFFIX_CI_LOW = "_ci_low"
SUFFIX_CI_HIGH = "_ci_high"
#: Columns of `sweep_data` (and of the energy table's data): each side's mean output tokens
#: per joule of GPU board energy, NaN where not measured.
SPECULATIVE_TOKENS_PER_JOULE = "speculative_tokens_per_joule"
BASELINE_TOKENS_PER_JOULE = "baseline_tokens_per_joule"
#: Column of `context_input_data`: Σ input tokens / Σ successful requests.
MEAN_INPUT_TOKENS = "mean_input_tokens"


def throughput_column(frame: pd.DataFrame, labels: Sequence[str]) -> str:
    """`output_tok_s_per_gpu` when every cell of `labels` knows its GPU count, else
    `output_tok_s` (per server): `metrics.speedup.compare_per_gpu`."""
    cells = frame[frame[LABEL].isin(labels)]
    known = cells[OUTPUT_TOK_S_PER_GPU].notna() if OUTPUT_TOK_S_PER_GPU in cells.columns else None
    if known is not None and compare_per_gpu(*known):
        return OUTPUT_TOK_S_PER_GPU
    return OUTPUT_TOK_S


def domain_data(
    frame: pd.DataFrame, categories: pd.DataFrame, group: str, labels: Sequence[str]
) -> pd.DataFrame:
    """Per-category AL of `labels` on one workload group, plus one `overall` row per label.

    Categories come from `per_category` of every cell of the group, whatever its selection
    (pooled per their definition); step-weighted numbers win when a category has both
    kinds. Overall is 1 + Σaccepted / Σdrafts of the server counters of the group's
    whole-dataset cells (of its single-category cells when no whole-dataset run has
    counters); a subset of categories never moves it. Columns: label, category,
    acceptance_length, acceptance_source, acceptance_definition, n_cells, num_requests,
    concurrencies (sorted list), repeats (distinct repeat indices).
    """
    import pandas as pd

    rows = categories[
        (categories[GROUP] == group)
        & categories[LABEL].isin(labels)
        & categories[ACCEPTANCE_LENGTH].notna()
    ]
    out: list[dict[str, object]] = []
    if len(rows):
        pooled = pool_category_acceptance(rows, [LABEL, CATEGORY])
        pooled["_rank"] = (pooled[ACCEPTANCE_DEFINITION] != "step_weighted").astype(int)
        pooled = pooled.sort_values("_rank").drop_duplicates([LABEL, CATEGORY])
        for pooled_record in pooled.drop(columns="_rank").to_dict(orient="records"):
            record = {str(k): v for k, v in pooled_record.items()}
            scope = rows[(rows[LABEL] == record[LABEL]) & (rows[CATEGORY] == record[CATEGORY])]
            record[CONCURRENCIES] = sorted({int(c) for c in scope[CONCURRENCY]})
            record[REPEATS] = sorted({int(r) for r in scope[REPEAT]})
            out.append(record)
    in_scope = frame[(frame[GROUP] == group) & frame[LABEL].isin(labels)]
    whole = in_scope[in_scope[FULL_SELECTION].astype(bool)]
    # Per-category runs only (no whole-dataset cell): all their steps together are the overall.
    cells = whole if whole[NUM_DRAFTS].notna().any() else in_scope[in_scope[CATEGORY].notna()]
    overall = pool_acceptance(cells, [LABEL])
    for total in overall.to_dict(orient="records"):
        scope = cells[(cells[LABEL] == total[LABEL]) & cells[NUM_DRAFTS].notna()]
        out.append(
            {
                LABEL: total[LABEL],
                CATEGORY: OVERALL,
                ACCEPTANCE_LENGTH: total[ACCEPTANCE_LENGTH],
                ACCEPTANCE_SOURCE: "server_counters",
                ACCEPTANCE_DEFINITION: "step_weighted",
                N_CELLS: total[N_CELLS],
                NUM_REQUESTS: int(scope[NUM_SUCCEEDED].sum()),
                NUM_DRAFTS: total[NUM_DRAFTS],
                CONCURRENCIES: sorted({int(c) for c in scope[CONCURRENCY]}),
                REPEATS: sorted({int(r) for r in scope[REPEAT]}),
            }
        )
    return pd.DataFrame(out)


def _question_mean(rows: pd.DataFrame) -> float:
    """Σ(official AL × questions) / Σ questions: the mean over every (cell, question)."""
    used = rows[rows[OFFICIAL_ACCEPTANCE_LENGTH].notna() & rows[NUM_QUESTIONS].notna()]
    questions = used[NUM_QUESTIONS].astype(float)
    total = float(questions.sum())
    if total <= 0:
        return math.nan
    return float((used[OFFICIAL_ACCEPTANCE_LENGTH].astype(float) * questions).sum() / total)


def _official_row(rows: pd.DataFrame, label: str, category: str) -> dict[str, object]:
    used = rows[rows[OFFICIAL_ACCEPTANCE_LENGTH].notna()]
    skip = {"summary", "not speculating"}
    notes = sorted({str(n) for n in rows[OFFICIAL_NOTE].dropna() if str(n) not in skip})
    return {
        LABEL: label,
        CATEGORY: category,
        OFFICIAL_ACCEPTANCE_LENGTH: _question_mean(rows),
        OFFICIAL_TRIMMED_ACCEPTANCE_LENGTH: _question_mean(
            used.assign(**{OFFICIAL_ACCEPTANCE_LENGTH: used[OFFICIAL_TRIMMED_ACCEPTANCE_LENGTH]})
        ),
        NUM_QUESTIONS: int(used[NUM_QUESTIONS].astype(float).sum()) if len(used) else 0,
        N_CELLS: len(used),
        OFFICIAL_IS_ESTIMATE: bool(used[OFFICIAL_IS_ESTIMATE].fillna(False).astype(bool).any()),
        MERGED_CHUNKS: int(used[MERGED_CHUNKS].fillna(0).astype(float).sum()),
        OFFICIAL_NOTE: "; ".join(notes) if notes else None,
        COALESCING_CHECK: ", ".join(sorted({str(c) for c in used[COALESCING_CHECK].dropna()}))
        if COALESCING_CHECK in used
        else "",
        DRAFTED_STEP_SHARE: _share(used),
        CONCURRENCIES: sorted({int(c) for c in used[CONCURRENCY]}),
        REPEATS: sorted({int(r) for r in used[REPEAT]}),
    }


def _share(cells: pd.DataFrame) -> float:
    """Mean drafted-step share of the cells (NaN when none has it)."""
    if DRAFTED_STEP_SHARE not in cells:
        return math.nan
    shares = cells[DRAFTED_STEP_SHARE].dropna().astype(float)
    return float(shares.mean()) if len(shares) else math.nan


def official_domain_data(
    frame: pd.DataFrame, categories: pd.DataFrame, group: str, labels: Sequence[str]
) -> pd.DataFrame:
    """The official SPEED-Bench AL per category of `labels` on one group, plus `overall`.

    Per category: the mean over questions of each question's Σ tokens / Σ chunks (all its
    turns), over every cell of the group that ran the category (each cell's category AL
    weighted by its questions: the mean over every (cell, question)). Overall: the same
    mean over every question of the group's whole-dataset cells (of its single-category
    cells when no whole-dataset cell has the figure), not over categories. Columns: label,
    category, official_acceptance_length, official_trimmed_acceptance_length,
    num_questions, n_cells, official_is_estimate, merged_chunks (Σ over the cells, counted
    once per cell), official_note (why a figure is n/a), concurrencies, repeats.
    """
    import pandas as pd

    out: list[dict[str, object]] = []
    rows = categories[(categories[GROUP] == group) & categories[LABEL].isin(labels)]
    if OFFICIAL_ACCEPTANCE_LENGTH not in rows:
        return pd.DataFrame(out)
    rows = rows[rows[ACCEPTANCE_LENGTH].notna() | rows[OFFICIAL_ACCEPTANCE_LENGTH].notna()]
    for (label, category), scope in rows.groupby([LABEL, CATEGORY], sort=True):
        row = _official_row(scope, str(label), str(category))
        row[MERGED_CHUNKS] = math.nan  # chunks are counted per cell, in the overall row
        out.append(row)
    in_scope = frame[(frame[GROUP] == group) & frame[LABEL].isin(labels)]
    in_scope = in_scope[in_scope[NUM_DRAFTS].notna() | in_scope[OFFICIAL_ACCEPTANCE_LENGTH].notna()]
    for label, cells in in_scope.groupby(LABEL, sort=True):
        whole = cells[cells[FULL_SELECTION].astype(bool)]
        if not whole[OFFICIAL_ACCEPTANCE_LENGTH].notna().any():
            whole = cells[cells[CATEGORY].notna()]
        out.append(_official_row(whole if len(whole) else cells, str(label), OVERALL))
    return pd.DataFrame(out)


def domain_groups(categories: pd.DataFrame, labels: Sequence[str]) -> list[str]:
    """Workload groups with per-category acceptance for any of `labels`, qualitative first."""
    rows = categories[categories[LABEL].isin(labels) & categories[ACCEPTANCE_LENGTH].notna()]
    rows = rows[rows[CONTEXT_K].isna()]
    qualitative = set(rows.loc[rows[SPLIT] == "qualitative", GROUP])
    return sorted(set(rows[GROUP]), key=lambda d: (d not in qualitative, d))


def context_data(frame: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """Pooled step-weighted AL per label and context length (throughput splits only).

    With `official_acceptance_length` beside it (mean over every (cell, question) of the
    official SPEED-Bench AL) and `official_is_estimate`.

    Only cells that ran every entropy tier of their split: a one-tier workload would
    describe another prompt mix than the split's.
    """
    cells = frame[
        frame[CONTEXT_K].notna() & frame[LABEL].isin(labels) & frame[FULL_SELECTION].astype(bool)
    ]
    pooled = pool_acceptance(cells, [LABEL, CONTEXT_K])
    if len(pooled) and OFFICIAL_ACCEPTANCE_LENGTH in cells:
        pooled[OFFICIAL_ACCEPTANCE_LENGTH] = [
            _question_mean(cells[(cells[LABEL] == label) & (cells[CONTEXT_K] == k)])
            for label, k in zip(pooled[LABEL], pooled[CONTEXT_K], strict=True)
        ]
        pooled[OFFICIAL_IS_ESTIMATE] = [
            bool(
                cells.loc[(cells[LABEL] == label) & (cells[CONTEXT_K] == k), OFFICIAL_IS_ESTIMATE]
                .fillna(False)
                .astype(bool)
                .any()
            )
            for label, k in zip(pooled[LABEL], pooled[CONTEXT_K], strict=True)
        ]
    if len(pooled):
        pooled[CONTEXT_K] = pooled[CONTEXT_K].astype(int)
        pooled = pooled.sort_values([LABEL, CONTEXT_K]).reset_index(drop=True)
    return pooled


def context_input_data(frame: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """Measured mean prompt length per context split: Σ input tokens / Σ successful requests.

    Input tokens are the server's `usage.prompt_tokens` (the target's tokenizer and chat
    template), over the same cells as `context_data`; the nominal size (1K … 32K) counts
    o200k tokens, so the two differ. Columns: context_k, mean_input_tokens.
    """
    cells = frame[
        frame[CONTEXT_K].notna() & frame[LABEL].isin(labels) & frame[FULL_SELECTION].astype(bool)
    ]
    sums = cells.groupby(CONTEXT_K)[[INPUT_TOKENS, NUM_SUCCEEDED]].sum().reset_index()
    sums[MEAN_INPUT_TOKENS] = sums[INPUT_TOKENS] / sums[NUM_SUCCEEDED].where(
        sums[NUM_SUCCEEDED] > 0
    )
    sums[CONTEXT_K] = sums[CONTEXT_K].astype(int)
    return sums[[CONTEXT_K, MEAN_INPUT_TOKENS]]


def acceptance_summary_data(frame: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """Pooled acceptance per label and view (workload × selection).

    `num_prompts`: the prompts (questions) of the view, as the model cards' n (the most
    distinct questions any one cell measured; NaN when no summary recorded it);
    `num_succeeded`: successful turns summed over every pooled cell. Columns: label, view,
    dataset, split, n_cells, the summed counters, acceptance_length, draft_acceptance_rate,
    per_position_acceptance_i, num_succeeded, num_prompts.
    """
    cells = frame[frame[LABEL].isin(labels) & frame[NUM_DRAFTS].notna()]
    pooled = pool_acceptance(cells, [LABEL, VIEW])
    if len(pooled):
        sums = cells.groupby([LABEL, VIEW])[NUM_SUCCEEDED].sum().rename(NUM_SUCCEEDED)
        pooled = pooled.merge(sums.reset_index(), on=[LABEL, VIEW])
        prompts = cells[NUM_CONVERSATIONS].astype(float).where(cells[NUM_CONVERSATIONS] > 0)
        if NUM_QUESTIONS in cells:  # schema-1 cells: the official figure's question count
            prompts = prompts.fillna(cells[NUM_QUESTIONS].astype(float))
        most = prompts.groupby([cells[LABEL], cells[VIEW]]).max().rename(NUM_PROMPTS)
        pooled = pooled.merge(most.reset_index(), on=[LABEL, VIEW])
        datasets = cells.drop_duplicates(VIEW).set_index(VIEW)[DATASET]
        pooled[DATASET] = pooled[VIEW].map(datasets)
        splits = cells.dropna(subset=[SPLIT]).drop_duplicates(VIEW).set_index(VIEW)[SPLIT]
        pooled[SPLIT] = pooled[VIEW].map(splits)
    return pooled


def serving_metrics(throughput: str) -> tuple[str, ...]:
    """The serving table's figures (`metrics.declarations.serving_rows`), in row order, with
    `throughput` (`throughput_column`) as the throughput compared."""
    return tuple(f.name for f in serving_rows(per_gpu=throughput == OUTPUT_TOK_S_PER_GPU))


def label_means(frame: pd.DataFrame, label: str, view: str, metrics: Sequence[str]) -> pd.DataFrame:
    cells = mixed_cells(frame)
    cells = cells[(cells[LABEL] == label) & (cells[VIEW] == view)]
    if not len(cells):
        return cells
    aggregated = aggregate_repeats(cells, metrics=list(metrics))
    return aggregated.set_index(CONCURRENCY)


#: Column of the serving and sweep data: the fewest conversations a cell of the point
#: measured, where that is below its concurrency (an under-loaded point); else NaN.
UNDER_LOADED_CONVERSATIONS = "under_loaded_conversations"


def under_loaded(frame: pd.DataFrame, labels: Sequence[str], view: str) -> dict[int, int]:
    """Concurrency → the fewest conversations one of its cells measured, for each
    concurrency of `labels` on `view` that some cell could not fill (more slots than
    conversations: the server never held that many requests). Cells that predate the
    count (0) are left out."""
    cells = mixed_cells(frame)
    cells = cells[cells[LABEL].isin(list(labels)) & (cells[VIEW] == view)]
    if NUM_CONVERSATIONS not in cells:
        return {}
    found: dict[int, int] = {}
    for concurrency, conversations in zip(
        cells[CONCURRENCY], cells[NUM_CONVERSATIONS], strict=True
    ):
        c, n = int(concurrency), int(conversations or 0)
        if 0 < n < c:
            found[c] = min(found.get(c, n), n)
    return found


def label_intervals(
    frame: pd.DataFrame, label: str, view: str, metric: str, calibration: Calibration | None
) -> dict[int, Interval]:
    """The launch-level interval of `metric` of one label and view at each concurrency."""
    cells = mixed_cells(frame)
    cells = cells[(cells[LABEL] == label) & (cells[VIEW] == view)]
    found = {}
    for concurrency in sorted({int(c) for c in cells[CONCURRENCY]}):
        group = cells[cells[CONCURRENCY] == concurrency]
        interval = figure_interval(group, metric, calibration)
        if interval is not None:
            found[concurrency] = interval
    return found


def interval_columns(
    spec: Interval | None, base: Interval | None
) -> dict[str, float | str | int | None]:
    """Each side's half-width, kind and launches, and the ratio's interval (spec / base)."""
    nan = float("nan")
    row: dict[str, float | str | int | None] = {}
    for side, interval in ((SPECULATIVE, spec), (BASELINE, base)):
        half = interval.half_width if interval is not None else None
        row[side + SUFFIX_CI_HALF] = nan if half is None else half
        row[side + SUFFIX_CI_KIND] = interval.kind if interval is not None else None
        row[side + SUFFIX_LAUNCHES] = interval.launches if interval is not None else None
    ratio = ratio_interval(spec, base) if spec is not None and base is not None else None
    low, high = (ratio.low, ratio.high) if ratio is not None else (None, None)
    row[RATIO + SUFFIX_CI_LOW] = nan if low is None else low
    row[RATIO + SUFFIX_CI_HIGH] = nan if high is None else high
    row[RATIO + SUFFIX_CI_KIND] = ratio.kind if ratio is not None else None
    return row


def serving_data(
    frame: pd.DataFrame,
    comparison: Comparison,
    view: str,
    concurrency: int,
    calibration: Calibration | None = None,
) -> pd.DataFrame:
    """Means over repeats at `concurrency`: one row per serving metric.

    Throughput is per GPU when both sides know their GPUs, else per server
    (`throughput_column`). Columns: metric, speculative, baseline (means), ratio
    (speculative / baseline, unrounded), n_speculative, n_baseline, per side
    `<side>_min`, `<side>_max`, `<side>_ci95` (over repeats) and the launch-level
    interval's `<side>_ci_half`, `<side>_ci_kind`, `<side>_launches`, and the ratio's
    `ratio_ci_low`, `ratio_ci_high`, `ratio_ci_kind` (`interval_columns`).
    """
    import pandas as pd

    pair = [comparison.speculative, comparison.baseline]
    metrics = serving_metrics(throughput_column(frame, pair))
    spec = label_means(frame, comparison.speculative, view, metrics).loc[concurrency].to_dict()
    base = label_means(frame, comparison.baseline, view, metrics).loc[concurrency].to_dict()
    rows = []
    for metric in metrics:
        rows.append(
            {
                METRIC: metric,
                SPECULATIVE: spec[metric],
                BASELINE: base[metric],
                RATIO: spec[metric] / base[metric] if base[metric] else float("nan"),
                N_SPECULATIVE: int(spec[N_REPEATS]),
                N_BASELINE: int(base[N_REPEATS]),
                SPECULATIVE + SUFFIX_MIN: spec[metric + SUFFIX_MIN],
                SPECULATIVE + SUFFIX_MAX: spec[metric + SUFFIX_MAX],
                ci_column(SPECULATIVE): spec[ci_column(metric)],
                BASELINE + SUFFIX_MIN: base[metric + SUFFIX_MIN],
                BASELINE + SUFFIX_MAX: base[metric + SUFFIX_MAX],
                ci_column(BASELINE): base[ci_column(metric)],
                **interval_columns(
                    label_intervals(frame, comparison.speculative, view, metric, calibration).get(
                        concurrency
                    ),
                    label_intervals(frame, comparison.baseline, view, metric, calibration).get(
                        concurrency
                    ),
                ),
            }
        )
    return pd.DataFrame(rows)


def sweep_data(
    frame: pd.DataFrame,
    comparison: Comparison,
    view: str,
    calibration: Calibration | None = None,
) -> pd.DataFrame:
    """Mean tok/s/GPU of both labels at every concurrency either ran, with the speedup.

    Per server instead when a side does not know its GPUs (`throughput_column`). Columns:
    concurrency, speculative, baseline (NaN where a label did not run it), ratio
    (speculative / baseline, unrounded), throughput_metric (the column compared), and the
    launch-level intervals of both sides and of the ratio (`interval_columns`).
    """
    import pandas as pd

    tok = throughput_column(frame, [comparison.speculative, comparison.baseline])
    metrics = (*serving_metrics(tok), OUTPUT_TOKENS_PER_JOULE)
    spec = label_means(frame, comparison.speculative, view, metrics)
    base = label_means(frame, comparison.baseline, view, metrics)
    concurrencies = sorted(set(spec.index) | set(base.index))
    loads = under_loaded(frame, [comparison.speculative, comparison.baseline], view)
    spec_intervals = label_intervals(frame, comparison.speculative, view, tok, calibration)
    base_intervals = label_intervals(frame, comparison.baseline, view, tok, calibration)
    rows = []
    for c in concurrencies:
        s = float(spec.loc[c, tok]) if c in spec.index else float("nan")
        b = float(base.loc[c, tok]) if c in base.index else float("nan")
        rows.append(
            {
                CONCURRENCY: int(c),
                SPECULATIVE: s,
                BASELINE: b,
                RATIO: s / b if b else float("nan"),
                THROUGHPUT_METRIC: tok,
                UNDER_LOADED_CONVERSATIONS: loads.get(int(c), float("nan")),
                SPECULATIVE_TOKENS_PER_JOULE: _at(spec, c, OUTPUT_TOKENS_PER_JOULE),
                BASELINE_TOKENS_PER_JOULE: _at(base, c, OUTPUT_TOKENS_PER_JOULE),
                **interval_columns(spec_intervals.get(int(c)), base_intervals.get(int(c))),
            }
        )
    columns = [CONCURRENCY, SPECULATIVE, BASELINE, RATIO, THROUGHPUT_METRIC]
    columns += [UNDER_LOADED_CONVERSATIONS, SPECULATIVE_TOKENS_PER_JOULE, BASELINE_TOKENS_PER_JOULE]
    columns += list(interval_columns(None, None))
    return pd.DataFrame(rows, columns=columns)


def _at(means: pd.DataFrame, concurrency: int, column: str) -> float:
    """One point's mean of `column`; NaN where the label did not run it or has no value."""
    if concurrency not in means.index or column not in means.columns:
        return float("nan")
    value = means.loc[concurrency, column]
    return (
        float(value) if isinstance(value, (int, float)) and math.isfinite(value) else float("nan")
    )
