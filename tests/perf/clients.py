"""The two clients under comparison, run as separate processes on the same prompts.

specbench runs as `specbench bench` (completions API, `--ignore-eos`); `vllm bench serve`
from the vLLM CPU venv runs with `--backend openai` on a ShareGPT-format file holding the
same prompts (vLLM's `custom` JSONL dataset needs pandas, which the CPU venv lacks; its
ShareGPT loader needs nothing extra, sends the first turn verbatim and takes the output
length from `--sharegpt-output-len`). Both send one warm-up request before the window.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from procs import run_client

REPO = Path(__file__).resolve().parents[2]
SPECBENCH = REPO / ".venv" / "bin" / "specbench"
VLLM = REPO / ".venv-vllm" / "bin" / "vllm"
_WORDS = [
    "speculative",
    "decoding",
    "drafts",
    "tokens",
    "that",
    "the",
    "target",
    "model",
    "verifies",
    "in",
    "one",
    "step",
    "acceptance",
    "length",
    "measures",
    "how",
    "many",
    "tokens",
    "each",
    "step",
    "emits",
    "on",
    "average",
]


def make_prompts(count: int) -> list[str]:
    """Deterministic prompts of 12 to 40 words (well inside any tokenizer's limits)."""
    prompts = []
    for index in range(count):
        length = 12 + (index * 7) % 29
        words = [_WORDS[(index * 3 + k * 5) % len(_WORDS)] for k in range(length)]
        prompts.append(f"Question {index}: " + " ".join(words) + ". Answer briefly.")
    return prompts


def write_datasets(prompts: list[str], folder: Path) -> tuple[Path, Path]:
    """The same prompts as specbench custom JSONL and as a ShareGPT JSON for vLLM."""
    folder.mkdir(parents=True, exist_ok=True)
    specbench_path = folder / "prompts.jsonl"
    with specbench_path.open("w") as handle:
        for index, prompt in enumerate(prompts):
            row = {"question_id": f"p{index:04d}", "category": "bench", "turns": [prompt]}
            handle.write(json.dumps(row) + "\n")
    sharegpt_path = folder / "prompts.sharegpt.json"
    rows = [
        {
            "id": f"p{index:04d}",
            "conversations": [
                {"from": "human", "value": prompt},
                # Only the length of this turn would matter, and --sharegpt-output-len wins.
                {"from": "gpt", "value": "placeholder answer"},
            ],
        }
        for index, prompt in enumerate(prompts)
    ]
    sharegpt_path.write_text(json.dumps(rows))
    return specbench_path, sharegpt_path


@dataclass(frozen=True)
class Workload:
    endpoint: str
    model: str
    tokenizer: Path
    concurrency: int
    num_prompts: int
    max_tokens: int
    specbench_dataset: Path
    sharegpt_dataset: Path


@dataclass(frozen=True)
class ClientResult:
    """One client run: its headline figures, its process CPU and wall time, raw result."""

    output_tok_s: float
    median_ttft_ms: float
    median_e2e_ms: float
    acceptance_length: float | None
    cpu_s: float
    wall_s: float
    raw: dict[str, Any]


def specbench_argv(work: Workload, folder: Path, warmup: int = 1) -> list[str]:
    shutil.rmtree(folder, ignore_errors=True)
    return [
        str(SPECBENCH), "bench",
        "--endpoint", work.endpoint,
        "--dataset", str(work.specbench_dataset),
        "--output", str(folder),
        "--model", work.model,
        "--concurrency", str(work.concurrency),
        "--num-prompts", str(work.num_prompts),
        "--max-tokens", str(work.max_tokens),
        "--api", "completions",
        "--ignore-eos",
        "--warmup", str(warmup),
        "--no-save-outputs",
        "--force",
    ]  # fmt: skip


def run_specbench(
    work: Workload, folder: Path, *, core: int | None, warmup: int = 1
) -> ClientResult:
    argv = specbench_argv(work, folder, warmup)
    cpu, wall = run_client(argv, folder.with_suffix(".log"), core=core)
    summary_path = next(folder.rglob("summary.json"))
    summary = json.loads(summary_path.read_text())
    if summary["num_failed"]:
        raise RuntimeError(f"specbench: {summary['num_failed']} failed requests in {folder}")
    spec = summary.get("spec_decode")
    return ClientResult(
        output_tok_s=summary["output_tok_s"],
        median_ttft_ms=summary["ttft_ms"]["median"],
        median_e2e_ms=summary["e2e_ms"]["median"],
        acceptance_length=spec["acceptance_length"] if spec else None,
        cpu_s=cpu,
        wall_s=wall,
        raw={**summary, "cell_dir": str(summary_path.parent)},
    )


def vllm_argv(work: Workload, folder: Path, warmup: int = 1) -> list[str]:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return [
        str(VLLM), "bench", "serve",
        "--backend", "openai",
        "--base-url", work.endpoint,
        "--endpoint", "/v1/completions",
        "--model", work.model,
        "--tokenizer", str(work.tokenizer),
        "--dataset-name", "sharegpt",
        "--dataset-path", str(work.sharegpt_dataset),
        "--sharegpt-output-len", str(work.max_tokens),
        "--num-prompts", str(work.num_prompts),
        "--max-concurrency", str(work.concurrency),
        "--ignore-eos",
        "--temperature", "0",
        "--num-warmups", str(warmup),
        "--percentile-metrics", "ttft,tpot,itl,e2el",
        "--save-result",
        "--result-dir", str(folder),
        "--result-filename", "result.json",
    ]  # fmt: skip


def run_vllm_bench(
    work: Workload, folder: Path, *, core: int | None, warmup: int = 1
) -> ClientResult:
    argv = vllm_argv(work, folder, warmup)
    cpu, wall = run_client(argv, folder / "client.log", core=core)
    result = json.loads((folder / "result.json").read_text())
    if result["failed"]:
        raise RuntimeError(f"vllm bench serve: {result['failed']} failed requests in {folder}")
    return ClientResult(
        output_tok_s=result["output_throughput"],
        median_ttft_ms=result["median_ttft_ms"],
        median_e2e_ms=result["median_e2el_ms"],
        acceptance_length=result.get("spec_decode_acceptance_length"),
        cpu_s=cpu,
        wall_s=wall,
        raw=result,
    )
