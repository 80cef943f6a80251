"""Emulator suites for the tests (the fault cases too) and experiments: one writer of their TOML.

Every suite here runs `specbench emulate` servers: a `baseline` and an EAGLE3 `eagle3`
with conditional acceptance `ACCEPTANCE` (true AL 1 + 0.8 + 0.8·0.75 + 0.8·0.75·0.7 = 2.82),
plus any further servers a caller adds.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.cli import REPO, run_cli
from specbench.data.conversation import Conversation

#: 12 conversations, 14 turns (tests/fixtures/custom).
DATA = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"

#: The EAGLE3 server's conditional acceptance per draft position.
ACCEPTANCE = (0.8, 0.75, 0.7)
#: The categories of `write_prompts`' datasets, in the order prompts cycle through them.
CATEGORIES = ("coding", "math", "writing")
#: Equal prefill and decode steps of 10 ms: the emulator's clock, not a client sharing 2
#: cores, sets throughput and latency (tests/e2e/test_gate_emulator.py says why).
GATE_TIMINGS = "prefill_ms = 10.0, step_ms = 10.0, per_request_step_ms = 0.1, seed = 1"


def campaign_timings(step_ms: float = 1.0, seed: int = 3) -> str:
    """Fast emulator timings of the campaign tests: 2 ms prefill, `step_ms` per step."""
    return f"prefill_ms = 2.0, step_ms = {step_ms}, per_request_step_ms = 0.05, seed = {seed}"


def workload(
    dataset: str | Path,
    concurrency: Sequence[int],
    max_tokens: int,
    *,
    categories: Sequence[str] | None = None,
) -> str:
    """One `[[workloads]]` table with one warmup request."""
    chosen = "" if categories is None else f"categories = {json.dumps(list(categories))}\n"
    return f"""
[[workloads]]
dataset = "{dataset}"
{chosen}concurrency = {list(concurrency)}
max_tokens = {max_tokens}
warmup = 1
"""


def suite_toml(
    *,
    name: str,
    model: str,
    timings: str,
    workloads: str,
    repeats: int | None = 1,
    acceptance: Sequence[float] = ACCEPTANCE,
    target_extra: str = "",
    servers_extra: str = "",
) -> str:
    """A suite of a `baseline` and an `eagle3` emulator server (then `servers_extra`).

    `timings` is the target's `emulator` inline table without braces; `target_extra`,
    further lines of `[target]` (an `env` table); `workloads`, `workload()` tables;
    `repeats` None leaves the key out.
    """
    repeats_line = "" if repeats is None else f"repeats = {repeats}\n"
    return f"""
name = "{name}"
{repeats_line}
[target]
engine = "emulator"
model = "{model}"
emulator = {{ {timings} }}
{target_extra}

[servers.baseline]
baseline = true

[servers.eagle3]
speculative = {{ method = "eagle3", model = "draft", num_speculative_tokens = 3 }}
emulator = {{ acceptance = {list(acceptance)} }}
{servers_extra}{workloads}"""


def write_prompts(path: Path, prompts: int, label: str, id_format: str) -> None:
    """`prompts` one-turn conversations cycling through CATEGORIES, one JSON line each.

    Prompt i reads "{label} {category} question {i}: answer at length."; its question id
    is `id_format.format(i)`.
    """
    with path.open("w") as handle:
        for index in range(prompts):
            category = CATEGORIES[index % len(CATEGORIES)]
            text = f"{label} {category} question {index}: answer at length."
            row = {"category": category, "turns": [text], "question_id": id_format.format(index)}
            handle.write(json.dumps(row) + "\n")


def write_prompt_suite(
    folder: Path,
    *,
    name: str,
    model: str,
    prompts: int,
    label: str,
    id_format: str,
    workloads: str,
    repeats: int = 1,
) -> Path:
    """folder/data.jsonl (`write_prompts`) and folder/suite.toml at GATE_TIMINGS; the suite.

    `workloads` name the dataset "data.jsonl" (the suite's folder).
    """
    write_prompts(folder / "data.jsonl", prompts, label, id_format)
    suite = folder / "suite.toml"
    suite.write_text(
        suite_toml(
            name=name, model=model, timings=GATE_TIMINGS, workloads=workloads, repeats=repeats
        )
    )
    return suite


def write_conversations(path: Path, rows: Sequence[dict[str, Any]]) -> list[Conversation]:
    """`rows` (question_id, category, turns) as a JSONL dataset; the conversations they are."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return [
        Conversation(question_id=r["question_id"], category=r["category"], turns=r["turns"])
        for r in rows
    ]


def write_fixed_suite(
    folder: Path, *, name: str, dataset: Path, concurrency: Sequence[int], servers: str = ""
) -> Path:
    """folder/suite.toml: a `baseline` emulator of 5 ms steps (then the `servers` tables)
    and one workload, `fixed`, on `dataset` (64 tokens, one warmup request); its path.

    Its served model name is unique (`emu-` and a random hex)."""
    suite = folder / "suite.toml"
    suite.write_text(
        f"""
name = "{name}"
[target]
engine = "emulator"
model = "emu-{uuid.uuid4().hex[:10]}"
emulator = {{ prefill_ms = 5.0, step_ms = 5.0, per_request_step_ms = 0.1, seed = 1 }}
[servers.baseline]
baseline = true
{servers}[[workloads]]
name = "fixed"
dataset = "{dataset}"
concurrency = {list(concurrency)}
max_tokens = 64
warmup = 1
"""
    )
    return suite


def write_campaign_suite(
    folder: Path,
    *,
    step_ms: float = 1.0,
    concurrency: Sequence[int] = (1, 4),
    max_tokens: int = 32,
    env: str = "",
    datasets: Sequence[Path] = (DATA,),
    repeats: int | None = 1,
    servers_extra: str = "",
) -> tuple[Path, str]:
    """folder/suite.toml: baseline and eagle3 on DATA; (its path, its served model name).

    The served model name is unique (`emu-` and a random hex): it finds the run's servers
    among the processes (`harness.emulator.server_pids`). `env`: further `[target]` lines;
    `datasets`: one workload each; `repeats` None leaves the key out; `servers_extra`:
    tables after the servers'.
    """
    tag = f"emu-{uuid.uuid4().hex[:10]}"
    suite = folder / "suite.toml"
    suite.write_text(
        suite_toml(
            name=tag,
            model=tag,
            timings=campaign_timings(step_ms),
            target_extra=env,
            workloads="".join(workload(path, concurrency, max_tokens) for path in datasets),
            repeats=repeats,
            servers_extra=servers_extra,
        )
    )
    return suite, tag


def run_suite(suite: Path, out: Path, *overrides: str) -> Path:
    """Run the eagle3 server of the suite into `out` (the non-speculative one is not gated)."""
    sets = [arg for override in overrides for arg in ("--set", override)]
    result = run_cli("run", suite, "--output", out, "--server", "eagle3", *sets)
    assert result.returncode == 0, result.stderr
    return out


def bench_argv(
    endpoint: str, output: Path, *extra: str | Path, dataset: str | Path = DATA
) -> list[str | Path]:
    """`specbench bench` arguments: `dataset` (DATA) against `endpoint` into `output`, then
    `extra` options."""
    return ["bench", "--endpoint", endpoint, "--dataset", dataset, "--output", output, *extra]
