"""What the vLLM executable at hand supports and which version it is, asked once per
executable and cached.

Each question is a whole vLLM CLI start (about 15 CPU-s on the test machine's 2 cores), so
it is asked once per executable and environment even when several servers start at once:
the first caller asks, the others wait for its answer (`_once`).

`vllm serve --help=<flag>` prints "Arguments matching ..." with the flag's help when the
flag exists and "No group or arguments matching ..." when it does not; it exits 0 in both
cases (vLLM 0.32, /work/handoff/probes/REPORT.md §3), so the text decides. The name
after `--help=` is a keyword: vLLM lists every flag containing it, so one question
(`--help=per-request`) answers for both per-request flags.

The version comes from the executable's Python (`importlib.metadata`, a fraction of a
second) when `vllm` is a console script, else from `vllm --version` (a whole CLI start).
`--per-request-spec-decode-metrics` came in vLLM 0.29 (absent from 0.27.1 and 0.28.0, whose
`serve` refuses it): `spec_metrics_absence` says why a server goes without it.

The executable is a command: `/usr/bin/vllm`, or a container launcher's argv followed by
`vllm` (`docker run ... IMAGE vllm`), so a server started in a container is asked inside it
(there by `vllm --version`: the image's Python is not this machine's).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

PER_REQUEST_METRICS_FLAG = "per-request-spec-decode-metrics"
#: vLLM 0.32's per-request timing (`metrics.generation_time_ms`, ...); refused together
#: with `--disable-log-stats`.
PER_REQUEST_TIMING_FLAG = "enable-per-request-metrics"
#: The `--help=` keyword that lists both per-request flags.
PER_REQUEST_KEYWORD = "per-request"
HELP_TIMEOUT_S = 180.0
#: The first vLLM release with `--per-request-spec-decode-metrics`.
PER_REQUEST_METRICS_SINCE = (0, 29)
_METADATA_VERSION = "from importlib.metadata import version; print(version('vllm'))"


def parse_flag_help(text: str, flag: str = PER_REQUEST_METRICS_FLAG) -> bool | None:
    """True: `--flag` is listed; False: vLLM lists no match, or matches without it; None:
    unknown output."""
    if "No group or arguments matching" in text:
        return False
    if re.search(rf"(?<![\w-])--{re.escape(flag)}(?![\w-])", text):
        return True
    if "Arguments matching" in text:
        return False
    return None


#: The vllm executable, or the argv that runs it (a container launcher's, then `vllm`).
Executable = str | Sequence[str]

_answers: dict[Hashable, object] = {}
_asking: dict[Hashable, threading.Lock] = {}
_guard = threading.Lock()


def _once(key: Hashable, ask: Callable[[], T]) -> T:
    """`ask()`'s answer for `key`, asked by the first caller only; callers that come while
    it is asking wait for that answer rather than ask again (functools.cache would not)."""
    with _guard:
        lock = _asking.setdefault(key, threading.Lock())
    with lock:
        if key not in _answers:
            _answers[key] = ask()
        return _answers[key]  # type: ignore[return-value]


def _ask(
    argv: list[str], env_items: tuple[tuple[str, str], ...]
) -> subprocess.CompletedProcess[str] | None:
    """`argv`'s output within HELP_TIMEOUT_S; None when it could not run or took longer."""
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=HELP_TIMEOUT_S,
            env=dict(env_items),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _words(executable: Executable) -> tuple[str, ...]:
    return (executable,) if isinstance(executable, str) else tuple(executable)


def _help(
    executable: tuple[str, ...], keyword: str, env_items: tuple[tuple[str, str], ...]
) -> str | None:
    def ask() -> str | None:
        done = _ask([*executable, "serve", f"--help={keyword}"], env_items)
        return None if done is None else done.stdout + done.stderr

    return _once(("help", executable, keyword, env_items), ask)


