"""The values a server's `gpu_telemetry` may take, declared once: "auto", "off", a
library ("amdsmi", "nvml") or an exporter's http(s) URL (docs/energy.md).

A stage below the server config, which validates the field with `check_setting`;
`energy.sources` opens what a value names.
"""

from __future__ import annotations

import urllib.parse

AUTO = "auto"
OFF = "off"
#: The libraries "auto" tries, in this order: a ROCm node first (the project's main users).
LIBRARY_NAMES = ("amdsmi", "nvml")
ALLOWED = f"{AUTO}, {OFF}, {', '.join(LIBRARY_NAMES)} or an exporter URL http(s)://host:port[/path]"


def check_setting(value: str) -> str | None:
    """The one-line problem with a `gpu_telemetry` value, or None when it is allowed.

    The caller prefixes the field and file it came from.
    """
    if value in (AUTO, OFF, *LIBRARY_NAMES):
        return None
    if "://" not in value:
        return f"{value!r} is not one of {ALLOWED}"
    try:
        parts = urllib.parse.urlsplit(value)
        port = parts.port
    except ValueError as error:
        return f"{value!r} is not a URL ({error}); allowed: {ALLOWED}"
    if parts.scheme not in ("http", "https"):
        return f"{value!r}: the exporter URL must be http or https, not {parts.scheme!r}"
    if not parts.hostname or port is None:
        return f"{value!r}: the exporter URL needs a host and a port (http://host:5000/metrics)"
    return None
