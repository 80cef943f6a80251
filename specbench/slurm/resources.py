"""The GPU request of one shard's job: what its server occupies, unless `[slurm]` says.

A vLLM server occupies TP × PP × DP GPUs (`ServerConfig.gpus`), split evenly over the
job's `nodes`: `--gpus-per-node=TP×PP×DP/nodes`. An emulator server needs no GPU, so a
suite of emulator servers requests none (the test Slurm's nodes have no GPU). `[slurm]`
(or the CLI) overrides the request for every shard: `gpus_per_node = N` requests N per
node, `gpus_per_node = 0` requests none (vLLM's CPU build), `gres = "gpu:h200:8"` is passed
as given.
"""

from __future__ import annotations

from dataclasses import dataclass

from specbench.common.errors import SpecbenchError
from specbench.suite import SlurmSettings, Suite


@dataclass(frozen=True)
class GpuRequest:
    """The sbatch options of a shard's GPU request and where they come from."""

    directives: tuple[str, ...]
    source: str

    def describe(self) -> str:
        """`--gpus-per-node=8 (TP 8 × PP 1 × DP 1 over 1 node)`, or `no GPU (…)`."""
        asked = " ".join(self.directives) if self.directives else "no GPU"
        return f"{asked} ({self.source})"


def gpu_request(suite: Suite, server: str, settings: SlurmSettings) -> GpuRequest:
    """The GPU request of a job running `server` with `settings`; bad splits are one line."""
    if settings.gres:
        return GpuRequest((f"--gres={settings.gres}",), "slurm.gres")
    if settings.gpus_per_node is not None:
        if settings.gpus_per_node == 0:
            return GpuRequest((), "slurm.gpus_per_node = 0")
        return GpuRequest((f"--gpus-per-node={settings.gpus_per_node}",), "slurm.gpus_per_node")
    config = suite.servers[server]
    if config.engine == "emulator":
        return GpuRequest((), "emulator server")
    parallel = (
        f"TP {config.tensor_parallel_size} × PP {config.pipeline_parallel_size} × "
        f"DP {config.data_parallel_size}"
    )
    if config.gpus % settings.nodes:
        raise SpecbenchError(
            f"servers.{server}: {parallel} = {config.gpus} GPUs do not split evenly over "
            f"slurm.nodes = {settings.nodes}; set slurm.gpus_per_node (or --gpus-per-node)"
        )
    per_node = config.gpus // settings.nodes
    nodes = f"{settings.nodes} node{'s' if settings.nodes > 1 else ''}"
    return GpuRequest((f"--gpus-per-node={per_node}",), f"{parallel} over {nodes}")
