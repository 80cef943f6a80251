"""Launch stage: server configs, `vllm serve`/emulator argv, process lifecycle, provenance."""

from specbench.launch.argv import (
    build_argv,
    build_env,
    render_command,
    speculative_config_dict,
    speculative_config_json,
)
from specbench.launch.config import (
    EmulatorOverrides,
    Engine,
    ServerConfig,
    SpeculativeConfig,
    SpeculativeMethod,
)
from specbench.launch.gpus import GpuInventory
from specbench.launch.host import find_vllm_executable
from specbench.launch.process import ServerProcess
from specbench.launch.provenance import ServerProvenance

__all__ = [
    "EmulatorOverrides",
    "Engine",
    "GpuInventory",
    "ServerConfig",
    "ServerProcess",
    "ServerProvenance",
    "SpeculativeConfig",
    "SpeculativeMethod",
    "build_argv",
    "build_env",
    "find_vllm_executable",
    "render_command",
    "speculative_config_dict",
    "speculative_config_json",
]
