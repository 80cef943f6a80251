"""The node's GPUs as the vendor's tool reports them: product, count, VRAM, driver, ROCm/CUDA.

The tools are tried in order and the first that lists a GPU answers:

- `amd-smi static --asic --vram --driver --json`: one entry per GPU with `asic.market_name`,
  `vram.size` (`{"value": N, "unit": "MB"}`, MiB in fact) and `driver.version`; a bare list
  before AMD SMI 26 (ROCm 6.x), wrapped as `{"gpu_data": [...]}` from 26 on (ROCm 7). Then
  `amd-smi version --json` for `rocm_version`.
- `rocm-smi --showproductname --showmeminfo vram --showdriverversion --json` (ROCm before
  amd-smi): `{"card0": {"Card Series": ..., "VRAM Total Memory (B)": ...}, "system":
  {"Driver version": ...}}`; it names no ROCm version.
- `nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader,nounits`
  (one `name, MiB, driver` line per GPU), then `nvidia-smi --version` for `CUDA Version`.

Each output is parsed in `launch.gpu_output`; one that lists no GPU (malformed, empty, a
warning only) is a tool that did not answer, with the reason kept for the one line that
says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import Field

from specbench.common.model import Frozen
from specbench.launch.gpu_output import (
    GpuFacts,
    parse_amd_smi_static,
    parse_amd_smi_version,
    parse_nvidia_smi_query,
    parse_nvidia_smi_version,
    parse_rocm_smi,
)

_VISIBLE_DEVICE_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)
_OUTPUT_LIMIT = 20_000


class GpuInventory(Frozen):
    """What the GPU vendor's tool reported on the node (the manifest's `gpu_inventory`)."""

    tool: str = Field(description="The tool that answered: amd-smi, rocm-smi or nvidia-smi.")
    output: str = Field(
        description="Each command run, as `$ COMMAND`, and its standard output verbatim "
        "(truncated to 20,000 characters)."
    )
    num_gpus: int | None = Field(description="GPUs the tool listed; None if unparsed.")
    product: str | None = Field(
        default=None,
        description="Product name (amd-smi asic.market_name, rocm-smi Card Series, "
        "nvidia-smi name); distinct names joined by ', ' when the GPUs differ.",
    )
    vram_mib: int | None = Field(
        default=None, description="Memory of one GPU in MiB (the smallest when they differ)."
    )
    driver: str | None = Field(default=None, description="Kernel driver version.")
    rocm_version: str | None = Field(default=None, description="From `amd-smi version`.")
    cuda_version: str | None = Field(default=None, description="From `nvidia-smi --version`.")

    def summary(self) -> str:
        """One line: `8 × AMD Instinct MI355X, 294,896 MiB each, driver 6.16.6, ROCm 7.2.0
        (amd-smi)`."""
        count = "?" if self.num_gpus is None else str(self.num_gpus)
        parts = [f"{count} × {self.product or 'unnamed GPU'}"]
        if self.vram_mib is not None:
            parts.append(f"{self.vram_mib:,} MiB each")
        if self.driver:
            parts.append(f"driver {self.driver}")
        if self.rocm_version:
            parts.append(f"ROCm {self.rocm_version}")
        if self.cuda_version:
            parts.append(f"CUDA {self.cuda_version}")
        return ", ".join(parts) + f" ({self.tool})"


@dataclass(frozen=True)
class GpuProbe:
    """The first tool's answer, or why each tool gave none (`amd-smi: not found`)."""

    inventory: GpuInventory | None
    silent: tuple[str, ...] = ()

    def unanswered(self) -> str:
        """One line: `no GPU tool answered (amd-smi: not found; ...)`."""
        return "no GPU tool answered (" + "; ".join(self.silent) + ")"


@dataclass(frozen=True)
class _Tool:
    name: str
    inventory_args: tuple[str, ...]
    parse: Callable[[str], GpuFacts | None]
    version_args: tuple[str, ...] = ()
    parse_version: Callable[[str], str | None] = lambda _: None
    version_field: str = ""


_TOOLS = (
    _Tool(
        "amd-smi",
        ("static", "--asic", "--vram", "--driver", "--json"),
        parse_amd_smi_static,
        ("version", "--json"),
        parse_amd_smi_version,
        "rocm_version",
    ),
    _Tool(
        "rocm-smi",
        ("--showproductname", "--showmeminfo", "vram", "--showdriverversion", "--json"),
        parse_rocm_smi,
    ),
    _Tool(
        "nvidia-smi",
        ("--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits"),
        parse_nvidia_smi_query,
        ("--version",),
        parse_nvidia_smi_version,
        "cuda_version",
    ),
)


def _run(argv: list[str], timeout_s: float) -> subprocess.CompletedProcess[str] | str:
    """The finished command, or why it did not finish."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return f"no answer in {timeout_s:g} s"
    except OSError as error:
        return error.strerror or type(error).__name__


def _ask(tool: _Tool, path: str | None, timeout_s: float) -> GpuInventory | str:
    """The tool's inventory, or why it gave none."""
    executable = shutil.which(tool.name, path=path)
    if executable is None:
        return "not found"
    done = _run([executable, *tool.inventory_args], timeout_s)
    if isinstance(done, str):
        return done
    if done.returncode != 0:
        return f"exit {done.returncode}"
    facts = tool.parse(done.stdout)
    if facts is None:
        return "listed no GPU"
    output = f"$ {tool.name} {' '.join(tool.inventory_args)}\n{done.stdout}"
    extra: dict[str, str | None] = {}
    if tool.version_args:
        version = _run([executable, *tool.version_args], timeout_s)
        if not isinstance(version, str) and version.returncode == 0:
            output += f"\n$ {tool.name} {' '.join(tool.version_args)}\n{version.stdout}"
            extra[tool.version_field] = tool.parse_version(version.stdout)
    return GpuInventory(
        tool=tool.name,
        output=output[:_OUTPUT_LIMIT],
        num_gpus=facts.count,
        product=facts.product,
        vram_mib=facts.vram_mib,
        driver=facts.driver,
        **extra,
    )


def probe_gpus(env: Mapping[str, str] | None = None, timeout_s: float = 15.0) -> GpuProbe:
    """Ask amd-smi, rocm-smi and nvidia-smi in turn (on `env`'s PATH, else this process's)
    until one lists a GPU."""
    path = (env or {}).get("PATH") or os.environ.get("PATH")
    silent: list[str] = []
    for tool in _TOOLS:
        answer = _ask(tool, path, timeout_s)
        if isinstance(answer, GpuInventory):
            return GpuProbe(answer, tuple(silent))
        silent.append(f"{tool.name}: {answer}")
    return GpuProbe(None, tuple(silent))


def visible_device_count(env: Mapping[str, str]) -> int | None:
    """GPUs a `*_VISIBLE_DEVICES` variable allows, or None if none is set (non-empty)."""
    for name in _VISIBLE_DEVICE_VARS:
        value = env.get(name, "").strip()
        if value:
            return len([item for item in value.split(",") if item.strip()])
    return None


def available_gpus(env: Mapping[str, str], inventory: GpuInventory | None) -> int | None:
    """GPUs a server may use: the visible-devices list, else the inventory; None if unknown."""
    visible = visible_device_count(env)
    if visible is not None:
        return visible
    return inventory.num_gpus if inventory is not None else None
