"""Figures that used to be silently wrong, end to end: the real CLI against emulator processes.

- multi-turn history at T > 0 (outputs not saved) carries the model's own earlier answers,
  read from what the emulator logged it received (`--prompt-log`);
- a server that refuses `/reset_prefix_cache` (no dev mode, as vLLM without
  VLLM_SERVER_DEV_MODE) gives a loud warning, `prefix_cache_reset: false` and a report
  column; one that accepts it gives `true` and a cold cache;
- concurrency above the number of conversations warns, and the achieved concurrency shows it;
- without --gpus, throughput is per server (no guessed divisor).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from specbench import store
from specbench.launch import EmulatorOverrides, ServerConfig, ServerProcess


def emulator(log_dir: Path, *, dev_mode: bool, prompt_log: Path | None = None) -> ServerProcess:
    config = ServerConfig(
        engine="emulator",
        model="emu",
        env={"VLLM_SERVER_DEV_MODE": "1"} if dev_mode else {},
        emulator=EmulatorOverrides(
            prefill_ms=2.0,
            step_ms=1.0,
            per_request_step_ms=0.02,
            seed=5,
            prompt_log=str(prompt_log) if prompt_log else None,
        ),
    )
    return ServerProcess(config, name="dev" if dev_mode else "plain", log_dir=log_dir)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """8 conversations of 3 turns each (the first 4) or 1 turn."""
    path = tmp_path_factory.mktemp("data") / "multi.jsonl"
    lines = []
    for index in range(8):
        # 40 words: whole 16-token blocks of the emulator's prefix cache.
        turns = [f"question {index} please answer " + " ".join(["context"] * 36)]
        if index < 4:
            turns += [f"second turn {index}", f"third turn {index}"]
        lines.append(json.dumps({"category": "writing", "turns": turns}))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def logged_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    folder = tmp_path_factory.mktemp("emu")
    log = folder / "prompts.jsonl"
    with emulator(folder, dev_mode=True, prompt_log=log) as server:
        yield server, log


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "specbench.cli.main", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def cell(root: Path, concurrency: int) -> Path:
    return root / "default" / "multi" / f"c{concurrency}" / "r0"


def test_t07_multi_turn_history_carries_the_previous_answers(
    logged_server: tuple[ServerProcess, Path], dataset: Path, tmp_path: Path
) -> None:
    server, log = logged_server
    log.write_bytes(b"")
    result = run(
        "bench", "--endpoint", server.base_url, "--dataset", dataset, "--output", tmp_path,
        "--concurrency", "4", "--max-tokens", "24", "--temperature", "0.7", "--warmup", "0",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    records = list(store.read_records(cell(tmp_path, 4) / store.REQUESTS))
    assert len(records) == 16 and all(r.ok for r in records)  # 4 × 3 turns + 4 × 1
    assert all(r.output_text is None for r in records)  # T > 0: outputs are not saved
    assert all(r.output_tokens == 24 for r in records)
    received = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(received) == 16 and all(entry["temperature"] == 0.7 for entry in received)
    later = [entry["messages"] for entry in received if len(entry["messages"]) > 1]
    assert len(later) == 8  # turns 2 and 3 of the 4 three-turn conversations
    first_answers: dict[str, set[str]] = {}
    for messages in later:
        answers = [m["content"] for m in messages if m["role"] == "assistant"]
        assert len(answers) == len(messages) // 2  # one answer per earlier turn
        for answer in answers:
            # The emulator's own text, 24 tokens " tok<id>" (the bug sent "" here).
            assert re.fullmatch(r"( tok\d+){24}", answer)
        first_answers.setdefault(messages[0]["content"], set()).add(answers[0])
    # Turns 2 and 3 of a conversation carry the same first answer; conversations differ.
    assert len(first_answers) == 4 and all(len(a) == 1 for a in first_answers.values())
    assert len({next(iter(a)) for a in first_answers.values()}) == 4
    # The server saw the history too: a turn's prompt holds the earlier turns and answers.
    third = [r for r in records if r.turn == 2]
    first_turn = {r.question_id: r for r in records if r.turn == 0}
    for record in third:
        assert record.input_tokens is not None
        assert record.input_tokens > first_turn[record.question_id].input_tokens + 2 * 24


def test_a_server_that_refuses_the_reset_is_warned_recorded_and_reported(
    dataset: Path, tmp_path: Path
) -> None:
    with emulator(tmp_path / "logs", dev_mode=False) as server:
        args = ("--dataset", dataset, "--max-tokens", "8", "--warmup", "1")
        result = run("bench", "--endpoint", server.base_url, *args, "--output", tmp_path / "r",
                     "--concurrency", "2,4")  # fmt: skip
    assert result.returncode == 0, result.stderr
    stderr = " ".join(result.stderr.split())  # rich wraps long lines
    assert stderr.count("PREFIX CACHE NOT RESET") == 2  # one warning per cell
    assert "answered HTTP 404 (vLLM serves it only with VLLM_SERVER_DEV_MODE=1)" in stderr
    second = json.loads((cell(tmp_path / "r", 4) / store.SUMMARY).read_text())
    assert second["prefix_cache_reset"] is False
    assert "404" in second["prefix_cache_reset_detail"]
    # The c=4 cell re-sent the c=2 cell's prompts into a warm cache: it hit.
    # 704 of 844 prompt tokens hit, against 320 with a verified reset (next test): the
    # cell measured a warm cache, which is what the warning says.
    assert (second["server_prefix_cache_hits"], second["server_prefix_cache_queries"]) == (
        704,
        844,
    )
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert "REFUSED in 2 of 2 cells" in manifest["servers"]["default"]["prefix_cache"]
    report = run("report", tmp_path / "r", "--format", "md")
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "r" / "report" / "report.md").read_text()
    health = text.split("### Cell health", 1)[1].split("\n#", 1)[0]
    rows = [line for line in health.splitlines() if line.startswith("| default |")]
    assert len(rows) == 2 and all("| **NO** |" in row for row in rows)


def test_an_accepted_reset_is_verified_and_the_cache_is_cold(dataset: Path, tmp_path: Path) -> None:
    with emulator(tmp_path / "logs", dev_mode=True) as server:
        result = run("bench", "--endpoint", server.base_url, "--dataset", dataset,
                     "--output", tmp_path, "--concurrency", "2,4", "--max-tokens", "8",
                     "--warmup", "1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "PREFIX CACHE NOT RESET" not in result.stderr
    summary = json.loads((cell(tmp_path, 4) / store.SUMMARY).read_text())
    assert summary["prefix_cache_reset"] is True
    assert summary["prefix_cache_reset_detail"].endswith("answered success=true")
    # Only later turns hit: they extend their own conversation's earlier prompt.
    assert summary["server_prefix_cache_queries"] == summary["input_tokens"] == 844
    assert summary["server_prefix_cache_hits"] == 320
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert "verified by the server in 2 cells" in manifest["servers"]["default"]["prefix_cache"]


def test_concurrency_above_the_conversations_warns_and_throughput_is_per_server(
    logged_server: tuple[ServerProcess, Path], dataset: Path, tmp_path: Path
) -> None:
    server, _ = logged_server
    result = run("bench", "--endpoint", server.base_url, "--dataset", dataset,
                 "--output", tmp_path, "--concurrency", "16", "--max-tokens", "8",
                 "--warmup", "0")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "concurrency 16 exceeds the 8 conversations" in " ".join(result.stderr.split())
    summary = json.loads((cell(tmp_path, 16) / store.SUMMARY).read_text())
    assert 0 < summary["achieved_concurrency"] <= 8.0
    assert summary["gpus"] is None and summary["output_tok_s_per_gpu"] is None
    assert summary["output_tok_s"] > 0
    assert "/server" in result.stdout  # the end table (stdout) marks per-server throughput
    assert summary["generation_tokens_mismatch"] == 0.0
    assert summary["num_skipped_turns"] == 0
