"""Is the Hugging Face hub reachable? One TCP connect, bounded, before `datasets` tries.

Offline without `HF_HUB_OFFLINE=1`, `datasets` and `huggingface_hub` retry with back-off
and spend about 24 s before their error; a connect to the endpoint (or to the proxy that
would carry the request) answers in milliseconds when the network is down, and the whole
probe is capped at `TIMEOUT_S` even when name resolution hangs.
"""

from __future__ import annotations

import socket
import threading
import urllib.request
from urllib.parse import urlsplit

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Connect timeout, and the cap on the whole probe (name resolution included).
TIMEOUT_S = 1.5


def probe_target(endpoint: str) -> tuple[str, int]:
    """The host and port a request to `endpoint` would connect to first: its proxy, if the
    environment sets one that applies (`HTTPS_PROXY`, `NO_PROXY`, ...), else the endpoint."""
    parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
    scheme = parts.scheme or "https"
    host = parts.hostname or ""
    proxy = urllib.request.getproxies().get(scheme) or urllib.request.getproxies().get("all")
    if proxy and host and not urllib.request.proxy_bypass(host):
        proxied = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if proxied.hostname:
            return proxied.hostname, proxied.port or (443 if proxied.scheme == "https" else 80)
    return host, parts.port or (80 if scheme == "http" else 443)


def unreachable(endpoint: str, timeout_s: float = TIMEOUT_S) -> str | None:
    """Why `endpoint` cannot be reached (one short phrase), or None when a TCP connect to it
    (or its proxy) succeeds within `timeout_s`."""
    host, port = probe_target(endpoint)
    if not host:
        return f"{endpoint!r} names no host"
    outcome: list[str | None] = []

    def connect() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout_s).close()
            outcome.append(None)
        except OSError as error:
            outcome.append(error.strerror or type(error).__name__)

    # getaddrinfo has no timeout of its own: a daemon thread keeps a hung resolver off the cap.
    worker = threading.Thread(target=connect, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not outcome:
        return f"no answer from {host}:{port} within {timeout_s:g} s"
    reason = outcome[0]
    return None if reason is None else f"{host}:{port}: {reason}"
