"""Measure the gate's false-alarm rate and power on emulator runs (docs/ci-gate.md).

For each pair i: a baseline run (emulator seed 1000 + i), a candidate differing only in
the seed (2000 + i) and a candidate whose conditional acceptance is 3% lower (each of the
K values × 0.97, same seed as the candidate). The baseline is saved with
`specbench baseline save`, both candidates are gated with default rules. One repeat each;
`--launches N` measures each run on N server launches (N ≥ 3 on both sides: the gate's
launch-level rule, docs/ci-gate.md).

    python tools/gate_noise_experiment.py OUT --pairs 20 --prompts 64 --max-tokens 256 \\
        --concurrency 8

Writes OUT/outcomes.jsonl (one line per gate run: pair, kind, exit code, regressed rows)
and prints the counts. Runs are sequential; every run's results stay under OUT.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

# The suite and dataset writers are the tests' own (tests/harness/); tests never import tools.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from harness import ACCEPTANCE, workload, write_prompt_suite

CLI = [str(Path(sys.executable).with_name("specbench"))]


def write_suite(folder: Path, prompts: int, max_tokens: int, concurrency: int) -> Path:
    return write_prompt_suite(
        folder,
        name="gate-noise",
        model="emu-gate-noise",
        prompts=prompts,
        label="Gate noise",
        id_format="n{:03d}",
        workloads=workload("data.jsonl", [concurrency], max_tokens),
    )


def specbench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *map(str, args)], capture_output=True, text=True, check=False, timeout=900
    )


def run(suite: Path, out: Path, seed: int, acceptance: tuple[float, ...], launches: int) -> None:
    if (out / "manifest.json").exists() and list(out.rglob("summary.json")):
        return
    result = specbench(
        "run",
        suite,
        "--output",
        out,
        "--server",
        "eagle3",
        "--set",
        f"target.emulator.seed={seed}",
        "--set",
        f"servers.eagle3.emulator.acceptance={list(acceptance)}",
        "--set",
        f"launches={launches}",
    )
    if result.returncode != 0:
        raise SystemExit(f"run {out} failed: {result.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--drop", type=float, default=0.03, help="Relative acceptance drop.")
    parser.add_argument("--launches", type=int, default=1, help="Server launches per run.")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    suite = write_suite(args.out, args.prompts, args.max_tokens, args.concurrency)
    lowered = tuple(round(p * (1 - args.drop), 6) for p in ACCEPTANCE)
    outcomes = args.out / "outcomes.jsonl"
    counts = {"same": [0, 0], "lowered": [0, 0]}
    for pair in range(args.pairs):
        started = time.monotonic()
        base = args.out / f"p{pair:02d}-baseline"
        run(suite, base, 1000 + pair, ACCEPTANCE, args.launches)
        baseline_json = args.out / f"p{pair:02d}-baseline.json"
        saved = specbench("baseline", "save", base, "--out", baseline_json)
        if saved.returncode != 0:
            raise SystemExit(saved.stderr)
        for kind, acceptance in (("same", ACCEPTANCE), ("lowered", lowered)):
            current = args.out / f"p{pair:02d}-{kind}"
            run(suite, current, 2000 + pair, acceptance, args.launches)
            junit = args.out / f"p{pair:02d}-{kind}.xml"
            gate = specbench("gate", current, "--baseline", baseline_json, "--junit", junit)
            # One `regression:` line per failing row on stdout (the count goes to stderr).
            regressed = [
                line.strip() for line in gate.stdout.splitlines() if line.startswith("regression:")
            ]
            counts[kind][0] += gate.returncode == 1
            counts[kind][1] += 1
            with outcomes.open("a") as handle:
                record = {
                    "pair": pair,
                    "kind": kind,
                    "exit_code": gate.returncode,
                    "regressed": regressed,
                    "baseline_warnings": [
                        line for line in saved.stderr.splitlines() if "warning" in line
                    ],
                }
                handle.write(json.dumps(record) + "\n")
            (args.out / f"p{pair:02d}-{kind}.gate.txt").write_text(gate.stdout + gate.stderr)
        print(
            f"pair {pair}: same-seed gates failing {counts['same'][0]}/{counts['same'][1]}, "
            f"lowered caught {counts['lowered'][0]}/{counts['lowered'][1]} "
            f"({time.monotonic() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
