"""Stand-ins for amd-smi, rocm-smi and nvidia-smi: executable scripts that print the recorded
outputs in tests/fixtures/gpu_tools (or fail), to put on PATH for the code under test."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gpu_tools"
AMD_SMI_26 = {"static": "amd-smi-26-static-mi355x.json", "version": "amd-smi-26-version.json"}
AMD_SMI_24 = {"static": "amd-smi-24-static-mi300x.json", "version": "amd-smi-24-version.json"}
ROCM_SMI = {"*": "rocm-smi-mi300x.json"}
NVIDIA_SMI = {"--version": "nvidia-smi-version.txt", "*": "nvidia-smi-query-h100.csv"}


def stand_in(bin_dir: Path, tool: str, answers: dict[str, str] | None) -> Path:
    """`bin_dir/tool`: prints the fixture its first argument maps to (`*`: any other), or,
    with `answers` None, fails as a tool does when it finds no driver (stderr, exit 1).

    It needs no PATH (cat by its full path), so a test can set PATH to `bin_dir` alone and
    hide whatever GPU tools the machine itself has."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    cat = shutil.which("cat") or "/bin/cat"
    script = bin_dir / tool
    if answers is None:
        body = f'echo "{tool}: ERROR: driver not initialized" >&2\nexit 1\n'
    else:
        printed = {arg: shlex.quote(str(FIXTURES / name)) for arg, name in answers.items()}
        cases = "".join(
            f"  {'*' if arg == '*' else shlex.quote(arg)}) {cat} {path} ;;\n"
            for arg, path in printed.items()
        )
        body = f'case "$1" in\n{cases}  *) echo "{tool}: unknown command $1" >&2; exit 2 ;;\nesac\n'
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script
