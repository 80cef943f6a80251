"""No hub reachable and `HF_HUB_OFFLINE` unset: each command that would read the hub says so in
one line at once, not after `datasets`' 24 s of retries; a dataset in the `datasets` cache is
still read from it.

`HF_ENDPOINT` names a closed local port, so the hub is unreachable whatever network the
machine has. Before the probe, `data inspect speed-bench:qualitative` took 24.8-25.0 s here
to fail (cached: to answer); with it, 1.3 s (most of it importing `datasets`).
"""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from harness import run_cli, write_campaign_suite
from hf_offline import offline_env

from specbench.data.speed_bench import DEFAULT_REVISION

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: The fixture mirror's copy of nvidia/SPEED-Bench: 21 qualitative rows.
SPEED_BENCH = FIXTURES / "speed_bench_mirror" / "nvidia" / "SPEED-Bench"
#: Far below the 24 s `datasets` spends, far above the ~1.3 s measured, for a loaded machine.
BOUND_S = 10.0


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def online_env(tmp_path: Path) -> tuple[dict[str, str], str]:
    """`offline_env` without the offline switches, the hub at a closed port; and why it is
    unreachable, as the error says it."""
    env = offline_env(tmp_path)
    env.pop("HF_HUB_OFFLINE")
    env.pop("HF_DATASETS_OFFLINE")
    port = closed_port()
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{port}"
    return env, f"hub not reachable: 127.0.0.1:{port}: Connection refused"


def timed(*args: str | Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.perf_counter()
    result = run_cli(*args, env=env, timeout=120)
    return result, time.perf_counter() - start


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def hub_line(cause: str) -> str:
    return (
        f"error: nvidia/SPEED-Bench config 'qualitative' at revision {DEFAULT_REVISION}: "
        f"cannot load ({cause}; not in the datasets cache either); check the network or the "
        "revision; offline (HF_HUB_OFFLINE=1), use a folder from `specbench data prepare` "
        "(run --data-dir DIR) or point SPECBENCH_SPEED_BENCH_REPO at a local copy"
    )


def test_data_inspect_fails_at_once_in_one_line(tmp_path: Path) -> None:
    env, cause = online_env(tmp_path)
    result, elapsed = timed("data", "inspect", "speed-bench:qualitative", env=env)
    assert error_line(result) == hub_line(cause)
    assert elapsed < BOUND_S, elapsed


def test_a_dry_run_without_data_dir_fails_at_once_in_the_same_line(tmp_path: Path) -> None:
    suite, _ = write_campaign_suite(tmp_path, datasets=(Path("speed-bench:qualitative"),))
    env, cause = online_env(tmp_path)
    result, elapsed = timed("run", suite, "--dry-run", "--output", tmp_path / "out", env=env)
    assert error_line(result) == hub_line(cause)
    assert elapsed < BOUND_S, elapsed
    assert not (tmp_path / "out").exists()


def test_data_prepare_without_a_mirror_fails_at_once(tmp_path: Path) -> None:
    env, cause = online_env(tmp_path)
    out = tmp_path / "out"
    args = ("data", "prepare", "qualitative", "--skip-gated", "--output", out)
    result, elapsed = timed(*args, env=env)
    reason = cause.removeprefix("hub not reachable: ")
    assert error_line(result) == (
        f"error: the hub is not reachable ({reason}): the upstream sources cannot be "
        "downloaded; fill a mirror (see `specbench data prepare --list-sources`) and pass "
        "--mirror DIR"
    )
    assert elapsed < BOUND_S, elapsed
    assert not out.exists() and not list(tmp_path.glob(".out.partial-*"))


def test_a_dataset_in_the_datasets_cache_is_still_read(tmp_path: Path) -> None:
    import datasets

    # The cache a hub read of nvidia/SPEED-Bench leaves, made from the mirror's copy of it:
    # `datasets` names a local folder's cache after the folder, a hub repo's `owner___name`.
    cache = tmp_path / "hf" / "datasets"
    rows = datasets.load_dataset(str(SPEED_BENCH), "qualitative", split="test", cache_dir=cache)
    assert len(rows) == 21
    (cache / "speed-bench").rename(cache / "nvidia___speed-bench")
    env, _ = online_env(tmp_path)
    env["HF_DATASETS_CACHE"] = str(cache)
    result, elapsed = timed("data", "inspect", "speed-bench:qualitative", env=env)
    assert result.returncode == 0, result.stderr
    assert "│ all           │   21 │" in result.stdout
    assert result.stdout.splitlines()[-2] == "source: nvidia/SPEED-Bench"
    assert elapsed < BOUND_S, elapsed
