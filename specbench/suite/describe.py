"""`specbench run SUITE --dry-run`: the matrix, each server's command, each K sweep and each
K schedule, as text."""

from __future__ import annotations

import json
from collections import Counter

from specbench.launch.argv import build_argv, render_command
from specbench.launch.config import ServerConfig
from specbench.launch.provenance import redact_argv, redact_env
from specbench.suite.model import Suite, workload_keys


def server_command(config: ServerConfig, vllm_executable: str = "vllm") -> str:
    """The shell line that starts `config` (host and port are added at launch)."""
    argv = build_argv(config, vllm_executable=vllm_executable)
    return render_command(redact_argv(argv), redact_env(config.env))


def describe_sweeps(suite: Suite) -> list[str]:
    """One line per K sweep: the server written, its servers and their Ks, and the baseline
    they are measured against (K = 0, speculation off)."""
    lines = []
    for swept, names in suite.k_sweeps.items():
        ks = [
            str(config.speculative.num_speculative_tokens)
            for config in (suite.servers[name] for name in names)
            if config.speculative is not None
        ]
        lines.append(
            f"K sweep: {swept} \u2192 {', '.join(names)} (K = {', '.join(ks)}) against "
            f"{suite.baseline} (K = 0)"
        )
    return lines


def describe_schedules(suite: Suite) -> list[str]:
    """One line per server that runs a K schedule: its ranges, its maximum K, and the advice
    file an "advised" one was read from."""
    lines = []
    for name, config in suite.servers.items():
        schedule = config.k_schedule
        if schedule is None or config.speculative is None:
            continue
        ranges = json.dumps(schedule, separators=(",", ":"))
        advice = suite.advised_schedules.get(name)
        lines.append(
            f"K schedule: {name} runs {ranges} (batch size [start, end, K]), K at most "
            f"{config.speculative.num_speculative_tokens}"
            + (f", advised from {advice}" if advice else "")
        )
    return lines


def describe_suite(suite: Suite, vllm_executable: str = "vllm") -> str:
    """Servers with their commands, workloads, and the cell count, one fact per line."""
    cells = suite.expand()
    per_server = Counter(cell.server for cell in cells)
    lines = [
        f"suite {suite.name}: {len(cells)} cells" + (f" ({suite.source})" if suite.source else "")
    ]
    lines.append("servers:")
    for name, config in suite.servers.items():
        role = (
            "baseline"
            if config.baseline
            else (
                f"speculative {config.speculative.method}"
                if config.speculative
                else "no speculation"
            )
        )
        lines.append(
            f"  {name} [{config.engine}, {role}, {suite.gpus_for(name)} GPU(s), "
            f"{per_server[name]} cells]"
        )
        lengths = sorted(
            {cell.max_model_len for cell in cells if cell.server == name and cell.max_model_len}
        )
        lines.append(f"    {server_command(config, vllm_executable)}")
        for length in lengths:
            if length != config.max_model_len:
                lines.append(f"    (relaunched with --max-model-len {length} for some workloads)")
    lines.extend(describe_sweeps(suite))
    lines.extend(describe_schedules(suite))
    lines.append("workloads (results folder: definition):")
    keys = workload_keys(suite.workloads)
    for index, workload in enumerate(suite.workloads):
        selection = ""
        if workload.categories is not None:
            selection = f" categories={','.join(workload.categories)}"
        elif workload.entropy_tiers is not None:
            selection = f" entropy_tiers={','.join(workload.entropy_tiers)}"
        extras = [
            f"num_prompts={workload.num_prompts if workload.num_prompts is not None else 'all'}",
            f"concurrency={','.join(str(value) for value in workload.concurrency)}",
            f"max_tokens={workload.max_tokens}",
            f"temperature={workload.temperature:g}",
            f"warmup={workload.warmup}",
            f"repeats={suite.repeats_of(index)}",
        ]
        if workload.max_model_len is not None:
            extras.append(f"max_model_len={workload.max_model_len}")
        if workload.api != "chat" or workload.client != "aiohttp":
            extras.append(f"api={workload.api} client={workload.client}")
        lines.append(f"  {keys[index]}: {workload.dataset}{selection} {' '.join(extras)}")
    lines.append("cells (server/workload/concurrency/repeat):")
    lines.extend(f"  {cell.key}" for cell in cells)
    return "\n".join(lines)
