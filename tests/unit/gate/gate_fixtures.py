"""Results directories for the gate's unit tests, written through the `CellSummary` contract.

Counters are chosen so that pooled acceptance (a ratio of sums) and the mean of the
per-repeat ALs differ, so a test can tell which one the gate uses.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from specbench.store.summary import CategoryAcceptance, CellSummary, Distribution, SpecDecodeSummary


def distribution(median: float) -> Distribution:
    return Distribution(mean=median, median=median, p90=median * 1.5, p99=median * 2, count=16)


def spec_decode(drafts: int, accepted_per_position: Sequence[int]) -> SpecDecodeSummary:
    accepted = sum(accepted_per_position)
    rates = [a / drafts for a in accepted_per_position]
    return SpecDecodeSummary(
        acceptance_length=1 + accepted / drafts,
        draft_acceptance_rate=accepted / (drafts * len(rates)),
        per_position_acceptance=rates,
        conditional_acceptance=[rates[0], *(b / a for a, b in itertools.pairwise(rates))],
        num_drafts=drafts,
        num_draft_tokens=drafts * len(rates),
        num_accepted_tokens=accepted,
        num_accepted_tokens_per_position=list(accepted_per_position),
    )


def per_category(als: dict[str, tuple[float, int]]) -> dict[str, CategoryAcceptance]:
    """Category → (AL, spec steps) as per-request metrics would give them."""
    return {
        name: CategoryAcceptance(
            num_requests=4,
            acceptance_length=al,
            acceptance_source="per_request_metrics",
            definition="step_weighted",
            draft_acceptance_rate=(al - 1) / 3,
            per_position_acceptance=None,
            num_spec_steps=steps,
            output_tokens=400,
        )
        for name, (al, steps) in als.items()
    }


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
    extra.setdefault("categories", None)
    extra.setdefault("entropy_tiers", None)
    return CellSummary(
        label=label,
        workload=workload,
        dataset=dataset,
        category=None,
        concurrency=concurrency,
        repeat=repeat,
        gpus=1,
        model="m",
        endpoint="http://127.0.0.1:8000",
        api="chat",
        client="aiohttp",
        max_tokens=max_tokens,
        temperature=0.0,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:10Z",
        num_requests=16,
        num_failed=num_failed,
        duration_s=10.0,
        input_tokens=1600,
        output_tokens=round(tok_s * 10),
        output_tok_s=tok_s,
        output_tok_s_per_gpu=tok_s,
        request_per_s=1.6,
        ttft_ms=distribution(ttft_ms),
        tpot_ms=distribution(10.0),
        e2e_ms=distribution(e2e_ms),
        step_gap_ms=distribution(20.0),
        server_generation_tokens=round(tok_s * 10),
        spec_decode=spec,
        per_category=categories or {},
        **extra,
    )


def write_cell(root: Path, cell: CellSummary, dataset_dir: str = "speed-bench-qualitative") -> Path:
    directory = root / cell.label / dataset_dir / f"c{cell.concurrency}" / f"r{cell.repeat}"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "summary.json").write_text(cell.model_dump_json(indent=2), encoding="utf-8")
    return directory


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
