"""Which GPUs a server's energy counts: its own, never the node's.

In order: the server's explicit `gpu_ids` (an attached server, whose launch specbench never
sees); else the devices its launch may see, from its environment (the config's `env` over
specbench's own, as the launch builds it), first TP × PP × DP of them; else the first
TP × PP × DP devices of the node. The visible-devices variables nest as the runtimes nest
them: `ROCR_VISIBLE_DEVICES` picks physical devices, then `HIP_VISIBLE_DEVICES` (or
`CUDA_VISIBLE_DEVICES`, which HIP also reads) indexes into what is left. On Slurm the job's
allocation arrives the same way, through the variables Slurm sets on each node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CountedGpus:
    """The GPU ids (the sources' numbering, as text) and how they were found, in words."""

    ids: tuple[str, ...]
    how: str


def _listed(value: str | None) -> list[str] | None:
    if value is None or not value.strip():
        return None
    return [item.strip() for item in value.split(",") if item.strip()]


def visible_devices(env: Mapping[str, str]) -> tuple[list[str] | None, str | None]:
    """The physical devices the environment lets a process see, and the variables that
    said so; (None, None) when no variable limits them."""
    rocr = _listed(env.get("ROCR_VISIBLE_DEVICES"))
    names = ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
    runtime_name = next((name for name in names if _listed(env.get(name))), None)
    runtime = _listed(env.get(runtime_name)) if runtime_name else None
    if rocr is None and runtime is None:
        return None, None
    if rocr is None:
        return runtime, runtime_name
    if runtime is None:
        return rocr, "ROCR_VISIBLE_DEVICES"
    picked = [rocr[int(i)] for i in runtime if i.isdigit() and int(i) < len(rocr)]
    return picked, f"ROCR_VISIBLE_DEVICES then {runtime_name}"


def counted_gpus(
    gpus: int, env: Mapping[str, str], explicit: Sequence[int] | None = None
) -> CountedGpus:
    """The `gpus` (TP × PP × DP) GPUs a server occupies: `explicit` ids, else the first of
    its visible devices, else devices 0 … gpus − 1."""
    if explicit is not None:
        return CountedGpus(tuple(str(i) for i in explicit), "gpu_ids")
    visible, variables = visible_devices(env)
    if visible is not None:
        return CountedGpus(
            tuple(visible[:gpus]), f"the first {gpus} of {variables}={','.join(visible)}"
        )
    return CountedGpus(
        tuple(str(i) for i in range(gpus)), f"the first {gpus} devices (no *_VISIBLE_DEVICES)"
    )
