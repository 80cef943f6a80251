"""Aggregation of the tidy frames: means over repeats with their spread, pooled acceptance.

Two different averages, on purpose:

- serving metrics (throughput, latencies) of repeated cells are averaged as a plain mean,
  as model cards do ("mean of two complete runs"), with min, max, std, n and a Student t
  confidence half-width beside each mean;
- acceptance is a ratio of sums, so acceptance over several cells is pooled from the
  counters: AL = 1 + Σaccepted / Σdrafts over all the cells (vLLM's step-weighted
  definition), never the mean of per-cell ALs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from specbench.results.columns import (
    ACCEPTANCE_DEFINITION,
    ACCEPTANCE_LENGTH,
    ACCEPTANCE_SOURCE,
    ACCEPTED_PER_POSITION_PREFIX,
    CELL_DIR,
    DRAFT_ACCEPTANCE_RATE,
    EFFECTIVE_K,
    IDENTITY_COLUMNS,
    LAUNCH,
    NUM_ACCEPTED_TOKENS,
    NUM_DRAFT_TOKENS,
    NUM_DRAFTS,
    NUM_REQUESTS,
    NUM_SPEC_STEPS,
    PER_POSITION_PREFIX,
    REPEAT,
    SCHEMA,
    position_columns,
)
from specbench.stats.student_t import ci_half_width

if TYPE_CHECKING:
    import pandas as pd

#: Added by `aggregate_repeats`: rows (repeats) behind each aggregated row.
N_REPEATS = "n_repeats"
#: Added by `pool_acceptance` and `pool_category_acceptance`: cells pooled into a row.
N_CELLS = "n_cells"
#: Suffixes of the spread columns `aggregate_repeats` adds beside each metric's mean.
SUFFIX_MIN = "_min"
SUFFIX_MAX = "_max"
SUFFIX_STD = "_std"
SUFFIX_N = "_n"
#: Pooled (step-weighted) acceptance over the repeats, beside the plain means.
SUFFIX_POOLED = "_pooled"


def ci_column(metric: str, confidence: float = 0.95) -> str:
    """Name of the confidence half-width column of `metric`, e.g. `ttft_ms_median_ci95`."""
    return f"{metric}_ci{round(confidence * 100):d}"


def group_columns(frame: pd.DataFrame) -> list[str]:
    """Identity columns of `frame` except `repeat` and `launch`: what a measured point is,
    regardless of the pass and the server launch that measured it."""
    return [c for c in IDENTITY_COLUMNS if c in frame.columns and c not in (REPEAT, LAUNCH)]


def metric_columns(frame: pd.DataFrame) -> list[str]:
    """Numeric columns of `frame` that are measurements (not identity or bookkeeping)."""
    import pandas as pd

    skip = {*IDENTITY_COLUMNS, CELL_DIR, SCHEMA}
    return [
        c
        for c in frame.columns
        if c not in skip
        and pd.api.types.is_numeric_dtype(frame[c])
        and not pd.api.types.is_bool_dtype(frame[c])
    ]


def _text_summary(values: pd.Series) -> object:
    distinct = sorted({str(v) for v in values.dropna()})
    if not distinct:
        return None
    return distinct[0] if len(distinct) == 1 else ",".join(distinct)


def aggregate_repeats(
    frame: pd.DataFrame,
    *,
    confidence: float = 0.95,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Collapse repeats: one row per cell identity (all identity columns but `repeat`).

    For each metric column M (default: every numeric measurement column) the result holds
    M = mean over repeats (NaN ignored), M_min, M_max, M_std (sample std, ddof 1; NaN when
    n < 2), M_n (non-missing repeats) and M_ci95 (half-width of the two-sided Student t
    interval of the mean, t(1 − α/2, n − 1)·std/√n; NaN when n < 2; the name follows
    `ci_column(M, confidence)`). `n_repeats` counts the rows collapsed. Text columns keep
    their value when all repeats agree, else their distinct values joined by commas.
    When spec-decode counters are present, `acceptance_length_pooled`,
    `draft_acceptance_rate_pooled`, `effective_k_pooled` (Σ draft tokens / Σ drafts) and
    `per_position_acceptance_i_pooled` hold the step-weighted figures pooled over the
    repeats' counters.
    """
    import pandas as pd

    keys = group_columns(frame)
    chosen = list(metrics) if metrics is not None else metric_columns(frame)
    missing = [m for m in chosen if m not in frame.columns]
    if missing:
        raise KeyError(f"metric columns not in the frame: {missing}")
    texts = [
        c
        for c in frame.columns
        if c not in keys
        and c not in chosen
        and c not in {REPEAT, LAUNCH, CELL_DIR}
        and not pd.api.types.is_numeric_dtype(frame[c])
    ]
    rows = []
    for key, group in frame.groupby(keys, dropna=False, sort=True):
        row: dict[str, object] = dict(zip(keys, key, strict=True))
        row[N_REPEATS] = len(group)
        for metric in chosen:
            values = group[metric].dropna().astype(float)
            n = len(values)
            std = float(values.std(ddof=1)) if n >= 2 else math.nan
            row[metric] = float(values.mean()) if n else math.nan
            row[metric + SUFFIX_MIN] = float(values.min()) if n else math.nan
            row[metric + SUFFIX_MAX] = float(values.max()) if n else math.nan
            row[metric + SUFFIX_STD] = std
            row[metric + SUFFIX_N] = n
            row[ci_column(metric, confidence)] = ci_half_width(std, n, confidence)
        for column in texts:
            row[column] = _text_summary(group[column])
        if NUM_DRAFTS in group.columns:
            pooled = _pool(group)
            for name, value in pooled.items():
                if name in (
                    ACCEPTANCE_LENGTH,
                    DRAFT_ACCEPTANCE_RATE,
                    EFFECTIVE_K,
                ) or name.startswith(PER_POSITION_PREFIX):
                    row[name + SUFFIX_POOLED] = value
        rows.append(row)
    result = pd.DataFrame(rows)
    for name in keys:
        if len(result):
            result[name] = result[name].astype(frame[name].dtype)
    return result


