"""`specbench lossless`: a results directory → `lossless.json` and `lossless.md`.

Reads only the results directory. Labels are resolved as `specbench report` does
(`--baseline`/`--speculative`, else the manifest's `baseline: true`, else the labels
without spec-decode counters). Each speculative cell `<spec>/<dataset-dir>/c<C>/r<R>` is
paired with the baseline cell `<base>/<dataset-dir>/c<C>/r<R>` (same prompts, same load
level, same repeat) and their `requests.jsonl` outputs are compared pair by pair
(`specbench.lossless.compare`). A pair of cells is skipped, with the reason, when either
ran at temperature > 0 or with a different API or output cap.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from specbench import store
from specbench.client.record import RequestRecord
from specbench.common.errors import SpecbenchError
from specbench.lossless.acceptance import acceptance_lengths
from specbench.lossless.compare import PairResult, compare_records
from specbench.lossless.model import (
    DEPTH_BUCKETS,
    AcceptanceRow,
    CellCheck,
    Divergence,
    DivergenceDepth,
    LosslessReport,
    MatchCount,
)
from specbench.metrics.latency import percentile
from specbench.results.missing import missing_cells
from specbench.store.summary import CellSummary

LOSSLESS_JSON = "lossless.json"
LOSSLESS_MD = "lossless.md"


@dataclass(frozen=True, slots=True)
class CompleteCell:
    """One complete cell of the results directory."""

    label: str
    dataset_dir: str
    directory: Path
    summary: CellSummary

    @property
    def key(self) -> tuple[str, int, int, int]:
        """What pairs a speculative cell with its baseline cell: one launch's one repeat."""
        s = self.summary
        return (self.dataset_dir, s.concurrency, s.launch, s.repeat)


def match_count(results: Sequence[PairResult]) -> MatchCount:
    compared = [r for r in results if r.status != "not_compared"]
    matched = sum(r.status == "match" for r in compared)
    return MatchCount(
        num_compared=len(compared),
        num_matched=matched,
        exact_match_rate=matched / len(compared) if compared else None,
    )


def bucket_name(index: int) -> int:
    """Index into DEPTH_BUCKETS + open end of the bucket holding a divergence position."""
    return next((i for i, bound in enumerate(DEPTH_BUCKETS) if index < bound), len(DEPTH_BUCKETS))


def bucket_labels() -> list[str]:
    """`0`, `1-15`, `16-63`, `64-255`, `256+` for DEPTH_BUCKETS = (1, 16, 64, 256)."""
    labels, low = [], 0
    for bound in DEPTH_BUCKETS:
        labels.append(str(low) if bound - low == 1 else f"{low}-{bound - 1}")
        low = bound
    return [*labels, f"{low}+"]


def divergence_depth(results: Sequence[PairResult]) -> DivergenceDepth:
    """Distribution of first-divergence positions (token ids preferred over text)."""
    diverged = [r for r in results if r.status == "diverged"]
    by_ids = [r for r in diverged if r.compared_by == "token_ids"]
    chosen = by_ids or diverged
    labels = bucket_labels()
    buckets = dict.fromkeys(labels, 0)
    positions = sorted(r.first_divergence for r in chosen if r.first_divergence is not None)
    for position in positions:
        buckets[labels[bucket_name(position)]] += 1
    fractions = [
        r.first_divergence / r.baseline_length
        for r in chosen
        if r.first_divergence is not None and r.baseline_length
    ]
    unit: Literal["token", "character"] | None = None
    if chosen:
        unit = "token" if chosen[0].compared_by == "token_ids" else "character"
    return DivergenceDepth(
        unit=unit,
        count=len(positions),
        min=positions[0] if positions else None,
        median=percentile(positions, 50) if positions else None,
        max=positions[-1] if positions else None,
        mean_matched_fraction=sum(fractions) / len(fractions) if fractions else None,
        buckets=buckets,
    )


