"""`run --dry-run --pilot` end to end on the emulator: a pilot measured apart, then the
same estimate (again from `specbench estimate --pilot` and `--from` the pilot); and, alone
on the machine, the full suite against that estimate and a dry run priced from the
campaign's own cells.

The dataset gives every turn a fixed answer length per category (the emulator's
output-length marker), so the pilot's cells have known contents: the first N
conversations of the stratified order, every answer of its category's length.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from harness import run_cli, write_conversations, write_fixed_suite

from specbench.data.conversation import Conversation
from specbench.measure.precision import stratified_order

#: Category → answer tokens per turn (varying by category, as on the card's suite).
ANSWERS = {"chat": 8, "code": 16, "math": 24}
PER_CATEGORY = 60
CONCURRENCY = (1, 4, 16)
#: The bound the full run holds the estimate to (the test prints the real ratio). The
#: comparison runs alone (`quiet`): among the xdist workers the pilot and the full run saw
#: different loads, and a fresh-clone CI run (3d2b081) measured a ratio of 1.66 there (the
#: pilot 27.1 s, 13.5 s alone; the full run 49.9 server-s, 41.7 alone: 1.10). Alone, three
#: runs of this test measured 1.12, 1.03 and 1.10 (the steady-state rate of a 32-48
#: conversation pilot cell is a little slower than a 180 conversation cell's).
TOLERANCE = 0.3
#: The full run's concurrencies (its c = 1 cells alone would take 30 s of the quiet run).
QUIET_CONCURRENCY = (4, 16)


def write_dataset(path: Path) -> list[Conversation]:
    rows = []
    for category, tokens in ANSWERS.items():
        for index in range(PER_CATEGORY):
            turns = [f"{category} question {index} <|emulator_output_tokens={tokens}|>"]
            if index % 4 == 0:  # a quarter two-turn, as on the card's suite
                turns.append(f"{category} follow-up {index} <|emulator_output_tokens={tokens}|>")
            rows.append(
                {"question_id": f"{category}-{index:02d}", "category": category, "turns": turns}
            )
    return write_conversations(path, rows)


def write_suite(tmp_path: Path, dataset: Path, concurrency=CONCURRENCY) -> Path:
    speculative = """[servers.speculative]
