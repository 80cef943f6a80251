"""The three measurements of `make bench`: agreement, fidelity and client overhead.

Servers are pinned to core 1 and clients to core 0 (when the machine has two cores), so a
client's CPU cost cannot slow the server it measures and vice versa. Every server runs
in its own process group and is stopped in a `finally`.
"""

from __future__ import annotations

import contextlib
import math
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from clients import (
    REPO,
    SPECBENCH,
    VLLM,
    ClientResult,
    Workload,
    make_prompts,
    run_specbench,
    run_vllm_bench,
    specbench_argv,
    vllm_argv,
    write_datasets,
)
from procs import start, stop, wait_ready, watch_client

CLIENT_CORE = 0
SERVER_CORE = 1
TINY_MODELS = REPO / ".cache" / "tiny-models"
TOKENIZER = TINY_MODELS / "target"
EMULATOR_MODEL = "specbench-emulator"
ACCEPTANCE = (0.8, 0.75, 0.7)  # the emulator's default conditional acceptance
VLLM_ENV = {
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "HF_HUB_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    # vLLM's CPU backend binds its OpenMP threads itself; keep them on the server core.
    "VLLM_CPU_OMP_THREADS_BIND": str(SERVER_CORE),
}
NGRAM = '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4,"prompt_lookup_min":1}'
Runner = Callable[..., ClientResult]
CLIENTS: dict[str, Runner] = {"specbench": run_specbench, "vllm_bench": run_vllm_bench}


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def server(
    argv: Callable[[int], list[str]], ready: str, log_path: Path, *, timeout_s: float = 180.0
) -> Iterator[str]:
    """Start a server on a free port (pinned to the server core); yield its base URL."""
    port = free_port()
    process = start(argv(port), log_path, core=SERVER_CORE, env=VLLM_ENV)
    try:
        base_url = f"http://127.0.0.1:{port}"
        wait_ready(base_url + ready, process, log_path, timeout_s)
        yield base_url
    finally:
        stop(process)


def emulator(prefill_ms: float, step_ms: float, per_request_step_ms: float, seed: int = 0):  # type: ignore[no-untyped-def]
    def argv(port: int) -> list[str]:
        return [
            str(SPECBENCH), "emulate", "--port", str(port),
            "--prefill-ms", str(prefill_ms), "--step-ms", str(step_ms),
            "--per-request-step-ms", str(per_request_step_ms), "--seed", str(seed),
        ]  # fmt: skip

    return argv


def tiny_vllm(port: int) -> list[str]:
    return [
        str(VLLM), "serve", str(TOKENIZER), "--port", str(port), "--served-model-name", "tiny",
        "--max-model-len", "2048", "--dtype", "float32", "--enforce-eager",
        "--speculative-config", NGRAM,
    ]  # fmt: skip


def blast(step_ms: float):  # type: ignore[no-untyped-def]
    script = Path(__file__).with_name("blast_server.py")

    def argv(port: int) -> list[str]:
        return [sys.executable, str(script), "--port", str(port), "--step-ms", str(step_ms)]

    return argv


# -- agreement --------------------------------------------------------------------------

AGREEMENT_FIGURES = ("output_tok_s", "median_ttft_ms", "median_e2e_ms", "acceptance_length")