def _skip_reason(spec: CellSummary, base: CellSummary) -> str | None:
    for summary, side in ((spec, "speculative"), (base, "baseline")):
        if summary.temperature > 0:
            return (
                f"{side} ran at temperature {summary.temperature:g}: sampled outputs are not "
                "expected to match; the check needs temperature 0"
            )
    if spec.api != base.api:
        return f"different APIs ({spec.api} vs {base.api}): different prompts"
    if spec.max_tokens != base.max_tokens:
        return f"different output caps ({spec.max_tokens} vs {base.max_tokens} max_tokens)"
    return None


def _records(cell: CompleteCell, incomplete: list[str]) -> list[RequestRecord]:
    """The cell's records; a count that disagrees with its summary is noted in `incomplete`."""
    path = cell.directory / store.REQUESTS
    if not path.is_file():
        raise SpecbenchError(f"{path}: missing (every complete cell has its requests.jsonl)")
    records = list(store.read_records(path))
    problem = store.records_disagree(path, len(records), cell.summary)
    if problem is not None and problem not in incomplete:
        incomplete.append(problem)
    return records


def check_cells(
    spec: CompleteCell,
    base: CompleteCell,
    root: Path,
    min_match_rate: float,
    results: Sequence[PairResult],
) -> CellCheck:
    """Summarise the pair results of one speculative cell against its baseline cell."""
    compared_by = {r.compared_by for r in results if r.compared_by is not None}
    skipped = None
    overall = match_count(results)
    if overall.num_compared == 0:
        skipped = "no pair could be compared: " + ", ".join(
            f"{n} {reason}" for reason, n in Counter(r.reason for r in results).items()
        )
        reasons = {r.reason for r in results}
        if "no_saved_output" in reasons and reasons <= {"no_saved_output", "history_unverified"}:
            skipped = "no saved outputs (run at temperature 0, or with --save-outputs)"
    categories: dict[str, list[PairResult]] = defaultdict(list)
    for result in results:
        categories[result.category].append(result)
    rate = overall.exact_match_rate
    return CellCheck(
        **_pair(spec, base, root),
        skipped=skipped,
        num_pairs=len(results),
        overall=overall,
        first_turns=match_count([r for r in results if r.turn == 0]),
        later_turns=match_count([r for r in results if r.turn > 0]),
        compared_by=(
            None if not compared_by else compared_by.pop() if len(compared_by) == 1 else "mixed"
        ),
        not_compared=dict(sorted(Counter(r.reason for r in results if r.reason).items())),
        divergence=divergence_depth(results),
        per_category={name: match_count(group) for name, group in sorted(categories.items())},
        divergences=[
            Divergence(
                question_id=r.question_id,
                turn=r.turn,
                category=r.category,
                compared_by=r.compared_by,
                first_divergence=r.first_divergence,
                baseline_length=r.baseline_length or 0,
                speculative_length=r.speculative_length or 0,
            )
            for r in results
            if r.status == "diverged" and r.compared_by and r.first_divergence is not None
        ],
        passed=None if rate is None else rate >= min_match_rate,
    )


def _pair(spec: CompleteCell, base: CompleteCell, root: Path) -> dict[str, Any]:
    """The fields of a CellCheck that name its pair of cells."""
    return {
        "speculative": spec.label,
        "baseline": base.label,
        "dataset": spec.summary.dataset,
        "dataset_dir": spec.dataset_dir,
        "concurrency": spec.summary.concurrency,
        "repeat": spec.summary.repeat,
        "speculative_cell": spec.directory.relative_to(root).as_posix(),
        "baseline_cell": base.directory.relative_to(root).as_posix(),
    }


def _skipped_cell(spec: CompleteCell, base: CompleteCell, root: Path, reason: str) -> CellCheck:
    empty = match_count([])
    return CellCheck(
        **_pair(spec, base, root),
        skipped=reason,
        num_pairs=0,
        overall=empty,
        first_turns=empty,
        later_turns=empty,
        compared_by=None,
        not_compared={},
        divergence=divergence_depth([]),
        per_category={},
        divergences=[],
        passed=None,
    )


