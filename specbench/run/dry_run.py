"""What `run --dry-run` prints: the cells the filters select, which are complete, the GPUs
the vLLM servers start on (one line: what the vendor's tool lists, or that none answered and
--gpus-unchecked starts them anyway), each server to start with its exact command (from the
function the launch uses) and the flags left out of it and why, attached servers as attached
with what they answered, each K sweep with its servers, and each K schedule with its ranges
(and the advice an "advised" one came from). Everything shown passed preflight.
"""

from __future__ import annotations

from pathlib import Path

from specbench.launch import ServerConfig
from specbench.run.plan import Plan, RunOptions
from specbench.run.preflight import Checked, ServerAnswer, preflight
from specbench.run.resume import check_resume
from specbench.store.manifest import read_manifest
from specbench.suite import Cell, describe_schedules, describe_sweeps


def check_dry_run(plan: Plan, options: RunOptions, *, accept_server_values: bool) -> Checked:
    """What `run` would refuse, refused the same way: the preflight, then a changed measured
    field of results already in `--output` (`check_resume`, as the journal does at start)."""
    checked = preflight(plan, options, accept_server_values=accept_server_values)
    check_resume(read_manifest(options.output), checked.plan, options.output, force=options.force)
    return checked


def describe_dry_run(checked: Checked, output: Path, *, force: bool = False) -> str:
    """One fact per line; commands with their environment, secrets redacted."""
    plan = checked.plan
    cells = plan.cells
    complete = [c for c in cells if c in checked.complete]
    total = len(plan.suite.expand()) if plan.suite is not None else len(cells)
    name = plan.suite.name if plan.suite is not None else plan.command
    source = f" ({plan.suite.source})" if plan.suite is not None and plan.suite.source else ""
    measured = len(cells) if force else len(cells) - len(complete)
    lines = [
        f"suite {name}{source}: {len(cells)} of its {total} cells selected; "
        f"{len(complete)} already complete in {output}"
        + (" (measured again: --force)" if force and complete else "")
        + f"; {measured} to measure",
    ]
    checks = dict.fromkeys(
        launch.command.gpu_check for launch in checked.launches if launch.command.gpu_check
    )
    lines += [f"GPUs: {check}" for check in checks]
    lines.append("servers:")
    for server_name in dict.fromkeys(c.server for c in cells):
        server = plan.servers[server_name]
        count = sum(1 for c in cells if c.server == server_name)
        if server.attached:
            answer = checked.attached.get(server_name)
            lines.append(
                f"  {server_name} [attached at {server.endpoint}, {count} cells]: "
                + (_answered(answer) if answer else "not asked (every cell is complete)")
            )
            for field, (ours, theirs) in checked.accepted.get(server_name, {}).items():
                lines.append(
                    f"    {field}: the server's {theirs!r} recorded, not the suite's {ours!r}"
                )
            continue
        launches = [launch for launch in checked.launches if launch.server == server_name]
        config = server.config
        role = _role(config) if config is not None else ""
        starts = f", {len(launches)} starts" if plan.launches > 1 else ""
        unchecked = (
            " unchecked" if any(launch.command.gpus_unchecked for launch in launches) else ""
        )
        lines.append(
            f"  {server_name} [{role}{server.gpus} GPU(s){unchecked}, {count} cells{starts}]"
        )
        if not launches:
            lines.append("    not started: every cell is complete")
        for launch in launches:
            lines.append(f"    {launch.command.shown()}")
            if len(launches) > 1:
                which = f"launch {launch.launch + 1}/{plan.launches}, " if plan.launches > 1 else ""
                lines.append(f"      ({which}for {len(launch.cells)} cells)")
            for note in launch.command.notes:
                lines.append(f"      note: {note}")
    if plan.suite is not None:
        lines.extend(describe_sweeps(plan.suite))
        lines.extend(describe_schedules(plan.suite))
    lines.append("workloads (results folder: dataset, conversations):")
    for index in sorted({c.workload_index for c in cells}):
        workload = plan.workloads[index]
        loaded = checked.workloads.get(index)
        rows = f"{len(loaded.conversations)} conversations" if loaded else "not loaded (complete)"
        lines.append(f"  {plan.keys[index]}: {workload.dataset} ({rows})")
    lines.append(
        "cells (server/workload/concurrency/launch/repeat):"
        if plan.launches > 1
        else "cells (server/workload/concurrency/repeat):"
    )
    short = _under_loaded(checked)
    lines.extend(
        f"  {c.key}"
        + (" (complete)" if c in checked.complete else "")
        + (f" (under-loaded: {short[c]} conversations)" if c in short else "")
        for c in cells
    )
    if short:
        lines.append(
            f"under-loaded: {len(short)} cells ask for more requests in flight than their "
            "workload has conversations, so the server never holds their concurrency; the "
            "report marks them \u2020 wherever they appear (more conversations, or a lower "
            "concurrency, measure the load they name)"
        )
    return "\n".join(lines)


def _under_loaded(checked: Checked) -> dict[Cell, int]:
    """Cells whose concurrency exceeds their loaded workload's conversations → that count.
    (A precision cell's floor cannot under-load it: a closed loop dispatches `concurrency`
    conversations at once, so it measures at least that many.)"""
    found = {}
    for cell in checked.plan.cells:
        loaded = checked.workloads.get(cell.workload_index)
        if loaded is not None and cell.concurrency > len(loaded.conversations):
            found[cell] = len(loaded.conversations)
    return found


def _role(config: ServerConfig) -> str:
    if config.baseline:
        return f"{config.engine}, baseline, "
    if config.speculative is not None:
        return f"{config.engine}, speculative {config.speculative.method}, "
    return f"{config.engine}, no speculation, "


def _answered(answer: ServerAnswer) -> str:
    facts = [f"serves {answer.model!r}"]
    if answer.speculative:
        k = answer.num_speculative_tokens
        facts.append("speculative" + (f", K = {k}" if k is not None else ""))
    else:
        facts.append("no speculation")
    if answer.vllm_version:
        facts.append(f"vLLM {answer.vllm_version}")
    return ", ".join(facts)
