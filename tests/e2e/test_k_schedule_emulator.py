"""`specbench emulate --num-speculative-tokens-per-batch-size` as a real process: the drafts
per verify step that `/metrics` shows (Δ draft tokens / Δ drafts) follow the schedule's K
for the running batch, and a schedule that breaks vLLM's rules is refused in one line.

Then `specbench bench` against it: each cell records the running batch it measured
(`window_samples.jsonl`, `running_batch_mean`), its effective K and the per-step K of its
`detailed` requests, which is what maps a schedule's ranges to the client's concurrency. A
suite server naming a schedule in its speculative table runs it through `specbench run`."""

from __future__ import annotations

import itertools
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
from harness import (
    bench_argv,
    free_port,
    run_cli,
    running_emulator,
    server_pids,
    write_campaign_suite,
    write_prompts,
)
from prometheus_client.parser import text_string_to_metric_families

from specbench import store
from specbench.store.summary import CellSummary
from specbench.store.window_samples import read_window_samples

#: vLLM's example shape: K 5 up to batch 4, K 3 for 5-16, K 1 above.
SCHEDULE = "[[1,4,5],[5,16,3],[17,1024,1]]"
EMULATE = (
    "--num-speculative-tokens", "5", "--num-speculative-tokens-per-batch-size", SCHEDULE,
    "--acceptance", "0.9,0.8,0.7,0.6,0.5", "--prefill-ms", "2", "--step-ms", "2",
    "--per-request-step-ms", "0.05", "--per-request-spec-decode-metrics", "detailed",
)  # fmt: skip


