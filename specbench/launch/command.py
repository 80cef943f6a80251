"""What a server config is started with: the executable, argv and environment, resolved.

`ServerProcess` starts exactly this, and `run --dry-run` prints it, so the dry run shows
the command the launch really uses (one source for both). Resolving checks what can be
checked without starting anything: the vllm executable exists; the GPUs (`launch.gpus`):
enough of them, as the vendor's tool lists them; when no tool answers, a CPU build of vLLM
(`0.32.0+cpu`) needs none, and any other start is refused unless `--gpus-unchecked`
acknowledges it (then it says so in one line); whether the executable has
`--per-request-spec-decode-metrics` (by its version and its help: left out, with a note,
when it does not) and `--enable-per-request-metrics` (the server's own per-request timing,
which decode rates prefer to the client's clock: added whenever it is known and
`--disable-log-stats`, which vLLM refuses beside it, is not in extra_args; the emulator
always gets it).

A config with a `launcher` is started in a container (`launch.container`): the argv is
the launcher's, with the container's name and `-e NAME` per variable, then `vllm serve
...`; every question (`--version`, `--help=`) is asked of the image's vllm, and the image
must exist and answer `vllm --version` before anything starts.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.launch.argv import PER_REQUEST_TIMING_ARG, build_argv, build_env, render_command
from specbench.launch.capabilities import (
    PER_REQUEST_KEYWORD,
    PER_REQUEST_METRICS_FLAG,
    PER_REQUEST_TIMING_FLAG,
    Executable,
    installed_version,
    is_cpu_build,
    spec_metrics_absence,
    supports_flag,
    version_answer,
    version_matches,
)
from specbench.launch.config import ServerConfig
from specbench.launch.container import ContainerStart, resolve_container
from specbench.launch.gpus import GpuInventory, GpuProbe, available_gpus, probe_gpus
from specbench.launch.host import find_vllm_executable
from specbench.launch.provenance import redact_argv, redact_value

#: The option that starts vLLM servers on a node where no GPU tool answers.
GPUS_UNCHECKED_OPTION = "--gpus-unchecked"


@dataclass(frozen=True)
class LaunchCommand:
    """A config resolved for starting: `argv` lacks only `--host` and `--port`."""

    config: ServerConfig
    executable: str
    argv: list[str]
    env: dict[str, str]
    notes: tuple[str, ...]
    inventory: GpuInventory | None
    #: `--enable-per-request-metrics` is added (the server times each request itself).
    per_request_timing: bool = False
    #: How the GPUs were checked, one line (None: the emulator, which uses none).
    gpu_check: str | None = None
    #: No GPU tool answered and --gpus-unchecked started it anyway.
    gpus_unchecked: bool = False
    #: The container it starts in (a `launcher`); None: a process on this machine.
    container: ContainerStart | None = None

    def argv_at(self, host: str, port: int) -> list[str]:
        """The argv with the address the server binds."""
        prefix = self.container.prefix() if self.container is not None else []
        return prefix + build_argv(
            self.config,
            vllm_executable=self.executable,
            host=host,
            port=port,
            per_request_timing=self.per_request_timing,
        )

    def shown(self, argv: list[str] | None = None) -> str:
        """One shell line: the config's own variables and the argv, secrets redacted."""
        variables = {key: redact_value(key, value) for key, value in self.config.env.items()}
        return render_command(redact_argv(self.argv if argv is None else argv), variables)


