"""Readiness of a starting server, and the tail of its log for one-line errors.

A server is ready when `/health` answers 200 and `/v1/models` lists the model. The
process is polled too: an engine that fails at start-up exits, and waiting for `/health`
alone would then hang until the timeout.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from specbench.common.errors import ServerStartFailed

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_ERROR_LINE = re.compile(r"(Error|Exception|error:|Traceback|FAILED|failed)")
_POLL_INTERVAL_S = 0.5
_TAIL_BYTES = 64 * 1024
_MAX_QUOTE_CHARS = 600
#: Lines of a server's log a failure record keeps (a failed cell, a server that would not start).
LOG_TAIL_LINES = 40


def http_get_json(url: str, timeout_s: float = 2.0) -> tuple[int, Any]:
    """GET `url`; (status, parsed JSON or None). Connection failures raise OSError."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        return error.code, None
    try:
        return status, json.loads(body) if body else None
    except ValueError:
        return status, None


def served_models(base_url: str) -> list[str]:
    """Model ids `/v1/models` lists (empty on any failure)."""
    try:
        status, body = http_get_json(f"{base_url}/v1/models")
    except OSError:
        return []
    if status != 200 or not isinstance(body, dict):
        return []
    return [str(item.get("id")) for item in body.get("data", []) if isinstance(item, dict)]


def is_ready(base_url: str, model: str) -> bool:
    """`/health` is 200 and `/v1/models` lists `model`."""
    try:
        status, _ = http_get_json(f"{base_url}/health")
    except OSError:
        return False
    return status == 200 and model in served_models(base_url)


def server_version(base_url: str) -> str | None:
    """`version` from `/version` (vLLM serves it), or None."""
    try:
        status, body = http_get_json(f"{base_url}/version")
    except OSError:
        return None
    if status == 200 and isinstance(body, dict) and body.get("version") is not None:
        return str(body["version"])
    return None


def log_tail(log_path: Path, start_offset: int = 0, max_lines: int = 200) -> list[str]:
    """Last non-empty lines the server wrote since `start_offset`, ANSI colours stripped."""
    try:
        with log_path.open("rb") as handle:
            handle.seek(0, 2)
            end = handle.tell()
            handle.seek(max(start_offset, end - _TAIL_BYTES))
            data = handle.read()
    except OSError:
        return []
    text = _ANSI.sub("", data.decode("utf-8", errors="replace"))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-max_lines:]


def quote_log(lines: list[str]) -> str:
    """The lines that explain a failure, on one line: the last error-looking one, the last.

    vLLM's argparse errors and Python exceptions end the log; the last error-like line
    usually names the cause even when shutdown noise follows it.
    """
    if not lines:
        return "(log is empty)"
    errors = [line for line in lines if _ERROR_LINE.search(line)]
    picked = [errors[-1]] if errors else []
    if lines[-1] not in picked:
        picked.append(lines[-1])
    quoted = " | ".join(picked)
    if len(quoted) > _MAX_QUOTE_CHARS:
        quoted = quoted[: _MAX_QUOTE_CHARS - 3] + "..."
    return quoted


def wait_ready(
    process: subprocess.Popen[bytes],
    *,
    base_url: str,
    model: str,
    timeout_s: float,
    describe: str,
    log_path: Path,
    log_offset: int,
) -> None:
    """Block until ready; raise ServerStartFailed quoting the log on exit or timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        code = process.poll()
        if code is not None:
            lines = log_tail(log_path, log_offset)
            raise ServerStartFailed(
                f"{describe} exited with code {code} before it was ready; {log_path}: "
                f"{quote_log(lines)}",
                lines[-LOG_TAIL_LINES:],
            )
        if is_ready(base_url, model):
            return
        if time.monotonic() > deadline:
            lines = log_tail(log_path, log_offset)
            raise ServerStartFailed(
                f"{describe} was not ready after {timeout_s:g} s (/health 200 and {model!r} in "
                f"/v1/models at {base_url}); {log_path}: {quote_log(lines)}",
                lines[-LOG_TAIL_LINES:],
            )
        time.sleep(_POLL_INTERVAL_S)
