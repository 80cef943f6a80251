"""The hub reachability probe on real local sockets: open, closed, and one that never answers."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest

from specbench.data.hub_reach import TIMEOUT_S, probe_target, unreachable


def closed_port() -> int:
    """A local port nobody listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def listening(backlog_full: bool = False) -> Iterator[int]:
    """A local listening port; with `backlog_full`, its accept queue full so that a further
    connect gets no answer (Linux drops the SYN), as behind a firewall that drops packets."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = int(server.getsockname()[1])
    waiting = []
    try:
        if backlog_full:
            for _ in range(2):
                client = socket.socket()
                client.settimeout(0.3)
                with suppress(TimeoutError):
                    client.connect(("127.0.0.1", port))
                waiting.append(client)
        yield port
    finally:
        for client in waiting:
            client.close()
        server.close()


def test_a_listening_endpoint_is_reachable() -> None:
    with listening() as port:
        assert unreachable(f"http://127.0.0.1:{port}") is None


def test_a_closed_port_is_unreachable_at_once_and_says_why() -> None:
    port = closed_port()
    start = time.perf_counter()
    reason = unreachable(f"http://127.0.0.1:{port}")
    elapsed = time.perf_counter() - start
    assert reason == f"127.0.0.1:{port}: Connection refused"
    assert elapsed < 0.5, elapsed


def test_an_endpoint_that_never_answers_costs_the_timeout_and_no_more() -> None:
    with listening(backlog_full=True) as port:
        start = time.perf_counter()
        reason = unreachable(f"http://127.0.0.1:{port}", timeout_s=0.5)
        elapsed = time.perf_counter() - start
    assert reason is not None and f"127.0.0.1:{port}" in reason
    assert 0.4 < elapsed < 0.5 + 0.5, elapsed
    assert TIMEOUT_S < 2  # the whole probe stays under the 2 s the requirement allows


def test_the_probe_goes_to_the_proxy_the_request_would_use(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    assert probe_target("https://huggingface.co") == ("huggingface.co", 443)
    assert probe_target("http://mirror.internal:8080/") == ("mirror.internal", 8080)
    monkeypatch.setenv("https_proxy", "http://proxy.corp:3128")
    assert probe_target("https://huggingface.co") == ("proxy.corp", 3128)
    monkeypatch.setenv("no_proxy", "huggingface.co")
    assert probe_target("https://huggingface.co") == ("huggingface.co", 443)


def test_an_endpoint_without_a_host_is_named() -> None:
    assert unreachable("https://") == "'https://' names no host"
