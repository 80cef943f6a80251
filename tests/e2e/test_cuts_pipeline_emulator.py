"""Issue 18 through the whole pipeline: `specbench run` → summary.json → `specbench report` →
`specbench export profile`, against emulator servers with a known truth.

The speculative emulator thinks for 256 tokens with its own acceptance, then answers with
another, and its acceptance decays by 0.85 every 256 output tokens; three categories end
at 512, 768 and 1,024 tokens (the emulator's output-length marker). Every bin of 256
tokens lies in one piece of the acceptance schedule, so each cut has an exact expected AL
(`emulator/acceptance.py`). The per-step arrays (vLLM's `detailed` level) are asked for in
the suite, as a user would. Draws are seeded per prompt: the figures are reproducible.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from harness import run_cli

from specbench.emulator import make_emulator_config
from specbench.emulator.acceptance import expected_acceptance_length_between, is_exact_between

K = 3
THINKING = 256
CAPS = {"math": 1024, "qa": 768, "writing": 512}
ANSWER = [0.9, 0.85, 0.8]
THINKING_ACCEPTANCE = [0.6, 0.55, 0.5]
TRUTH = make_emulator_config(
    acceptance=tuple(ANSWER),
    reasoning_acceptance=tuple(THINKING_ACCEPTANCE),
    reasoning_tokens=THINKING,
    acceptance_decay=0.85,
    acceptance_decay_tokens=256,
)


def _suite(tmp_path: Path, *, reasoning_tokens: int = THINKING) -> Path:
    data = tmp_path / "reasoning.jsonl"
    lines = []
    for category, cap in CAPS.items():
        for index in range(80):
            text = f"{category} question {index}: think it through"
            if cap < 1024:
                text += f" <|emulator_output_tokens={cap}|>"
            lines.append(json.dumps({"category": category, "turns": [text]}))
    data.write_text("\n".join(lines) + "\n")
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f"""
name = "emu-reasoning"
repeats = 1

[target]
engine = "emulator"
model = "emu-reasoner"
max_model_len = 2048
emulator = {{ prefill_ms = 2.0, step_ms = 1.0, per_request_step_ms = 0.02, seed = 18, \
reasoning_tokens = {reasoning_tokens}, acceptance_decay = 0.85, acceptance_decay_tokens = 256 }}

[servers.baseline]
baseline = true

[servers.eagle3]
speculative = {{ method = "eagle3", model = "emu-draft", num_speculative_tokens = {K} }}
per_request_spec_decode_metrics = "detailed"
emulator = {{ acceptance = {ANSWER}, reasoning_acceptance = {THINKING_ACCEPTANCE} }}

