"""What each shard's job asks of Slurm: its GPU request (from the server's TP × PP × DP and
the nodes, or `[slurm]`), shown by the dry run; and the mount checks behind the lock
warnings (`slurm/sharedfs.py`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from harness import run_cli

from specbench.common.errors import SpecbenchError
from specbench.slurm.resources import gpu_request
from specbench.slurm.sharedfs import lock_warning
from specbench.suite import SlurmSettings, load_suite

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"


def vllm_suite(tmp_path: Path, slurm: str = "") -> Path:
    (tmp_path / "target").mkdir(exist_ok=True)
    path = tmp_path / "suite.toml"
    path.write_text(
        f"""
name = "tp8"
[target]
model = "{tmp_path / "target"}"
tensor_parallel_size = 8
[servers.base]
baseline = true
[servers.pp]
pipeline_parallel_size = 2
[servers.emu]
engine = "emulator"
[[workloads]]
dataset = "{DATA}"
concurrency = [1]
max_tokens = 8
{slurm}"""
    )
    return path


def test_the_gpu_request_follows_each_servers_parallelism_and_the_nodes(tmp_path):
    suite = load_suite(vllm_suite(tmp_path))
    one = SlurmSettings()
    assert gpu_request(suite, "base", one).directives == ("--gpus-per-node=8",)
    assert gpu_request(suite, "pp", one).directives == ("--gpus-per-node=16",)
    two = SlurmSettings(nodes=2)
    request = gpu_request(suite, "pp", two)
    assert request.describe() == "--gpus-per-node=8 (TP 8 × PP 2 × DP 1 over 2 nodes)"
    assert gpu_request(suite, "emu", one).describe() == "no GPU (emulator server)"
    # [slurm] (or the CLI) overrides every shard's: N, none, or a gres string.
    assert gpu_request(suite, "base", SlurmSettings(gpus_per_node=4)).directives == (
        "--gpus-per-node=4",
    )
    assert gpu_request(suite, "pp", SlurmSettings(gpus_per_node=0)).directives == ()
    assert gpu_request(suite, "emu", SlurmSettings(gres="gpu:h200:8")).directives == (
        "--gres=gpu:h200:8",
    )
    with pytest.raises(SpecbenchError, match=r"16 GPUs do not split evenly over slurm.nodes = 3"):
        gpu_request(suite, "pp", SlurmSettings(nodes=3))


def test_the_dry_run_shows_each_shards_gpu_request_in_its_batch_script(tmp_path):
    suite = vllm_suite(tmp_path)
    out = tmp_path / "results"
    command = ("run", suite, "--output", out, "--executor", "slurm", "--dry-run")
    no_sbatch = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    result = run_cli(*command, timeout=120, env=no_sbatch)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "  base: 1 cells, 1 missing; GPUs: --gpus-per-node=8 (TP 8 × PP 1 × DP 1" in text
    assert "  emu: 1 cells, 1 missing; GPUs: no GPU (emulator server)" in text
    scripts = dict(part.split("\n", 1) for part in text.split("--- ")[1:])
    assert "#SBATCH --gpus-per-node=8" in scripts[f"{out}/slurm/jobs/base.sbatch"]
    assert "#SBATCH --gpus-per-node=16" in scripts[f"{out}/slurm/jobs/pp.sbatch"]
    assert "--gpus-per-node" not in scripts[f"{out}/slurm/jobs/emu.sbatch"]
    assert "#SBATCH --no-requeue" in scripts[f"{out}/slurm/jobs/emu.sbatch"]
    cpu = run_cli(*command, "--gpus-per-node", "0", timeout=120, env=no_sbatch)
    assert cpu.returncode == 0, cpu.stderr
    assert "--gpus-per-node=" not in cpu.stdout.split("--- ", 1)[1]
    assert cpu.stdout.count("GPUs: no GPU (slurm.gpus_per_node = 0)") == 3
    assert not out.exists()


MOUNTS = """\
sysfs /sys sysfs rw 0 0
server:/export /shared nfs4 rw,relatime,vers=4.2,local_lock=none 0 0
server:/old /old nfs rw,vers=3,nolock 0 0
server:/samba /samba nfs rw,vers=3,local_lock=flock 0 0
mgs@tcp:/lfs /lustre lustre rw,flock,lazystatfs 0 0
mgs@tcp:/lfs /lustre/local lustre rw,localflock 0 0
mgs@tcp:/lfs2 /scratch lustre rw,lazystatfs 0 0
beegfs_nodev /beegfs beegfs rw 0 0
/dev/sda1 / ext4 rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("/shared/results/m3", None),
        ("/old/results", "NFS mounted nolock"),
        ("/samba/results", "NFS mounted local_lock=flock"),
        ("/lustre/results", None),
        ("/lustre/local/results", "Lustre mounted localflock"),
        ("/scratch/results", "Lustre mounted without flock: flock fails"),
        ("/beegfs/results", "tuneUseGlobalFileLocks"),
        ("/home/me/results", None),
    ],
)
def test_mounts_that_keep_flock_on_one_host_are_named(path, problem):
    warning = lock_warning(Path(path), MOUNTS)
    if problem is None:
        assert warning is None
    else:
        assert warning is not None and problem in warning
        assert warning.startswith(f"--output {path} is on ") and "docs/slurm.md" in warning
