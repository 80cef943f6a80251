"""Results directories for the gate's unit tests, written through the `CellSummary` contract.

Counters are chosen so that pooled acceptance (a ratio of sums) and the mean of the
per-repeat ALs differ, so a test can tell which one the gate uses.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import analysis_fixtures as shared

from specbench.store.summary import CategoryAcceptance, CellSummary, Distribution, SpecDecodeSummary

#: Counters and the rates derived from them, as for the analysis tests.
spec_decode = shared.spec_decode


def distribution(median: float) -> Distribution:
    return shared.distribution(median, count=16)


def per_category(als: dict[str, tuple[float, int]]) -> dict[str, CategoryAcceptance]:
    """Category → (AL, spec steps) as per-request metrics would give them (4 requests)."""
    return {name: shared.category(al, steps, requests=4) for name, (al, steps) in als.items()}


def summary(
    *,
    label: str = "eagle3",
    dataset: str = "speed-bench:qualitative",
    concurrency: int = 8,
    repeat: int = 0,
    tok_s: float = 1000.0,
    ttft_ms: float = 50.0,
    e2e_ms: float = 1000.0,
    num_failed: int = 0,
    spec: SpecDecodeSummary | None = None,
    categories: dict[str, CategoryAcceptance] | None = None,
    max_tokens: int = 256,
    workload: str = "speed-bench-qualitative",
    **extra: Any,
) -> CellSummary:
    """One GPU, 16 requests in 10 s: `tests/analysis_fixtures.summary` at the gate's scale."""
    extra.setdefault("num_conversations", 0)
    return shared.summary(
        label=label,
        dataset=dataset,
        concurrency=concurrency,
        repeat=repeat,
        tok_s_per_gpu=tok_s,
        gpus=1,
        num_requests=16,
        duration_s=10.0,
        input_tokens=1600,
        spec=spec,
        per_category=categories,
        workload=workload,
        model="m",
        max_tokens=max_tokens,
        finished_at="2026-01-01T00:00:10Z",
        num_failed=num_failed,
        ttft_ms=ttft_ms,
        e2e_ms=e2e_ms,
        tpot_ms=distribution(10.0),
        step_gap_ms=distribution(20.0),
        **extra,
    )


def write_cell(root: Path, cell: CellSummary, dataset_dir: str = "speed-bench-qualitative") -> Path:
    return shared.write_cell(root, cell, dataset_dir).parent


def write_manifest(
    root: Path, *, name: str = "suite-a", max_tokens: int = 256, draft: str = "draft-a"
) -> None:
    """A manifest as `specbench run` writes it (suite, hash, servers)."""
    suite = {
        "name": name,
        "repeats": 2,
        "workloads": [
            {
                "dataset": "speed-bench:qualitative:/abs/path/somewhere",
                "categories": None,
                "entropy_tiers": None,
                "num_prompts": None,
                "concurrency": [8],
                "max_tokens": max_tokens,
                "temperature": 0.0,
                "warmup": 1,
                "max_model_len": None,
            }
        ],
        "servers": {
            "eagle3": {"model": "target", "speculative": {"method": "eagle3", "model": draft}}
        },
    }
    manifest = {
        "schema_version": 1,
        "created_at": "2026-01-01T00:00:00+00:00",
        "suite": suite,
        "suite_hash": f"{name}-{max_tokens}-{draft}".ljust(64, "0"),
        "servers": {"eagle3": {"baseline": False, "engine": "vllm", "gpus": 1}},
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def write_results(
    root: Path,
    *,
    al_counters: Sequence[tuple[int, Sequence[int]]] = (
        (1000, [800, 600, 400]),
        (500, [420, 330, 250]),
    ),
    tok_s: Sequence[float] = (1000.0, 1010.0),
    num_failed: Sequence[int] = (0, 0),
    categories: Sequence[dict[str, tuple[float, int]]] | None = None,
    **manifest: Any,
) -> Path:
    """One eagle3 cell at c=8 with one repeat per entry of `al_counters`."""
    write_manifest(root, **manifest)
    for repeat, ((drafts, accepted), rate, failed) in enumerate(
        zip(al_counters, tok_s, num_failed, strict=True)
    ):
        cats = per_category(categories[repeat]) if categories else None
        write_cell(
            root,
            summary(
                repeat=repeat,
                tok_s=rate,
                num_failed=failed,
                spec=spec_decode(drafts, accepted),
                categories=cats,
            ),
        )
    return root