def supports_flag(
    executable: Executable, flag: str, env: Mapping[str, str], keyword: str | None = None
) -> bool | None:
    """Whether `executable serve` knows `--flag` (None: could not tell), asking
    `--help=<keyword>` (default: the flag itself) once per executable and keyword."""
    text = _help(_words(executable), keyword or flag, tuple(sorted(env.items())))
    return None if text is None else parse_flag_help(text, flag)


def _console_script_python(executable: str) -> str | None:
    """The interpreter of a Python console script (`#!/venv/bin/python`), else None."""
    try:
        with Path(executable).open("rb") as script:
            first = script.readline(512).decode(errors="replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    interpreter = first[2:].strip().split(" ")[0]
    if not Path(interpreter).name.startswith("python") or not os.access(interpreter, os.X_OK):
        return None
    return interpreter


def _last_line(done: subprocess.CompletedProcess[str] | None) -> str | None:
    if done is None or done.returncode != 0:
        return None
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return lines[-1] if lines else None


def _version(
    executable: tuple[str, ...], env_items: tuple[tuple[str, str], ...]
) -> tuple[str | None, str]:
    def ask() -> tuple[str | None, str]:
        # A console script on this machine: its package metadata, without a CLI start.
        python = _console_script_python(executable[0]) if len(executable) == 1 else None
        if python is not None:
            found = _last_line(_ask([python, "-c", _METADATA_VERSION], env_items))
            if found is not None:
                return found, found
        done = _ask([*executable, "--version"], env_items)
        if done is None:
            return None, f"it could not run, or took longer than {HELP_TIMEOUT_S:.0f} s"
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
        if done.returncode == 0 and lines:
            return lines[-1], lines[-1]
        said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        return None, f"exit {done.returncode}: {said[-1] if said else 'no output'}"

    return _once(("version", executable, env_items), ask)


def installed_version(executable: Executable, env: Mapping[str, str]) -> str | None:
    """The vLLM release `executable` runs (`0.32.0+cpu`), as its Python's package metadata
    or `executable --version` says; None: neither said. Cached."""
    return _version(_words(executable), tuple(sorted(env.items())))[0]


def version_answer(executable: Executable, env: Mapping[str, str]) -> tuple[str | None, str]:
    """`installed_version`, and what the command said: the version, or its exit status and
    last line of output when it gave none (for the line that refuses it). Cached."""
    return _version(_words(executable), tuple(sorted(env.items())))


def version_matches(pinned: str, reported: str | None) -> bool:
    """Whether a server reporting `reported` is the suite's `vllm_version = pinned`: the
    same, or the same release with a local label (`0.32.0` is met by `0.32.0+cpu`)."""
    return reported is not None and (reported == pinned or reported.startswith(pinned + "+"))


def release(version: str | None) -> tuple[int, ...] | None:
    """The release numbers a version starts with (`0.27.1+rocm` → (0, 27, 1)); None if none."""
    match = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", (version or "").strip())
    if match is None:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def is_cpu_build(version: str | None) -> bool:
    """Whether a vLLM version names a CPU build (`0.32.0+cpu`: the label platform detection
    reads), which uses no GPU."""
    _, _, label = (version or "").partition("+")
    return "cpu" in re.split(r"[.\-_]", label.lower())


def spec_metrics_absence(version: str | None, listed: bool | None) -> str | None:
    """Why a vLLM goes without `--per-request-spec-decode-metrics`, or None to add it.

    `listed` is what its `serve --help` says (None: could not tell). A vLLM that lists the
    flag has it, whatever its version (a nightly before 0.29 may); otherwise a release
    before 0.29 lacks it, and so does a vLLM whose help lists no such flag. Unknown on both
    counts: the flag is added, as a suite asks by default.
    """
    if listed is True:
        return None
    found = release(version)
    since = ".".join(str(part) for part in PER_REQUEST_METRICS_SINCE)
    if found is not None and found < PER_REQUEST_METRICS_SINCE:
        return f"vLLM {version} predates {since}, the release that added it"
    if listed is False:
        return "its `serve --help` lists no such flag"
    return None
