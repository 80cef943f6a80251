"""Results directories for the analysis tests, written through the `CellSummary` contract.

`write_campaign` builds one small campaign whose expected tables are computed by hand in
the tests: a baseline and an EAGLE3 config, the qualitative split (concurrency 1, 2 and
48, two repeats at 48) and two throughput splits at 48. The numbers are chosen so that
every card figure of REFERENCE.md §1 comes out exactly, and so that pooling the counters
and averaging per-cell values give different answers (a test can tell them apart).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import product
from pathlib import Path
from typing import Any

from specbench.common.naming import selection_key
from specbench.store.summary import CategoryAcceptance, CellSummary, Distribution, SpecDecodeSummary

QUALITATIVE = "speed-bench:qualitative"
#: The card's per-category ALs (REFERENCE.md §1); coding is split over two repeats.
CARD_CATEGORY_AL = {
    "coding": 3.33,
    "math": 3.17,
    "rag": 3.14,
    "multilingual": 3.07,
    "reasoning": 2.91,
    "summarization": 2.88,
    "stem": 2.84,
    "humanities": 2.70,
    "qa": 2.55,
    "writing": 2.33,
    "roleplay": 2.02,
}


def distribution(median: float, *, mean: float | None = None, count: int = 64) -> Distribution:
    """A distribution whose other statistics are simple functions of its median."""
    return Distribution(
        mean=median if mean is None else mean,
        median=median,
        p90=median * 1.5,
        p99=median * 2.0,
        count=count,
    )


def spec_decode(
    drafts: int, accepted_per_position: Sequence[int], draft_tokens: int | None = None
) -> SpecDecodeSummary:
    """Counters and the rates vLLM's definitions derive from them (REFERENCE.md §2)."""
    accepted = sum(accepted_per_position)
    tokens = draft_tokens if draft_tokens is not None else drafts * len(accepted_per_position)
    rates = [a / drafts for a in accepted_per_position]
    conditional: list[float | None] = []
    previous = 1.0
    for rate in rates:
        conditional.append(rate / previous if previous else None)
        previous = rate
    return SpecDecodeSummary(
        acceptance_length=1 + accepted / drafts,
        draft_acceptance_rate=accepted / tokens,
        per_position_acceptance=rates,
        conditional_acceptance=conditional,
        num_drafts=drafts,
        num_draft_tokens=tokens,
        num_accepted_tokens=accepted,
        num_accepted_tokens_per_position=list(accepted_per_position),
    )


def summary(
    *,
    label: str,
    dataset: str,
    concurrency: int,
    repeat: int = 0,
    tok_s_per_gpu: float = 100.0,
    e2e_ms: float = 1000.0,
    ttft_ms: float = 100.0,
    spec: SpecDecodeSummary | None = None,
    per_category: dict[str, CategoryAcceptance] | None = None,
    num_requests: int = 64,
    category: str | None = None,
    gpus: int = 8,
    duration_s: float = 100.0,
    categories: list[str] | None = None,
    entropy_tiers: list[str] | None = None,
    workload: str | None = None,
    input_tokens: int | None = None,
    **extra: Any,
) -> CellSummary:
    """A valid summary; throughput figures are consistent with `tok_s_per_gpu`.

    `extra` sets any other field of `CellSummary`, or replaces one this sets (the gate's
    fixtures give their own model, output cap and distributions).
    """
    output_tok_s = tok_s_per_gpu * gpus
    if categories is None and category is not None:
        categories = [category]
    fields: dict[str, Any] = {
        "label": label,
        "workload": workload or selection_key(dataset, categories or (), entropy_tiers or ()),
        "dataset": dataset,
        "categories": categories,
        "entropy_tiers": entropy_tiers,
        "category": category,
        "concurrency": concurrency,
        "repeat": repeat,
        "gpus": gpus,
        "model": "minimax-m3",
        "endpoint": "http://127.0.0.1:8000",
        "api": "chat",
        "client": "aiohttp",
        "max_tokens": 2048,
        "temperature": 0.0,
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:01:40Z",
        "num_requests": num_requests,
        "num_conversations": num_requests,
        "num_failed": 0,
        "duration_s": duration_s,
        "input_tokens": num_requests * 500 if input_tokens is None else input_tokens,
        "output_tokens": round(output_tok_s * duration_s),
        "output_tok_s": output_tok_s,
        "output_tok_s_per_gpu": tok_s_per_gpu,
        "request_per_s": num_requests / duration_s,
        "ttft_ms": distribution(ttft_ms, count=num_requests),
        "tpot_ms": distribution(20.0, count=num_requests),
        "e2e_ms": distribution(e2e_ms, count=num_requests),
        "step_gap_ms": distribution(40.0, count=num_requests),
        "server_generation_tokens": round(output_tok_s * duration_s),
        "spec_decode": spec,
        "per_category": per_category or {},
    }
    return CellSummary(**(fields | extra))


