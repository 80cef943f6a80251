"""Acceptance measured once on the full set: check the subset cells agree with it.

At temperature 0 acceptance does not depend on concurrency in principle, so a suite may
measure the full set once (`full_set_concurrency`) and stop the other cells at a
precision target. This check keeps the principle honest on every run: for each category,
the AL of each early-stopped cell against the full-set cell of the same server and
workload, flagged when they differ by more than `Z_FLAG` standard errors.

AL here is tokens per token-carrying chunk (per conversation: Σ tokens / Σ chunks; the
category's figure is the mean over its conversations), from `requests.jsonl`; its
standard error is sd / √n over conversations, combined over the two cells. Higher AL is
better; the check is two-sided.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import orjson

from specbench import store
from specbench.run.estimate import summaries_with_precision

#: |difference| / combined standard error beyond which a category is flagged (~0.3% of
#: comparisons by chance when AL truly does not depend on concurrency).
Z_FLAG = 3.0


@dataclass(frozen=True)
class CategoryCheck:
    server: str
    workload: str
    concurrency: int
    category: str
    subset_al: float
    full_al: float
    z: float

    @property
    def flagged(self) -> bool:
        return abs(self.z) > Z_FLAG


def _per_category(requests: Path) -> dict[str, list[float]]:
    """Category → per-conversation tokens per chunk."""
    tokens: dict[tuple[str, str], int] = defaultdict(int)
    chunks: dict[tuple[str, str], int] = defaultdict(int)
    for line in requests.read_bytes().splitlines():
        try:
            r = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a truncated last line
        if r.get("error_type") is None and r.get("chunk_tokens"):
            key = (r["category"], r["question_id"])
            tokens[key] += sum(r["chunk_tokens"])
            chunks[key] += len(r["chunk_tokens"])
    result: dict[str, list[float]] = defaultdict(list)
    for (category, _), count in chunks.items():
        result[category].append(tokens[(category, _)] / count)
    return result


def _mean_se(values: list[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, math.inf
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return mean, math.sqrt(variance / len(values))


def check_acceptance(root: Path) -> list[CategoryCheck]:
    """Every (subset cell, category) against its full-set cell; [] when there is none."""
    cells: dict[tuple[str, str], list[tuple[int, Path, bool]]] = defaultdict(list)
    for summary in summaries_with_precision(root):
        if summary.spec_decode is None or summary.precision is None:
            continue
        full = summary.precision.target is None
        directory = store.cell_path(root, store.summary_key(summary))
        cells[(summary.label, summary.workload)].append((summary.concurrency, directory, full))
    checks = []
    for (server, workload), members in cells.items():
        fulls = [m for m in members if m[2]]
        if not fulls:
            continue
        reference = _per_category(fulls[0][1] / store.REQUESTS)
        for concurrency, directory, full in members:
            if full:
                continue
            for category, values in sorted(_per_category(directory / store.REQUESTS).items()):
                if category not in reference:
                    continue
                sub_al, sub_se = _mean_se(values)
                full_al, full_se = _mean_se(reference[category])
                se = math.hypot(sub_se, full_se)
                z = 0.0 if se == 0 else (sub_al - full_al) / se
                checks.append(
                    CategoryCheck(server, workload, concurrency, category, sub_al, full_al, z)
                )
    return checks


def describe_checks(checks: list[CategoryCheck]) -> list[str]:
    """One line for the run's end: agreements counted, disagreements named."""
    if not checks:
        return []
    flagged = [c for c in checks if c.flagged]
    lines = [
        f"acceptance check: {len(checks) - len(flagged)}/{len(checks)} (cell, category) ALs "
        f"agree with the full-set cell within {Z_FLAG:g} standard errors"
    ]
    for c in flagged:
        lines.append(
            f"  flagged: {c.server} {c.workload} c={c.concurrency} {c.category}: AL "
            f"{c.subset_al:.3f} vs full set {c.full_al:.3f} (z = {c.z:+.1f})"
        )
    return lines
