"""Export cells in the shape of `vllm bench serve --save-result` JSON files.

Key names and units follow vLLM 0.32's `vllm/benchmarks/serve.py` exactly, so tools that
read its saved results read these: times in ms except `duration` (s), `output_throughput`
in tok/s for the whole server (not per GPU), and `spec_decode_acceptance_rate` in
PERCENT (vLLM multiplies by 100; specbench stores fractions everywhere else). The
spec-decode keys are absent when speculation was off, as in vLLM.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from specbench.common.naming import slug
from specbench.results.loading import LoadedCell
from specbench.store.files import write_atomic
from specbench.store.summary import CellSummary


def vllm_bench_result(summary: CellSummary) -> dict[str, Any]:
    """One cell as vLLM's saved benchmark result."""
    completed = summary.num_requests - summary.num_failed
    result: dict[str, Any] = {
        "label": summary.label,
        "model_id": summary.model,
        "backend": "openai-chat" if summary.api == "chat" else "openai",
        "date": summary.started_at,
        "num_prompts": summary.num_requests,
        "max_concurrency": summary.concurrency,
        "duration": summary.duration_s,
        "completed": completed,
        "failed": summary.num_failed,
        "total_input_tokens": summary.input_tokens,
        "total_output_tokens": summary.output_tokens,
        "request_throughput": summary.request_per_s,
        "output_throughput": summary.output_tok_s,
        "total_token_throughput": (
            (summary.input_tokens + summary.output_tokens) / summary.duration_s
            if summary.duration_s > 0
            else 0.0
        ),
    }
    for ours, theirs in (("ttft_ms", "ttft"), ("tpot_ms", "tpot"), ("e2e_ms", "e2el")):
        distribution = getattr(summary, ours)
        result[f"mean_{theirs}_ms"] = distribution.mean
        result[f"median_{theirs}_ms"] = distribution.median
        result[f"p90_{theirs}_ms"] = distribution.p90
        result[f"p99_{theirs}_ms"] = distribution.p99
    spec = summary.spec_decode
    if spec is not None:
        result["spec_decode_acceptance_rate"] = spec.draft_acceptance_rate * 100.0
        result["spec_decode_acceptance_length"] = spec.acceptance_length
        result["spec_decode_num_drafts"] = spec.num_drafts
        result["spec_decode_draft_tokens"] = spec.num_draft_tokens
        result["spec_decode_accepted_tokens"] = spec.num_accepted_tokens
        result["spec_decode_per_position_acceptance_rates"] = list(spec.per_position_acceptance)
    return result


def write_vllm_bench(cells: Sequence[LoadedCell], out_dir: Path) -> list[Path]:
    """`out_dir/<label>__<dataset>__c<N>__r<N>.json` for every cell (`__c<N>__l<L>__r<N>` on
    launch L ≥ 1); the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for cell in cells:
        s = cell.summary
        # The workload key is the store's own folder name: short and filesystem-safe.
        folder = s.workload
        launch = f"__l{s.launch}" if s.launch else ""
        name = f"{slug(cell.label)}__{folder}__c{s.concurrency}{launch}__r{s.repeat}.json"
        if s.category is not None:
            name = name.replace(f"__c{s.concurrency}", f"__{slug(s.category)}__c{s.concurrency}")
        path = out_dir / name
        write_atomic(path, json.dumps(vllm_bench_result(s), indent=2) + "\n")
        written.append(path)
    return written