[[workloads]]
dataset = "{data}"
concurrency = [16, 48]
max_tokens = 1024
warmup = 1
"""
    )
    return suite


def _within(measured: float, truth: float) -> None:
    assert abs(measured / truth - 1) < 0.01, (measured, truth)


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_cuts_speedup_and_profile_from_run_to_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli("run", _suite(tmp_path), "--output", out)
    assert result.returncode == 0, result.stderr

    # summary.json: exact cuts, per category, within 1% of the configured truth.
    summary = json.loads((out / "eagle3" / "reasoning" / "c16" / "r0" / "summary.json").read_text())
    cuts = summary["acceptance_cuts"]
    assert cuts["num_spec_tokens"] == K and cuts["bin_tokens"] == 256
    for name, cap in CAPS.items():
        group = cuts["per_category"][name]
        assert group["source"] == "per_step_metrics" and not group["is_estimate"]
        assert group["num_requests_with_span"] == 80
        _within(
            group["thinking"]["acceptance_length"],
            expected_acceptance_length_between(TRUTH, 0, THINKING),
        )
        # The answer's first step starts just after </think>: [256 + δ, cap).
        assert [b["num_steps"] > 0 for b in group["position_bins"]] == [
            start < cap for start in (0, 256, 512, 768)
        ]
        # Thinking tokens are the span (and the straddling step): 256 + at most K per request.
        assert 80 * THINKING <= group["thinking_tokens"] <= 80 * (THINKING + K)
        assert group["thinking_tokens"] + group["answer_tokens"] == 80 * cap
    writing = cuts["per_category"]["writing"]
    _within(
        writing["answer"]["acceptance_length"], expected_acceptance_length_between(TRUTH, 256, 512)
    )
    # Only the steps are split: their counts add up to vLLM's per-request step count.
    records = [
        json.loads(line)
        for line in (out / "eagle3" / "reasoning" / "c16" / "r0" / "requests.jsonl")
        .read_text()
        .splitlines()
    ]
    overall = cuts["overall"]
    assert overall["thinking"]["num_steps"] + overall["answer"]["num_steps"] == sum(
        r["spec_decode"]["num_spec_steps"] for r in records
    )
    assert all(r["reasoning_source"] == "reasoning" and r["reasoning_text"] for r in records)

    # report: the pooled position bins and the thinking/answer split, within 1%.
    result = run_cli("report", out)
    assert result.returncode == 0, result.stderr
    report = out / "report"
    bins = _csv(report / "tables" / "al_by_position.csv")
    assert [(int(b["start_token"]), int(b["end_token"])) for b in bins] == [
        (0, 256), (256, 512), (512, 768), (768, 1024)
    ]  # fmt: skip
    for row in bins:
        start, end = int(row["start_token"]), int(row["end_token"])
        assert is_exact_between(TRUTH, start, end)
        _within(
            float(row["acceptance_length"]), expected_acceptance_length_between(TRUTH, start, end)
        )
        assert row["source"] == "exact (vLLM per-step arrays)" and row["cells"] == "2"
    split = {row["category"]: row for row in _csv(report / "tables" / "thinking_vs_answer.csv")}
    assert set(split) == {*CAPS, "overall"}
    thinking_truth = expected_acceptance_length_between(TRUTH, 0, THINKING)
    for row in split.values():
        _within(float(row["thinking_acceptance_length"]), thinking_truth)
    _within(
        float(split["writing"]["answer_acceptance_length"]),
        expected_acceptance_length_between(TRUTH, 256, 512),
    )
    # Per-domain speedup: every domain at both concurrencies, its CI around it, the proxy
    # computed from the AL and step times the table shows.
    (speedup_csv,) = (report / "tables").glob("domain_speedup_*.csv")
    speedup = _csv(speedup_csv)
    assert {(r["category"], r["concurrency"]) for r in speedup} == {
        (name, c) for name in (*CAPS, "overall") for c in ("16", "48")
    }
    for row in speedup:
        assert (
            float(row["speedup_ci_low"]) <= float(row["speedup"]) <= float(row["speedup_ci_high"])
        )
        proxy = float(row["acceptance_length"]) * float(row["t_ar_ms"]) / float(row["t_sd_ms"])
        assert abs(float(row["proxy_speedup"]) - proxy) < 1e-9
        # Every request is counted, timed by the server (the launcher asks the emulator for
        # --enable-per-request-metrics). On the client's clock alone a loaded machine lost
        # some (74 against 80): a whole answer read in one socket read has E2E = TTFT.
        requests = 240 if row["category"] == "overall" else 80
        for arm in ("speculative", "baseline"):
            assert int(row[f"{arm}_requests"]) == int(row[f"{arm}_server"]) == requests, row
            assert int(row[f"{arm}_client"]) == int(row[f"{arm}_not_timed"]) == 0, row
        assert row["step_time_source"].startswith("this mixed run")
    markdown = (report / "report.md").read_text()
    for figure in ("al_by_position.png", "thinking_vs_answer.png"):
        assert (report / "figures" / figure).is_file() and figure in markdown
    assert "Per-domain speedup, eagle3 vs baseline" in markdown
    assert "Not timed (spec/base)" in markdown
    for c in (16, 48):
        assert (
            f"c={c}: decode times of eagle3 240 by the server, 0 by the client, 0 not timed; "
            "baseline 240 by the server, 0 by the client, 0 not timed." in markdown
        )

    # export profile: one versioned JSON; its numbers add up to the raw data.
    result = run_cli("export", "profile", out)
    assert result.returncode == 0, result.stderr
    profile = json.loads((out / "profiles" / "eagle3.json").read_text())
    assert profile["format"] == "specbench.speculation_profile" and profile["version"] == 1
    assert profile["speculative_config"]["num_speculative_tokens"] == K
    assert "detailed" in profile["provenance"]["server_argv"]
    workload = profile["workloads"]["reasoning"]
    assert len(workload["cells"]) == 2
    acceptance = workload["overall"]["acceptance"]
    histogram = acceptance["acceptance_histogram"]
    assert len(histogram) == K + 1
    assert sum(histogram) == acceptance["num_spec_steps"]
    marginal_al = 1 + sum(acceptance["marginal_acceptance"])
    assert abs(marginal_al - acceptance["acceptance_length_step_weighted"]) < 1e-12
    counters = workload["overall"]["server_counters"]
    assert counters["num_drafts"] == acceptance["num_spec_steps"]  # every step reported
    assert workload["overall"]["official"]["num_questions"] == 480
    writing_cuts = workload["per_category"]["writing"]["cuts"]
    _within(writing_cuts["thinking_answer"]["thinking"]["acceptance_length"], thinking_truth)


def test_without_a_thinking_span_the_split_says_so(tmp_path: Path) -> None:
    out = tmp_path / "out"
    suite = _suite(tmp_path, reasoning_tokens=0)
    text = suite.read_text().replace("concurrency = [16, 48]", "concurrency = [16]")
    suite.write_text(text.replace("max_tokens = 1024", "max_tokens = 64"))
    assert run_cli("run", suite, "--output", out, "--server", "eagle3").returncode == 0
    summary = json.loads((out / "eagle3" / "reasoning" / "c16" / "r0" / "summary.json").read_text())
    overall = summary["acceptance_cuts"]["overall"]
    assert overall["thinking"] is None and overall["position_bins"]
    assert overall["thinking_refusal"].startswith("no thinking span found in any of 240 requests")
    result = run_cli("report", out)
    assert result.returncode == 0, result.stderr
    markdown = (out / "report" / "report.md").read_text()
    assert "Thinking vs answer AL: n/a" in markdown and "no thinking span found" in markdown
    assert "thinking_vs_answer.png" not in markdown
    # The position bins do not need a span: they are built.
    assert "al_by_position.png" in markdown
    missing = run_cli("export", "profile", tmp_path / "nowhere")
    assert missing.returncode == 2
    assert (
        len(missing.stderr.strip().splitlines()) == 1
        and "not a results directory" in missing.stderr
    )
