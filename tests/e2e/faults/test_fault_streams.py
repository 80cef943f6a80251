"""Faults of the server's answers (F14–F25): HTTP 500s, stalls, malformed SSE, invalid JSON,
resets, streams cut before [DONE], non-vLLM endpoints, no endpoint, and servers that never
become ready or exit during start-up.

A broken request becomes a failed record; a cell whose every request broke is a failure
(failure.json, exit 1), never a saved cell; an endpoint that is no vLLM is refused before
any cell (exit 2, one line).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fault_checks import (
    DATA_LOSS,
    assert_clean_exit,
    assert_consistent,
    assert_no_leftovers,
    only_summary,
)
from fault_scratch import FaultCase, Observed, Scratch, case
from harness import (
    DATA,
    FaultProxy,
    Outcome,
    bench_argv,
    fault_proxy,
    free_port,
    running_emulator,
    summary_bytes,
)

pytestmark = pytest.mark.faults

BENCH_BAD = "tests/e2e/test_bench_emulator.py::test_bad_input_gets_one_line_and_exit_2"
CLIENT_FIXTURES = "tests/unit/client/test_client_fixtures.py"
LAUNCH_TEST = "tests/e2e/test_launch_emulator.py"


def proxied_bench(
    scratch: Scratch,
    observe: Observed,
    fault_name: str,
    *,
    every: int = 1,
    codes: tuple[int, ...] = (1,),
    contains: str | None = "cell(s) failed",
    timeout: str = "30",
) -> tuple[Outcome, Path, FaultProxy]:
    """`bench` through a proxy that breaks every `every`-th generation request."""
    folder = scratch.dir(f"proxy-{fault_name}")
    out = folder / "results"
    with (
        running_emulator("--model", "m", "--step-ms", "1", "--prefill-ms", "2") as upstream,
        fault_proxy(upstream, fault_name, every) as proxy,
    ):
        options = ("--warmup", "0", "--max-tokens", "32", "--concurrency", "2")
        outcome = scratch.cli(*bench_argv(proxy.url, out, *options, "--request-timeout", timeout))
    observe(outcome)
    assert_clean_exit(
        outcome, codes, contains, one_line=codes == (2,), prefix="" if 0 in codes else "error: "
    )
    assert_consistent(out)
    if codes == (1,):
        assert not summary_bytes(out), f"{DATA_LOSS}a cell saved although every request was broken"
        assert next(out.rglob("failure.json"), None) is not None, "no failure.json"
    return outcome, out, proxy


@pytest.mark.parametrize(
    ("case", "fault", "codes", "contains", "timeout"),
    [
        case(
            "F14",
            "HTTP 500 on every generation request",
            "the cell fails (`all N requests failed`), failure.json, exit 1, no summary",
            "tests/e2e/test_bench_emulator.py (http_500 records: tests/unit/client)",
            "http500",
            (1,),
            "cell(s) failed",
            "30",
            server=True,
        ),
        case(
            "F16",
            "stalled stream (no byte for longer than --request-timeout)",
            "each stalled request is a `timeout` record; all stalled: cell failed, exit 1",
            "tests/unit/client/test_client_timeout.py::test_stalled_stream_becomes_a_timeout_record",
            "stall",
            (1,),
            "cell(s) failed",
            "1",
            server=True,
        ),
        case(
            "F18",
            "invalid JSON chunk in the stream",
            "a `bad_chunk` record per stream; all broken: cell failed, exit 1",
            CLIENT_FIXTURES,
            "invalid_json",
            (1,),
            "cell(s) failed",
            "30",
            server=True,
        ),
        case(
            "F19",
            "connection reset mid-stream",
            "failed records (ClientPayloadError…); all reset: cell failed, exit 1",
            f"{CLIENT_FIXTURES}::test_a_stream_cut_before_done_is_a_failed_record",
            "reset",
            (1,),
            "cell(s) failed",
            "30",
            server=True,
        ),
        case(
            "F20",
            "stream ended cleanly before [DONE]",
            "`incomplete_stream` records; all cut: cell failed, exit 1",
            f"{CLIENT_FIXTURES}::test_aiohttp_a_stream_cut_just_before_done_is_a_failed_record",
            "truncate",
            (1,),
            "cell(s) failed",
            "30",
            server=True,
        ),
        case(
            "F21",
            "non-vLLM endpoint answering HTML pages",
            "refused before any cell: exit 2, one line naming the endpoint",
            BENCH_BAD,
            "html",
            (2,),
            "/",
            "30",
            server=True,
        ),
        case(
            "F22",
            "non-vLLM endpoint answering 404 everywhere",
            "refused before any cell: exit 2, one line naming the endpoint",
            BENCH_BAD,
            "not_found",
            (2,),
            "/",
            "30",
            server=True,
        ),
    ],
)
def test_every_request_broken_by_the_proxy(
    case: FaultCase,
    fault: str,
    codes: tuple[int, ...],
    contains: str,
    timeout: str,
    scratch: Scratch,
    observe: Observed,
) -> None:
    proxied_bench(scratch, observe, fault, codes=codes, contains=contains, timeout=timeout)


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F15",
            "HTTP 500 on every 3rd generation request",
            "the cell is saved with the failures counted (num_failed ≥ injected), warned, exit 0",
            "tests/unit/measure/test_checks.py::test_failures_skipped_turns_and_preemptions_are_"
            "stated",
            server=True,
        )
    ],
)
def test_http_500_on_some_requests(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    outcome, out, proxy = proxied_bench(
        scratch, observe, "http500", every=3, codes=(0,), contains=None
    )
    summary = only_summary(out)
    failed = summary.get("num_failed", 0)
    assert isinstance(failed, int) and failed >= proxy.hits > 0, (
        f"{DATA_LOSS}num_failed {failed} < {proxy.hits} injected"
    )
    observe(outcome, f"{failed} failed of {summary.get('num_requests')}, {proxy.hits} injected")


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F17",
            "malformed SSE (lines that are no field, comments, unknown fields)",
            "ignored as the SSE spec says: exit 0, no failed request, tokens match the server",
            "tests/unit/client/test_sse.py::test_multiline_data_comments_and_missing_final_blank_"
            "line",
            server=True,
        )
    ],
)
def test_malformed_sse(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    outcome, out, _ = proxied_bench(scratch, observe, "malformed_sse", codes=(0,), contains=None)
    summary = only_summary(out)
    observe(outcome, f"num_failed {summary.get('num_failed')}")
    assert summary.get("num_failed") == 0, f"num_failed {summary.get('num_failed')}"


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F23",
            "endpoint refusing connections",
            "exit 2, one line: the endpoint is unreachable",
            BENCH_BAD,
        )
    ],
)
def test_an_endpoint_refusing_connections(
    case: FaultCase, scratch: Scratch, observe: Observed
) -> None:
    out = scratch.dir("unreachable") / "o"
    outcome = scratch.cli(*bench_argv(f"http://127.0.0.1:{free_port()}", out))
    observe(outcome)
    assert_clean_exit(outcome, (2,), "unreachable")


def fake_vllm(folder: Path, tag: str, body: str) -> Path:
    """A `vllm` stand-in whose path holds `tag`: answers `--help` probes, and `--version` as
    a CPU build (which starts where no GPU tool answers), else runs `body`."""
    script = folder / f"vllm-{tag}"
    script.write_text(
        f"#!{sys.executable}\nimport sys, time\n"
        "if any(a.startswith('--help') for a in sys.argv):\n    sys.exit(0)\n"
        "if sys.argv[1:] == ['--version']:\n    print('0.32.0+cpu')\n    sys.exit(0)\n"
        + body
        + "\n"
    )
    script.chmod(0o755)
    return script


def vllm_suite(folder: Path, tag: str) -> Path:
    suite = folder / "suite.toml"
    suite.write_text(
        f'name = "never-{tag}"\n[target]\nmodel = "org/m-{tag}"\n'
        "[servers.base]\nbaseline = true\n"
        f'[[workloads]]\ndataset = "{DATA}"\nconcurrency = [1]\nmax_tokens = 8\n'
    )
    return suite


@pytest.mark.parametrize(
    ("case", "name", "body", "reason", "options", "quoted"),
    [
        case(
            "F24",
            "a server that never becomes ready (--ready-timeout 3)",
            "one failure (exit 3, a server would not start) naming the timeout on stderr and in "
            "failure.json; server killed",
            f"{LAUNCH_TEST}::test_ready_timeout_kills_a_server_that_never_serves",
            "never-ready",
            "print('loading', flush=True)\ntime.sleep(300)",
            "was not ready after 3 s",
            ("--ready-timeout", "3"),
            None,
        ),
        case(
            "F25",
            "a server that exits during start-up",
            "one failure (exit 3, a server would not start), the log's last line quoted; no "
            "process left",
            f"{LAUNCH_TEST}::test_fake_vllm_start_error_and_port_in_use",
            "start-error",
            "sys.exit('vllm serve: error: CUDA out of memory (injected)')",
            "exited with code 1 before it was ready; ",
            (),
            "CUDA out of memory (injected)",
        ),
    ],
)
def test_a_server_that_never_starts(
    case: FaultCase,
    name: str,
    body: str,
    reason: str,
    options: tuple[str, ...],
    quoted: str | None,
    scratch: Scratch,
    observe: Observed,
) -> None:
    """`run` with a stand-in `vllm` running `body` (`options` after `--vllm-bin`, no
    restarts): one failure saying `reason`, no cell saved, no process left; `quoted`, a
    line of the server's log that stderr must quote. The stand-in is a few lines of
    Python, no emulator or vLLM: these cases run with the ones that start no server."""
    folder = scratch.dir(name)
    tag = scratch.tag()
    vllm = fake_vllm(folder, tag, body)
    out = folder / "results"
    suite = vllm_suite(folder, tag)
    restarts = ("--max-restarts", "0")
    outcome = scratch.cli("run", suite, "--output", out, "--vllm-bin", vllm, *options, *restarts)
    failure = next(out.rglob("failure.json"), None)
    message = json.loads(failure.read_text())["message"] if failure else ""
    observe(outcome, f"failure.json: {message[:100]}")
    assert_clean_exit(outcome, (3,), "would not start", one_line=False)
    assert reason in outcome.stderr, f"stderr does not say {reason!r}"
    assert reason in message, f"failure.json does not say {reason!r}"
    if quoted is not None:
        assert quoted in outcome.stderr, "the log is not quoted"
    assert not summary_bytes(out), f"{DATA_LOSS}a cell was saved"
    assert_no_leftovers(tag)
