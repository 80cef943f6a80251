"""Which labels to compare, at which concurrency, on which datasets.

Baseline: `--baseline NAME` when given, else the labels the manifest marks
`baseline: true`, else the labels that never reported spec-decode counters (a
non-speculative server). Speculative: `--speculative NAME`, else every label with
counters that is not a baseline. Each speculative label is compared with the baseline of
its own results directory when there is one (two vLLM versions side by side), else with
the only baseline there is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from specbench.common.errors import SpecbenchError
from specbench.results.columns import (
    CATEGORY,
    CONCURRENCY,
    CONTEXT_K,
    DATASET,
    IS_BASELINE,
    LABEL,
    NUM_DRAFTS,
    RESULTS_DIR,
    SERVER_LABEL,
    SPLIT,
    VIEW,
)

if TYPE_CHECKING:
    import pandas as pd

#: The concurrency the cards report serving results at, when it was run.
CARD_CONCURRENCY = 48


@dataclass(frozen=True, slots=True)
class Comparison:
    """One speculative label measured against its baseline."""

    speculative: str
    baseline: str


@dataclass(frozen=True, slots=True)
class Selection:
    """The labels a report compares; `baseline_note` says why there is no comparison."""

    speculative: tuple[str, ...]
    baselines: tuple[str, ...]
    comparisons: tuple[Comparison, ...]
    baseline_note: str | None = None


def _match(frame: pd.DataFrame, name: str, option: str) -> list[str]:
    labels = sorted(set(frame[LABEL]))
    if name in labels:
        return [name]
    by_server = sorted(set(frame.loc[frame[SERVER_LABEL] == name, LABEL]))
    if by_server:
        return by_server
    raise SpecbenchError(
        f"{option} {name!r} is not a label of the results (labels: {', '.join(labels)})"
    )


def _has_counters(frame: pd.DataFrame) -> set[str]:
    return set(frame.loc[frame[NUM_DRAFTS].notna(), LABEL]) if NUM_DRAFTS in frame else set()


def select_labels(
    frame: pd.DataFrame, baseline: str | None = None, speculative: str | None = None
) -> Selection:
    """Resolve baseline and speculative labels (see the module docstring).

    Raises SpecbenchError when a named label is absent, or when a speculative label has
    several baselines to choose from. With no baseline at all, `baseline_note` says why.
    """
    labels = sorted(set(frame[LABEL]))
    with_counters = _has_counters(frame)
    if baseline is not None:
        baselines = _match(frame, baseline, "--baseline")
    else:
        baselines = sorted(set(frame.loc[frame[IS_BASELINE].astype(bool), LABEL]))
        if not baselines:
            baselines = [label for label in labels if label not in with_counters]
    if speculative is not None:
        chosen = _match(frame, speculative, "--speculative")
    else:
        chosen = [label for label in labels if label in with_counters and label not in baselines]
    if not baselines:
        # Every label speculates and none is marked baseline: the tables of each still hold,
        # only the speedup needs a reference, which --baseline names.
        note = "no baseline in the results"
        if len(labels) > 1:
            note = (
                "no baseline for a speedup: none is marked baseline in manifest.json and "
                f"every label has spec-decode counters ({', '.join(labels)}); pass "
                "--baseline NAME to compare against one"
            )
        return Selection(tuple(chosen), (), (), note)
    home = {label: set(frame.loc[frame[LABEL] == label, RESULTS_DIR]) for label in labels}
    comparisons = []
    for label in chosen:
        same_dir = [b for b in baselines if home[b] & home[label] and b != label]
        candidates = same_dir or [b for b in baselines if b != label]
        if len(candidates) > 1:
            raise SpecbenchError(
                f"several baselines for {label!r} ({', '.join(candidates)}); pass --baseline NAME"
            )
        if candidates:
            comparisons.append(Comparison(label, candidates[0]))
    return Selection(tuple(chosen), tuple(baselines), tuple(comparisons))


def mixed_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells that ran several categories mixed (not one category alone)."""
    return frame[frame[CATEGORY].isna()]


def ordered_datasets(frame: pd.DataFrame, column: str = DATASET) -> list[str]:
    """Values of `column` (dataset, group or view) in card order: qualitative first,
    throughput splits by context, the rest."""

    def key(dataset: str) -> tuple[int, float, str]:
        rows = frame[frame[column] == dataset]
        split = rows[SPLIT].dropna()
        context = rows[CONTEXT_K].dropna()
        if len(split) and split.iloc[0] == "qualitative":
            return (0, 0.0, dataset)
        if len(context):
            return (1, float(context.iloc[0]), dataset)
        return (2, 0.0, dataset)

    return sorted(set(frame[column]), key=key)


def common_concurrencies(frame: pd.DataFrame, labels: Sequence[str], view: str) -> list[int]:
    """Concurrencies every label in `labels` ran on `view`, ascending."""
    sets = [
        set(frame.loc[(frame[LABEL] == label) & (frame[VIEW] == view), CONCURRENCY])
        for label in labels
    ]
    common = set.intersection(*sets) if sets else set()
    return sorted(int(c) for c in common)


def check_concurrency(frame: pd.DataFrame, concurrency: int | None) -> None:
    """A requested concurrency must have been run by some cell."""
    if concurrency is None:
        return
    ran = sorted({int(c) for c in frame[CONCURRENCY]})
    if concurrency not in ran:
        raise SpecbenchError(
            f"--concurrency {concurrency} was not run (concurrencies in the results: "
            f"{', '.join(map(str, ran))})"
        )


def pick_concurrency(available: Sequence[int], requested: int | None) -> int | None:
    """The requested concurrency, else 48 when run, else the highest; None when none."""
    if requested is not None:
        return requested if requested in available else None
    if CARD_CONCURRENCY in available:
        return CARD_CONCURRENCY
    return max(available) if available else None