def _complete(base: str, prompt: str, max_tokens: int) -> dict[str, object]:
    body = {"model": "specbench-emulator", "prompt": prompt, "max_tokens": max_tokens}
    request = urllib.request.Request(
        f"{base}/v1/completions",
        data=orjson.dumps(body),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer: dict[str, object] = orjson.loads(response.read())
    return answer


def _scrape(base: str) -> dict[str, float]:
    """The series this test reads, each summed over its label sets."""
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as response:
        text = response.read().decode()
    wanted = {
        "vllm:spec_decode_num_drafts_total",
        "vllm:spec_decode_num_draft_tokens_total",
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
    }
    found = dict.fromkeys(wanted, 0.0)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in wanted:
                found[sample.name] += sample.value
    return found


def _drafts_per_step(before: dict[str, float], after: dict[str, float]) -> float:
    drafts = (
        after["vllm:spec_decode_num_drafts_total"] - before["vllm:spec_decode_num_drafts_total"]
    )
    assert drafts > 0
    tokens = (
        after["vllm:spec_decode_num_draft_tokens_total"]
        - before["vllm:spec_decode_num_draft_tokens_total"]
    )
    return tokens / drafts


def test_drafts_per_step_follow_the_schedules_k_at_batch_1_and_at_batch_16() -> None:
    with running_emulator(*EMULATE) as base:
        before = _scrape(base)
        answer = _complete(base, "alone", 120)
        after = _scrape(base)
        # c = 1: every step holds one request, so each verifies the K of batch 1.
        assert _drafts_per_step(before, after) == 5.0
        spec = answer["metrics"]["speculative_decoding"]  # type: ignore[index]
        assert set(spec["per_step_drafted"]) == {5}
        assert spec["num_spec_tokens"] == 5  # the maximum, as vLLM reports it

        # c = 16: long requests, so the batch stays at 16 well past the admissions.
        with ThreadPoolExecutor(16) as pool:
            answers = [pool.submit(_complete, base, f"p{i}", 3000) for i in range(16)]

            def full() -> dict[str, float]:
                scraped = _scrape(base)
                assert all(not done.done() for done in answers), "a request ended early"
                return scraped

            deadline = time.monotonic() + 30
            while full()["vllm:num_requests_running"] != 16:
                assert time.monotonic() < deadline, "the batch never reached 16"
                time.sleep(0.005)
            # Past the step in flight when 16 were first seen, every step's K was chosen
            # after a step of 16 requests: the window holds only K(16) verify steps.
            time.sleep(0.1)
            start = full()
            time.sleep(0.3)
            end = full()
            assert start["vllm:num_requests_running"] == end["vllm:num_requests_running"] == 16
            assert end["vllm:num_requests_waiting"] == 0
            finished = [done.result() for done in answers]
        assert _drafts_per_step(start, end) == 3.0
        drafted = {
            k
            for answer in finished
            for k in answer["metrics"]["speculative_decoding"]["per_step_drafted"]  # type: ignore[index]
        }
        # The ramp and the drain pass through smaller batches: K 5 there, K 3 at 5 to 16.
        assert drafted == {3, 5}


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("[[2,4,5]]", "the first range [2, 4, 5] must start at 1"),
        ("[[5,16,3],[1,4,5]]", "range [1, 4, 5] comes after [5, 16, 3]: sort the ranges"),
        ("[[1,8,5],[5,16,3]]", "range [5, 16, 3] overlaps [1, 8, 5]"),
        ("[[1,4,5],[9,6,3]]", "range [9, 6, 3]: start is after end"),
        ("[[1,4,-1]]", "range [1, 4, -1]: K must be 0 or more"),
        ("1-4:5", "'1-4:5' is not JSON"),
    ],
)
def test_a_schedule_that_breaks_vllms_rules_exits_2_in_one_line(
    schedule: str, message: str
) -> None:
    result = run_cli(
        "emulate", "--port", str(free_port()),
        "--num-speculative-tokens-per-batch-size", schedule,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: --num-speculative-tokens-per-batch-size: {message}")


#: K 5 while at most 2 requests run, K 1 above: the issue's measured-batch check.
SMALL_BATCH_SCHEDULE = "[[1,2,5],[3,1024,1]]"


def _bench_cell(base: str, out: Path, data: Path, concurrency: int, prompts: int) -> CellSummary:
    """One cell of `specbench bench` against `base`; its summary, checked against its files."""
    result = run_cli(*bench_argv(
        base, out, "--concurrency", str(concurrency), "--num-prompts", str(prompts),
        "--max-tokens", "96", "--warmup", "0", dataset=data,
    ))  # fmt: skip
    assert result.returncode == 0, result.stderr
    (path,) = out.rglob(store.SUMMARY)
    summary = store.read_summary(path.parent)
    samples = read_window_samples(path.parent / store.WINDOW_SAMPLES)
    # The summary's running batch is its file's, polled every 0.25 s from 0.25 s on.
    assert summary.running_batch_samples == len(samples) >= 4
    assert samples[0].t_s == pytest.approx(0.25, abs=0.1)
    gaps = [b.t_s - a.t_s for a, b in itertools.pairwise(samples)]
    assert all(0.15 < gap < 0.5 for gap in gaps), gaps
    assert samples[-1].t_s < summary.duration_s
    # Every verify step of the window is in the requests' arrays, and only those: the
    # histogram sums to the counters' drafts and draft tokens exactly.
    spec, counts = summary.spec_decode, summary.per_step_drafted_counts
    assert spec is not None and counts is not None
    assert sum(counts.values()) == spec.num_drafts
    assert sum(k * steps for k, steps in counts.items()) == spec.num_draft_tokens
    assert summary.effective_k == spec.num_draft_tokens / spec.num_drafts
    return summary


def test_each_cell_records_its_running_batch_and_the_k_it_drafted(tmp_path: Path) -> None:
    data = tmp_path / "prompts.jsonl"
    write_prompts(data, 64, "batch", "b{:03d}")
    emulate = (
        "--num-speculative-tokens", "5",
        "--num-speculative-tokens-per-batch-size", SMALL_BATCH_SCHEDULE,
        "--acceptance", "0.9,0.8,0.7,0.6,0.5", "--prefill-ms", "2", "--step-ms", "10",
        "--per-request-step-ms", "0.05", "--per-request-spec-decode-metrics", "detailed",
    )  # fmt: skip
    with running_emulator(*emulate) as base:
        # About 2.2 s each: 8 requests one at a time; 64 through 16 slots.
        alone = _bench_cell(base, tmp_path / "c1", data, 1, 8)
        loaded = _bench_cell(base, tmp_path / "c16", data, 16, 64)
    # c = 1: one request runs at every poll (a turn's gap between requests is shorter than
    # a poll can see); each step ran alone, so each drafted the schedule's K(1) = 5.
    assert alone.running_batch_mean == pytest.approx(1.0, abs=0.05)
    assert alone.effective_k == 5.0
    assert alone.per_step_drafted_counts is not None
    assert set(alone.per_step_drafted_counts) == {5}
    # c = 16: 16 run until the last conversations drain; K(16) = 1 but for the drain's
    # last steps of 1 or 2 requests, which draft K 5 again.
    assert loaded.running_batch_mean is not None and loaded.running_batch_mean > 12
    assert loaded.effective_k is not None and 1.0 < loaded.effective_k < 1.2
    counts = loaded.per_step_drafted_counts
    assert counts is not None and set(counts) == {1, 5}
    assert counts[1] > 20 * counts[5]


def test_a_fixed_k_drafts_exactly_k_per_step_and_without_detailed_has_no_step_ks(
    tmp_path: Path,
) -> None:
    data = tmp_path / "prompts.jsonl"
    write_prompts(data, 8, "fixed", "f{:03d}")
    emulate = ("--num-speculative-tokens", "3", "--acceptance", "0.8,0.6,0.4",
               "--prefill-ms", "2", "--step-ms", "2")  # fmt: skip
    with running_emulator(*emulate) as base:
        argv = bench_argv(base, tmp_path / "out", "--concurrency", "4", "--max-tokens", "32",
                          "--warmup", "0", dataset=data)  # fmt: skip
        result = run_cli(*argv)
    assert result.returncode == 0, result.stderr
    (path,) = (tmp_path / "out").rglob(store.SUMMARY)
    summary = store.read_summary(path.parent)
    assert summary.spec_decode is not None and summary.spec_decode.num_drafts > 0
    assert summary.effective_k == 3.0
    # `summary` per-request metrics (the emulator's default, as vLLM's): no per-step K.
    assert summary.per_step_drafted_counts is None
    # A window under 0.25 s may hold no poll at all: then no mean, never a guess.
    samples = read_window_samples(path.parent / store.WINDOW_SAMPLES)
    assert summary.running_batch_samples == len(samples)
    if len(samples) < 2:
        assert summary.running_batch_mean is None


#: A schedule whose K at batch 1 (2) is below its maximum (3): a server that ignored it
#: would draft 3 per step.
SERVER_SCHEDULE = "[[1, 1, 2], [2, 64, 3]]"
SERVER_FIELD = "servers.eagle3.speculative.num_speculative_tokens_per_batch_size"


def test_a_suite_server_naming_a_schedule_runs_its_k_at_c1_and_the_dry_run_shows_it(
    tmp_path: Path,
) -> None:
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=24)
    out = tmp_path / "results"
    schedule = ("--set", f"{SERVER_FIELD}={SERVER_SCHEDULE}", "--server", "eagle3")

    dry = run_cli("run", suite, "--output", out, "--dry-run", *schedule)
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert (
        "K schedule: eagle3 runs [[1,1,2],[2,64,3]] (batch size [start, end, K]), K at most 3"
    ) in lines
    (command,) = [line for line in lines if " emulate " in line]
    assert "--num-speculative-tokens 3 --num-speculative-tokens-per-batch-size " in command
    assert "'[[1,1,2],[2,64,3]]'" in command
    assert not out.exists()

    done = run_cli("run", suite, "--output", out, *schedule)
    assert done.returncode == 0, done.stderr
    assert "1 cells measured, 0 already complete, 0 failed" in done.stdout
    cell = out / "eagle3" / "tiny" / "c1" / "r0"
    spec = orjson.loads((cell / "summary.json").read_bytes())["spec_decode"]
    # Every step of c = 1 holds one request: each verifies the schedule's K at batch 1.
    assert spec["num_drafts"] > 0
    assert spec["num_draft_tokens"] == 2 * spec["num_drafts"]
    before, after = (
        _counters((cell / name).read_text())
        for name in ("metrics_before.prom", "metrics_after.prom")
    )
    drafts = (
        after["vllm:spec_decode_num_drafts_total"] - before["vllm:spec_decode_num_drafts_total"]
    )
    tokens = (
        after["vllm:spec_decode_num_draft_tokens_total"]
        - before["vllm:spec_decode_num_draft_tokens_total"]
    )
    assert drafts == spec["num_drafts"] and tokens / drafts == 2.0
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["suite"]["servers"]["eagle3"]["speculative"][
        "num_speculative_tokens_per_batch_size"
    ] == [[1, 1, 2], [2, 64, 3]]


def test_run_refuses_a_schedule_above_the_maximum_before_any_server_starts(
    tmp_path: Path,
) -> None:
    suite, tag = write_campaign_suite(tmp_path, concurrency=(1,))
    out = tmp_path / "results"
    done = run_cli("run", suite, "--output", out, "--set", f"{SERVER_FIELD}=[[1, 4, 5]]")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(
        f"error: {suite}: {SERVER_FIELD}: range [1, 4, 5] has K = 5, above "
        "num_speculative_tokens = 3 (the maximum)"
    )
    assert not out.exists()
    assert server_pids(tag) == []


def _counters(text: str) -> dict[str, float]:
    """Each series of a saved `/metrics` scrape, summed over its label sets."""
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name] = found.get(sample.name, 0.0) + sample.value
    return found