def launch_command(
    config: ServerConfig,
    *,
    name: str,
    vllm_bin: str | Path | None,
    base_env: Mapping[str, str],
    gpus_unchecked: bool = False,
) -> LaunchCommand:
    """Resolve `config` for starting; bad input (no executable, too few GPUs, no GPU tool
    answering without `gpus_unchecked`) is one line."""
    env = build_env(config, base_env)
    if config.engine != "vllm":
        argv = build_argv(config, per_request_timing=True)
        return LaunchCommand(config, "vllm", argv, env, (), None, True)
    notes: list[str] = []
    container: ContainerStart | None = None
    executable = "vllm"
    asked: Executable
    if config.launcher is not None:
        container = resolve_container(
            config.launcher, server=name, env_names=list(config.env), env=env
        )
        asked = container.probe()
        _check_vllm_inside(container, asked, name, env)
    else:
        executable = asked = find_vllm_executable(vllm_bin, env)
    probe = probe_gpus(env)
    check, unchecked = _check_gpus(config, name, env, probe, asked, gpus_unchecked)
    if config.vllm_version is not None:
        installed = installed_version(asked, env)
        if not version_matches(config.vllm_version, installed):
            where = (
                "use an image with that vLLM in launcher"
                if container
                else "install that vLLM, point --vllm-bin at it"
            )
            raise SpecbenchError(
                f"server {name!r}: the suite asks vllm_version = {config.vllm_version!r}, "
                f"`{_shown(asked)} --version` says {installed!r}; {where}, or change "
                "vllm_version"
            )
    if config.is_speculative and config.per_request_spec_decode_metrics:
        listed = supports_flag(asked, PER_REQUEST_METRICS_FLAG, env, PER_REQUEST_KEYWORD)
        # Only asked when the help does not list the flag (the version is another CLI start
        # for an executable that is not a console script).
        absent = None
        if not listed:
            absent = spec_metrics_absence(installed_version(asked, env), listed)
        if absent is not None:
            # Such a vLLM refuses to start with the flag: leave it out, say so.
            notes.append(
                f"left out --{PER_REQUEST_METRICS_FLAG}: {absent} (per-category AL falls "
                "back to tokens per chunk, an estimate)"
            )
            config = config.model_copy(update={"per_request_spec_decode_metrics": False})
    timing = _asks_timing(config, asked, env, notes)
    argv = build_argv(config, vllm_executable=executable, per_request_timing=timing)
    if container is not None:
        argv = container.prefix() + argv
    return LaunchCommand(
        config,
        executable,
        argv,
        env,
        tuple(notes),
        probe.inventory,
        timing,
        gpu_check=check,
        gpus_unchecked=unchecked,
        container=container,
    )


def _shown(executable: Executable) -> str:
    """The executable as a note or error names it: its path, or the container's command."""
    return executable if isinstance(executable, str) else shlex.join(executable)


def _check_vllm_inside(
    container: ContainerStart, asked: Executable, name: str, env: Mapping[str, str]
) -> None:
    """The image's vllm must answer `--version` before any server starts."""
    version, said = version_answer(asked, env)
    if version is None:
        raise SpecbenchError(
            f"server {name!r}: launcher: `vllm --version` in image "
            f"{container.launcher.image!r} gave no version ({said}); use an image with "
            "vLLM installed (e.g. rocm/vllm), or fix launcher"
        )


def _check_gpus(
    config: ServerConfig,
    name: str,
    env: Mapping[str, str],
    probe: GpuProbe,
    executable: Executable,
    gpus_unchecked: bool,
) -> tuple[str, bool]:
    """The GPU check's line and whether the start goes unchecked; one line of bad input
    when the server cannot have its GPUs."""
    asks = (
        f"TP × PP × DP = {config.tensor_parallel_size} × {config.pipeline_parallel_size} × "
        f"{config.data_parallel_size} = {config.gpus} GPUs"
    )
    visible = available_gpus(env, probe.inventory)
    if visible is not None and config.gpus > visible:
        raise SpecbenchError(f"server {name!r} needs {asks}, only {visible} visible")
    if probe.inventory is not None:
        return probe.inventory.summary(), False
    version = installed_version(executable, env)
    if is_cpu_build(version):
        return f"none used: vLLM {version} is a CPU build; {probe.unanswered()}", False
    if not gpus_unchecked:
        raise SpecbenchError(
            f"server {name!r} needs {asks} and {probe.unanswered()}: run where one of them "
            f"works, or pass {GPUS_UNCHECKED_OPTION} to start it without the check"
        )
    return f"unchecked: {probe.unanswered()}; started anyway ({GPUS_UNCHECKED_OPTION})", True


def _asks_timing(
    config: ServerConfig, executable: Executable, env: Mapping[str, str], notes: list[str]
) -> bool:
    """Whether to add `--enable-per-request-metrics` to a vLLM start (a note when not)."""
    given = {arg.split("=", 1)[0] for arg in config.extra_args}
    if given & {PER_REQUEST_TIMING_ARG, "--no-enable-per-request-metrics"}:
        return False  # the suite decides, in extra_args
    if "--disable-log-stats" in given:
        notes.append(
            f"--disable-log-stats in extra_args: started without {PER_REQUEST_TIMING_ARG} "
            "(vLLM refuses both); decode times come from the client's clock"
        )
        return False
    known = supports_flag(executable, PER_REQUEST_TIMING_FLAG, env, PER_REQUEST_KEYWORD)
    if not known:
        notes.append(
            f"{_shown(executable)} has no {PER_REQUEST_TIMING_ARG}"
            + (" (or could not tell)" if known is None else "")
            + ": decode times come from the client's clock"
        )
    return bool(known)