def agreement(
    base_url: str, model: str, folder: Path, *, concurrency: int, num_prompts: int,
    max_tokens: int, rounds: int, server_warmup: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Both clients, interleaved (the first alternates per round), on the same server.

    `server_warmup` runs the workload once, unmeasured, first: a fresh vLLM's first
    hundreds of requests are slower than the rest, which would favour the second client.
    """
    specbench_data, sharegpt_data = write_datasets(make_prompts(num_prompts), folder / "data")
    work = Workload(
        base_url, model, TOKENIZER, concurrency, num_prompts, max_tokens,
        specbench_data, sharegpt_data,
    )  # fmt: skip
    if server_warmup:
        log(f"agreement {folder.name}: server warm-up (not measured)")
        run_specbench(work, folder / "server-warmup", core=CLIENT_CORE)
    runs: dict[str, list[ClientResult]] = {name: [] for name in CLIENTS}
    for round_index in range(rounds):
        order = list(CLIENTS) if round_index % 2 == 0 else list(reversed(CLIENTS))
        for name in order:
            log(f"agreement {folder.name}: {name} round {round_index + 1}/{rounds}")
            result = CLIENTS[name](work, folder / f"{name}-r{round_index}", core=CLIENT_CORE)
            runs[name].append(result)
    figures: dict[str, Any] = {}
    for figure in AGREEMENT_FIGURES:
        values = {name: [getattr(run, figure) for run in runs[name]] for name in CLIENTS}
        if any(value is None for series in values.values() for value in series):
            figures[figure] = None
            continue
        means = {name: fmean(series) for name, series in values.items()}
        figures[figure] = {
            **{name: means[name] for name in CLIENTS},
            "ratio": means["specbench"] / means["vllm_bench"],
            "runs": values,
        }
    return {
        "concurrency": concurrency,
        "num_prompts": num_prompts,
        "max_tokens": max_tokens,
        "rounds": rounds,
        "server_warmup": server_warmup,
        "figures": figures,
    }


# -- fidelity ---------------------------------------------------------------------------


def acceptance_moments(conditional: Sequence[float]) -> tuple[float, float]:
    """Mean (= AL) and standard deviation of tokens emitted per verification step."""
    survive, probabilities = 1.0, []  # probabilities[k]: exactly k drafts accepted
    for probability in conditional:
        probabilities.append(survive * (1 - probability))
        survive *= probability
    probabilities.append(survive)
    mean = sum((k + 1) * p for k, p in enumerate(probabilities))
    second = sum((k + 1) ** 2 * p for k, p in enumerate(probabilities))
    return mean, math.sqrt(second - mean * mean)


def _histogram_mean_ms(cell: Path, name: str) -> float | None:
    """The server's own mean of a histogram over the cell's window (Δsum / Δcount), in ms."""
    from specbench.metrics.prometheus import parse_metrics

    before = parse_metrics((cell / "metrics_before.prom").read_text())
    after = parse_metrics((cell / "metrics_after.prom").read_text())
    count = (after.get(f"{name}_count") or 0) - (before.get(f"{name}_count") or 0)
    total = (after.get(f"{name}_sum") or 0) - (before.get(f"{name}_sum") or 0)
    return total / count * 1000 if count else None


def fidelity_level(
    folder: Path, *, concurrency: int, prefill_ms: float, step_ms: float, num_prompts: int,
    max_tokens: int,
) -> dict[str, Any]:  # fmt: skip
    """specbench against an emulator whose prefill, step time and acceptance are known."""
    specbench_data, sharegpt_data = write_datasets(make_prompts(num_prompts), folder / "data")
    with server(emulator(prefill_ms, step_ms, 0.0, seed=concurrency), "/health",
                folder / "emulator.log") as url:  # fmt: skip
        work = Workload(
            url, EMULATOR_MODEL, TOKENIZER, concurrency, num_prompts, max_tokens,
            specbench_data, sharegpt_data,
        )  # fmt: skip
        log(f"fidelity c={concurrency}: prefill {prefill_ms} ms, step {step_ms} ms")
        result = run_specbench(work, folder / "specbench", core=CLIENT_CORE)
    summary = result.raw
    cell = Path(summary["cell_dir"])
    al_truth, al_sd = acceptance_moments(ACCEPTANCE)
    spec = summary["spec_decode"]
    drafts = spec["num_drafts"]
    server_ttft = _histogram_mean_ms(cell, "vllm:time_to_first_token_seconds")
    server_step = _histogram_mean_ms(cell, "vllm:inter_token_latency_seconds")
    ttft, gaps = summary["ttft_ms"], summary["step_gap_ms"]
    return {
        "concurrency": concurrency,
        "num_prompts": num_prompts,
        "max_tokens": max_tokens,
        "configured": {"prefill_ms": prefill_ms, "step_ms": step_ms, "acceptance_length": al_truth},
        "ttft_ms": {
            "median": ttft["median"],
            "mean": ttft["mean"],
            "server_mean": server_ttft,
            # A TTFT equal to the prefill time is configured only when nothing else runs.
            "error_vs_configured_ms": ttft["median"] - prefill_ms if concurrency == 1 else None,
            "error_vs_server_ms": ttft["mean"] - server_ttft if server_ttft else None,
        },
        "step_ms": {
            "median": gaps["median"],
            "mean": gaps["mean"],
            "server_mean": server_step,
            "error_vs_configured_ms": gaps["median"] - step_ms,
            "error_vs_server_ms": gaps["mean"] - server_step if server_step else None,
        },
        "acceptance_length": {
            "measured": spec["acceptance_length"],
            "per_request_metrics": summary["per_category"]["bench"]["acceptance_length"],
            "configured": al_truth,
            "relative_error": spec["acceptance_length"] / al_truth - 1,
            "num_drafts": drafts,
            # Half-width of the 95% interval of the emulator's own random draws.
            "sampling_95_relative": 1.96 * al_sd / math.sqrt(drafts) / al_truth,
        },
    }


# -- overhead ---------------------------------------------------------------------------


def overhead(
    folder: Path, *, concurrency: int, step_ms: float, max_tokens: int, waves: int
) -> dict[str, Any]:
    """CPU per chunk and chunk rate of each client on one core, against the blast server.

    CPU time is read from /proc at the edges of the streaming window (see `watch_client`),
    so start-up, imports, prompt loading and the final report do not count.
    """
    num_prompts = concurrency * waves
    specbench_data, sharegpt_data = write_datasets(make_prompts(num_prompts), folder / "data")
    out: dict[str, Any] = {"concurrency": concurrency, "server_step_ms": step_ms,
                           "max_tokens": max_tokens, "requests": num_prompts}  # fmt: skip
    with server(blast(step_ms), "/v1/models", folder / "blast.log") as url:
        work = Workload(
            url, "blast", TOKENIZER, concurrency, num_prompts, max_tokens,
            specbench_data, sharegpt_data,
        )  # fmt: skip
        for name, argv in (("specbench", specbench_argv), ("vllm_bench", vllm_argv)):
            log(f"overhead c={concurrency} step {step_ms:g} ms: {name}, {num_prompts} requests")
            target = folder / name
            out[name] = watch_client(
                argv(work, target, 1), folder / f"{name}.log", core=CLIENT_CORE,
                stats_url=url + "/stats", expected_requests=num_prompts + 1,
            )  # fmt: skip
    out["cpu_ratio"] = out["specbench"]["cpu_us_per_chunk"] / out["vllm_bench"]["cpu_us_per_chunk"]
    return out


def ttft_floor(folder: Path, *, num_prompts: int = 100) -> dict[str, Any]:
    """specbench's TTFT at concurrency 1 against a server that answers at once.

    What the client, its HTTP stack and loopback add to a TTFT, with next to nothing on
    the server side: the share of the fidelity error at c=1 that the client accounts for.
    """
    specbench_data, sharegpt_data = write_datasets(make_prompts(num_prompts), folder / "data")
    with server(blast(0.0), "/v1/models", folder / "blast.log") as url:
        work = Workload(url, "blast", TOKENIZER, 1, num_prompts, 4, specbench_data, sharegpt_data)
        log("TTFT floor: specbench at c=1 against the blast server")
        result = run_specbench(work, folder / "specbench", core=CLIENT_CORE, warmup=2)
    ttft = result.raw["ttft_ms"]
    return {"num_prompts": num_prompts, "median_ms": ttft["median"], "p90_ms": ttft["p90"]}