def category(al: float | None, steps: int, requests: int = 8) -> CategoryAcceptance:
    """Per-request-metrics acceptance of one category (step-weighted)."""
    return CategoryAcceptance(
        num_requests=requests,
        acceptance_length=al,
        acceptance_source="per_request_metrics" if al is not None else None,
        definition="step_weighted" if al is not None else None,
        draft_acceptance_rate=(al - 1) / 3 if al is not None else None,
        per_position_acceptance=None,
        num_spec_steps=steps if al is not None else None,
        output_tokens=requests * 100,
    )


def write_cell(root: Path, cell: CellSummary, slug: str | None = None) -> Path:
    """Write `cell` where the store would: <label>/<workload>/c<N>/r<N>/summary.json."""
    dataset_slug = slug or cell.workload
    directory = root / cell.label / dataset_slug / f"c{cell.concurrency}" / f"r{cell.repeat}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "summary.json"
    path.write_text(cell.model_dump_json(indent=2), encoding="utf-8")
    return path


def write_manifest(root: Path, baselines: Sequence[str], others: Sequence[str]) -> None:
    """A manifest marking which servers are the baseline."""
    servers = {name: {"baseline": True, "gpus": 8} for name in baselines}
    servers.update({name: {"baseline": False, "gpus": 8} for name in others})
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(
        json.dumps({"schema_version": 1, "servers": servers}), encoding="utf-8"
    )


def _qualitative_categories(coding_al: float, coding_steps: int) -> dict[str, CategoryAcceptance]:
    cats = {name: category(al, 100) for name, al in CARD_CATEGORY_AL.items()}
    cats["coding"] = category(coding_al, coding_steps)
    return cats


def _baseline_categories() -> dict[str, CategoryAcceptance]:
    return {name: category(None, 0) for name in CARD_CATEGORY_AL}


def write_campaign(root: Path) -> Path:
    """The campaign the table tests compute by hand (see the module docstring)."""
    write_manifest(root, ["baseline"], ["eagle3"])
    # Qualitative: concurrency 48 (two repeats: the card's serving table as the means), 1
    # and 2. (concurrency, repeat, tok/s per GPU, e2e ms, TTFT ms, spec_decode's drafts and
    # accepted per position, coding's AL and steps.)
    for concurrency, repeat, tok, e2e, ttft, (drafts, accepted), coding in [
        (48, 0, 415.0, 9670.0, 150.0, (1000, [800, 550, 350]), (3.30, 100)),
        (48, 1, 415.4, 9690.0, 158.0, (4000, [3300, 2400, 1600]), (3.40, 50)),
        (1, 0, 29.0, 5000.0, 40.0, (1000, [850, 600, 410]), (10 / 3, 30)),
        (2, 0, 55.0, 5200.0, 42.0, (1000, [800, 560, 450]), None),
    ]:
        write_cell(
            root,
            summary(
                label="eagle3", dataset=QUALITATIVE, concurrency=concurrency, repeat=repeat,
                tok_s_per_gpu=tok, e2e_ms=e2e, ttft_ms=ttft, spec=spec_decode(drafts, accepted),
                per_category=None if coding is None else _qualitative_categories(*coding),
            ),
        )  # fmt: skip
    for repeat, (tok, e2e, ttft) in enumerate([(281.5, 13140.0, 130.0), (281.9, 13160.0, 130.0)]):
        write_cell(
            root,
            summary(
                label="baseline", dataset=QUALITATIVE, concurrency=48, repeat=repeat,
                tok_s_per_gpu=tok, e2e_ms=e2e, ttft_ms=ttft,
                per_category=_baseline_categories(),
            ),
        )  # fmt: skip
    write_cell(
        root,
        summary(label="baseline", dataset=QUALITATIVE, concurrency=1, tok_s_per_gpu=16.0),
    )
    write_cell(
        root,
        summary(label="baseline", dataset=QUALITATIVE, concurrency=2, tok_s_per_gpu=32.0),
    )
    # Throughput splits at 48: one named on the hub, one from a local path (slug only).
    write_cell(
        root,
        summary(
            label="eagle3", dataset="speed-bench:throughput_1k", concurrency=48,
            spec=spec_decode(2000, [1500, 1100, 820]),
        ),
    )  # fmt: skip
    write_cell(
        root,
        summary(
            label="eagle3", dataset="/data/speed/eight/test.parquet", concurrency=48,
            spec=spec_decode(1000, [750, 550, 420]), workload="throughput_8k",
        ),
        slug="throughput_8k",
    )  # fmt: skip
    write_cell(
        root,
        summary(label="baseline", dataset="speed-bench:throughput_1k", concurrency=48),
    )
    return root