speculative = { method = "eagle3", model = "emulated-draft", num_speculative_tokens = 3 }
emulator = { acceptance = [0.8, 0.7, 0.6] }
"""
    return write_fixed_suite(
        tmp_path, name="pilot-emu", dataset=dataset, concurrency=concurrency, servers=speculative
    )


def total_s(stdout: str) -> float:
    match = re.search(r"^  total: ([0-9.]+) s, ([0-9.]+) GPU-h$", stdout, re.MULTILINE)
    assert match, stdout
    return float(match[1])


def summaries(root: Path) -> dict[str, dict]:
    return {
        str(p.parent.relative_to(root)): json.loads(p.read_text())
        for p in sorted(root.rglob("summary.json"))
    }


def test_a_pilot_prices_the_suite_apart_from_its_results(tmp_path):
    conversations = write_dataset(tmp_path / "data.jsonl")
    suite = write_suite(tmp_path, tmp_path / "data.jsonl")
    out = tmp_path / "results" / "pilot-emu"
    pilot_dir = tmp_path / "results" / "pilot-emu.pilot"

    dry = run_cli("run", suite, "--output", out, "--dry-run", "--pilot")
    assert dry.returncode == 0, dry.stderr
    notes = [line for line in dry.stderr.splitlines() if line.startswith("warning:")]
    assert notes == [f"warning: --pilot is deprecated: use specbench estimate {suite} --pilot"]
    assert f"cost estimate (wall s, GPU-h; fitted on a pilot in {pilot_dir}):" in dry.stdout
    for server in ("baseline", "speculative"):
        for c in CONCURRENCY:
            cell = f"  {server}/fixed/c{c}/r0: 180 conversations"
            pattern = rf"{cell}, [0-9.]+ s, [0-9.]+ GPU-h \(measured\)"
            assert re.search(pattern, dry.stdout), dry.stdout
    estimated = total_s(dry.stdout)
    assert estimated > 0
    pilot_line = re.search(
        r"^pilot: 6 cells, 32–48 conversations each, measured in ([0-9.]+) s",
        dry.stdout,
        re.MULTILINE,
    )
    assert pilot_line, dry.stdout

    # The pilot is a results directory of its own, self-describing; the campaign's has none.
    assert not out.exists()
    manifest = json.loads((pilot_dir / "manifest.json").read_text())
    assert manifest["suite"]["description"].startswith("PILOT of suite 'pilot-emu'")
    assert [run["command"] for run in manifest["runs"]] == ["pilot"]
    assert manifest["workloads"]["fixed"]["num_conversations"] == len(conversations)
    for server in ("baseline", "speculative"):
        assert manifest["servers"][server]["provenance"]["startup_s"] > 0
    cells = summaries(pilot_dir)
    assert {key: cell["num_conversations"] for key, cell in cells.items()} == {
        "baseline/fixed/c1/r0": 32,
        "baseline/fixed/c4/r0": 32,
        "baseline/fixed/c16/r0": 48,
        "speculative/fixed/c1/r0": 32,
        "speculative/fixed/c4/r0": 32,
        "speculative/fixed/c16/r0": 48,
    }
    records = [
        json.loads(line)
        for line in (pilot_dir / "speculative/fixed/c16/r0/requests.jsonl").read_text().splitlines()
    ]
    expected = stratified_order(conversations, 0)[:48]
    assert {r["question_id"] for r in records} == {c.question_id for c in expected}
    assert len(records) == sum(len(c.turns) for c in expected)
    assert all(r["output_tokens"] == ANSWERS[r["category"]] for r in records)

    # A campaign never resumes from pilot cells; a second dry run reuses the pilot.
    refused = run_cli("run", suite, "--output", pilot_dir)
    assert refused.returncode == 2
    assert f"{pilot_dir}: holds pilot cells (run --dry-run --pilot)" in refused.stderr
    again = run_cli("run", suite, "--output", out, "--dry-run", "--pilot")
    assert again.returncode == 0, again.stderr
    assert f"pilot: reused 6 cells, 32–48 conversations each from {pilot_dir}" in again.stdout
    assert total_s(again.stdout) == estimated

    # `specbench estimate`: the same pilot (reused), and the same fit from its directory.
    priced = run_cli("estimate", suite, "--output", out, "--pilot")
    assert priced.returncode == 0, priced.stderr
    assert f"pilot: reused 6 cells, 32–48 conversations each from {pilot_dir}" in priced.stdout
    assert total_s(priced.stdout) == estimated
    fitted = run_cli("estimate", suite, "--from", pilot_dir)
    assert fitted.returncode == 0, fitted.stderr
    assert "cost estimate (wall s, GPU-h; fitted on earlier results):" in fitted.stdout
    assert total_s(fitted.stdout) == estimated
    assert "warning:" not in priced.stderr + fitted.stderr


@pytest.mark.quiet  # compares the pilot's wall time with the full run's: alone, last
def test_the_full_run_agrees_with_the_pilots_estimate(tmp_path):
    conversations = write_dataset(tmp_path / "data.jsonl")
    suite = write_suite(tmp_path, tmp_path / "data.jsonl", QUIET_CONCURRENCY)
    out = tmp_path / "results" / "pilot-emu"
    dry = run_cli("estimate", suite, "--output", out, "--pilot")
    assert dry.returncode == 0, dry.stderr
    estimated = total_s(dry.stdout)
    pilot_line = re.search(r"^pilot: .* measured in ([0-9.]+) s", dry.stdout, re.MULTILINE)
    assert pilot_line, dry.stdout
    pilot_s = float(pilot_line[1])

    # The full suite: every cell measured here, none taken from the pilot.
    full = run_cli("run", suite, "--output", out)
    assert full.returncode == 0, full.stderr
    measured = summaries(out)
    assert len(measured) == 2 * len(QUIET_CONCURRENCY)
    assert {cell["num_conversations"] for cell in measured.values()} == {len(conversations)}
    cost = json.loads((out / "manifest.json").read_text())["runs"][-1]["cost"]
    actual = sum(server["server_s"] for server in cost["servers"])  # 1 GPU each
    ratio = estimated / actual
    figures = f"pilot {pilot_s:.1f} s; estimate {estimated:.1f} s, actual {actual:.1f} server-s"
    print(f"\n{figures} (ratio {ratio:.2f})")  # noqa: T201 (the figure the report states)
    assert abs(ratio - 1) <= TOLERANCE, (estimated, actual)

    # A dry run into the measured campaign has nothing to measure, so nothing to price;
    # with --force it prices every cell again from the campaign's own cells.
    complete = run_cli("run", suite, "--output", out, "--dry-run")
    assert complete.returncode == 0, complete.stderr
    assert complete.stdout.splitlines()[-1] == (
        "  nothing to measure: every selected cell is complete"
    )
    resumed = run_cli("run", suite, "--output", out, "--dry-run", "--force")
    assert resumed.returncode == 0, resumed.stderr
    assert f"cost estimate (wall s, GPU-h; fitted on earlier results in {out}):" in resumed.stdout
    assert re.search(
        r"^  baseline/fixed/c16/r0: 180 conversations, .*\(measured\)$",
        resumed.stdout,
        re.MULTILINE,
    )