def _pool(group: pd.DataFrame) -> dict[str, float]:
    """Step-weighted acceptance of the rows of `group` that carry spec-decode counters."""
    spec = group[group[NUM_DRAFTS].notna()]
    drafts = float(spec[NUM_DRAFTS].sum())
    draft_tokens = float(spec[NUM_DRAFT_TOKENS].sum())
    accepted = float(spec[NUM_ACCEPTED_TOKENS].sum())
    pooled: dict[str, float] = {
        N_CELLS: float(len(spec)),
        NUM_DRAFTS: drafts,
        NUM_DRAFT_TOKENS: draft_tokens,
        NUM_ACCEPTED_TOKENS: accepted,
        ACCEPTANCE_LENGTH: 1.0 + accepted / drafts if drafts > 0 else math.nan,
        DRAFT_ACCEPTANCE_RATE: accepted / draft_tokens if draft_tokens > 0 else math.nan,
        EFFECTIVE_K: draft_tokens / drafts if drafts > 0 else math.nan,
    }
    for column in position_columns(group, ACCEPTED_PER_POSITION_PREFIX):
        position = column[len(ACCEPTED_PER_POSITION_PREFIX) :]
        pooled[PER_POSITION_PREFIX + position] = (
            float(spec[column].sum()) / drafts if drafts > 0 else math.nan
        )
    return pooled


def pool_acceptance(frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Step-weighted acceptance pooled over all cells of each `by` group, from counters.

    AL = 1 + Σnum_accepted_tokens / Σnum_drafts, draft_acceptance_rate =
    Σnum_accepted_tokens / Σnum_draft_tokens, per_position_acceptance_i =
    Σnum_accepted_tokens_per_position_i / Σnum_drafts. Cells without spec-decode counters
    (speculation off) are left out; groups with none are absent from the result.
    Columns: `by`, `n_cells`, the three summed counters, the pooled rates.
    """
    import pandas as pd

    spec = frame[frame[NUM_DRAFTS].notna()] if NUM_DRAFTS in frame.columns else frame.iloc[0:0]
    rows = []
    for key, group in spec.groupby(list(by), dropna=False, sort=True):
        keys = key if isinstance(key, tuple) else (key,)
        row: dict[str, object] = dict(zip(by, keys, strict=True))
        row.update(_pool(group))
        row[N_CELLS] = len(group)
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else [*by, N_CELLS, ACCEPTANCE_LENGTH])


def pool_category_acceptance(categories: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Acceptance per `by` group of the per-category frame, pooled the way each was defined.

    Step-weighted rows with `num_spec_steps` pool by steps: AL = 1 + Σ(AL−1)·steps / Σsteps
    (the same as 1 + Σaccepted / Σsteps). Mean-over-requests rows (tokens per chunk) pool
    as the request-weighted mean of AL. Groups are split by `acceptance_source` and
    `acceptance_definition` so that a footnote can say which one each number uses.
    Columns: `by`, `acceptance_source`, `acceptance_definition`, `n_cells`,
    `num_requests`, `num_spec_steps`, `acceptance_length`, `per_position_acceptance_i`.
    """
    import pandas as pd

    data = categories[categories[ACCEPTANCE_LENGTH].notna()]
    keys = [*by, ACCEPTANCE_SOURCE, ACCEPTANCE_DEFINITION]
    positions = position_columns(data)
    rows = []
    for key, group in data.groupby(keys, dropna=False, sort=True):
        row: dict[str, object] = dict(zip(keys, key, strict=True))
        requests = float(group[NUM_REQUESTS].sum())
        steps = group[NUM_SPEC_STEPS].astype(float) if NUM_SPEC_STEPS in group else None
        by_steps = (
            row[ACCEPTANCE_DEFINITION] == "step_weighted"
            and steps is not None
            and steps.notna().all()
            and steps.sum() > 0
        )
        weights = steps if by_steps and steps is not None else group[NUM_REQUESTS].astype(float)
        total = float(weights.sum())
        al = group[ACCEPTANCE_LENGTH].astype(float)
        row[N_CELLS] = len(group)
        row[NUM_REQUESTS] = requests
        row[NUM_SPEC_STEPS] = float(steps.sum()) if by_steps and steps is not None else math.nan
        row[ACCEPTANCE_LENGTH] = float((al * weights).sum() / total) if total > 0 else math.nan
        for column in positions:
            rates = group[column].astype(float)
            usable = rates.notna()
            w = weights[usable]
            row[column] = float((rates[usable] * w).sum() / w.sum()) if w.sum() > 0 else math.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else [*keys, N_CELLS, ACCEPTANCE_LENGTH])