def write_suite_manifest(
    root: Path, suite: str, models: dict[str, str], baseline: str = "baseline"
) -> None:
    """A schema-2 manifest recording the suite's name and each server's model."""
    servers = {name: {"baseline": name == baseline, "model": m} for name, m in models.items()}
    root.mkdir(parents=True, exist_ok=True)
    manifest = {
        "schema_version": 2,
        "created_at": "2026-01-01T00:00:00Z",
        "specbench_version": "0",
        "python": "3.12",
        "suite": {"name": suite, "servers": servers},
        "servers": {name: {"baseline": name == baseline, "gpus": 8} for name in models},
    }
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def write_launch_cell(root: Path, cell: CellSummary) -> Path:
    """Write `cell` where a run of launches does: <label>/<workload>/c<N>/[l<L>/]r<N>/ (launch
    0 in the folder of results written before launches)."""
    launch = f"l{cell.launch}" if cell.launch else ""
    directory = root / cell.label / cell.workload / f"c{cell.concurrency}" / launch
    directory = directory / f"r{cell.repeat}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "summary.json"
    path.write_text(cell.model_dump_json(indent=2), encoding="utf-8")
    return path


#: tok/s/GPU per (config, launch, repeat) of `write_three_launches`: launch means baseline
#: 100, 102, 101 and eagle3 150, 156, 153 (each the mean of two repeats 1 apart).
THREE_LAUNCHES = {
    "baseline": ((99.5, 100.5), (101.5, 102.5), (100.5, 101.5)),
    "eagle3": ((149.5, 150.5), (155.5, 156.5), (152.5, 153.5)),
}


def write_three_launches(
    root: Path,
    *,
    launches: int = 3,
    suite: str = "launch-demo",
    model: str = "minimax-m3",
    concurrencies: Sequence[int] = (4,),
) -> Path:
    """A campaign of `launches` launches × 2 repeats of two configs at `concurrencies` (the
    same figures at each), each repeat with a stored bootstrap error of 1.0 tok/s/GPU and
    2.0 ms median TTFT."""
    from specbench.store.summary import CellErrors

    write_suite_manifest(root, suite, {"baseline": model, "eagle3": model})
    for label, per_launch in THREE_LAUNCHES.items():
        for launch, repeats in enumerate(per_launch[:launches]):
            for (repeat, tok), concurrency in product(enumerate(repeats), concurrencies):
                errors = CellErrors(
                    num_conversations=64,
                    resamples=400,
                    seed=0,
                    figures={"output_tok_s_per_gpu": 1.0, "ttft_ms_median": 2.0},
                )
                spec = spec_decode(1000, [800, 550, 350]) if label == "eagle3" else None
                cell = summary(
                    label=label,
                    dataset=QUALITATIVE,
                    concurrency=concurrency,
                    repeat=repeat,
                    tok_s_per_gpu=tok,
                    ttft_ms=100.0 + launch,
                    spec=spec,
                    model=model,
                    launch=launch,
                    standard_errors=errors,
                )
                write_launch_cell(root, cell)
    return root
