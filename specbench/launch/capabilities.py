"""What the vLLM executable at hand supports, asked once per executable and cached.

`vllm serve --help=<flag>` prints "Arguments matching ..." with the flag's help when the
flag exists and "No group or arguments matching ..." when it does not; it exits 0 in both
cases (vLLM 0.32, /work/handoff/probes/REPORT.md §3), so the text decides.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Mapping

PER_REQUEST_METRICS_FLAG = "per-request-spec-decode-metrics"
HELP_TIMEOUT_S = 180.0


def parse_flag_help(text: str) -> bool | None:
    """True: the flag exists; False: vLLM says no argument matches; None: unknown output."""
    if "No group or arguments matching" in text:
        return False
    if "Arguments matching" in text or "--" + PER_REQUEST_METRICS_FLAG in text:
        return True
    return None


@functools.cache
def _supports(executable: str, flag: str, env_items: tuple[tuple[str, str], ...]) -> bool | None:
    try:
        done = subprocess.run(
            [executable, "serve", f"--help={flag}"],
            capture_output=True,
            text=True,
            timeout=HELP_TIMEOUT_S,
            env=dict(env_items),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_flag_help(done.stdout + done.stderr)


def supports_flag(executable: str, flag: str, env: Mapping[str, str]) -> bool | None:
    """Whether `executable serve` knows `--flag` (None: could not tell); cached."""
    return _supports(executable, flag, tuple(sorted(env.items())))