def acceptance_row(cell: CompleteCell, records: Sequence[RequestRecord]) -> AcceptanceRow:
    return AcceptanceRow(
        label=cell.label,
        dataset=cell.summary.dataset,
        dataset_dir=cell.dataset_dir,
        concurrency=cell.summary.concurrency,
        repeat=cell.summary.repeat,
        **acceptance_lengths(cell.summary.spec_decode, records),
    )


def _load(
    results_dir: Path, baseline: str | None, speculative: str | None
) -> tuple[list[CompleteCell], tuple[str, ...], tuple[str, ...], dict[str, str]]:
    from specbench.results import frame as F
    from specbench.results import loading as L
    from specbench.results.selection import select_labels

    loaded, _failed = L.load_cells([results_dir])
    selection = select_labels(F.cells_frame(loaded), baseline, speculative)
    cells = [CompleteCell(c.label, c.summary.workload, c.path.parent, c.summary) for c in loaded]
    pairs = {c.speculative: c.baseline for c in selection.comparisons}
    return cells, selection.baselines, selection.speculative, pairs


def check_lossless(
    results_dir: Path,
    *,
    baseline: str | None = None,
    speculative: str | None = None,
    min_match_rate: float = 1.0,
) -> LosslessReport:
    """Compare every speculative cell with its baseline cell; compute the three ALs."""
    if not 0.0 <= min_match_rate <= 1.0:
        raise SpecbenchError(f"--min-match-rate {min_match_rate}: must be in [0, 1]")
    cells, baselines, speculative_labels, pairs = _load(results_dir, baseline, speculative)
    by_key = {(c.label, *c.key): c for c in cells}
    checks: list[CellCheck] = []
    unpaired: list[str] = []
    acceptance: list[AcceptanceRow] = []
    per_label: dict[str, list[PairResult]] = defaultdict(list)
    incomplete: list[str] = []
    for cell in sorted(cells, key=lambda c: (c.label, *c.key)):
        if cell.label not in speculative_labels:
            continue
        records = _records(cell, incomplete)
        acceptance.append(acceptance_row(cell, records))
        where = cell.directory.relative_to(results_dir).as_posix()
        base_label = pairs.get(cell.label)
        if base_label is None:
            unpaired.append(f"{where}: no baseline label")
            continue
        base = by_key.get((base_label, *cell.key))
        if base is None:
            unpaired.append(
                f"{where}: no complete {base_label} cell with the same workload, "
                "concurrency and repeat"
            )
            continue
        reason = _skip_reason(cell.summary, base.summary)
        if reason is not None:
            checks.append(_skipped_cell(cell, base, results_dir, reason))
            continue
        known = len(incomplete)
        base_records = _records(base, incomplete)
        if known != len(incomplete) or store.records_disagree(
            cell.directory / store.REQUESTS, len(records), cell.summary
        ):
            reason = "requests.jsonl disagrees with summary.json (see incomplete cells)"
            checks.append(_skipped_cell(cell, base, results_dir, reason))
            continue
        results = compare_records(base_records, records)
        per_label[cell.label].extend(results)
        checks.append(check_cells(cell, base, results_dir, min_match_rate, results))
    compared = [c for c in checks if c.passed is not None]
    return LosslessReport(
        results_dir=str(results_dir),
        min_match_rate=min_match_rate,
        baselines=list(baselines),
        speculative=list(speculative_labels),
        cells=checks,
        unpaired=unpaired,
        incomplete=incomplete,
        missing=missing_cells(results_dir),
        totals={label: match_count(results) for label, results in sorted(per_label.items())},
        acceptance=acceptance,
        passed=bool(compared) and all(c.passed for c in compared) and not incomplete,
    )
