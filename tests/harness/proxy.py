"""A fault-injecting HTTP proxy on 127.0.0.1: it streams every request through to an
upstream server (which a test may switch mid-run: a "restarted" server) and breaks every
`every`-th generation request on purpose."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from aiohttp import ClientSession, web

from harness.emulator import free_port

_HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}
#: Proxy faults: how every `every`-th generation request (POST /v1/...) is broken.
PROXY_FAULTS = (
    "pass",  # forward untouched
    "http500",  # answer 500 without forwarding
    "stall",  # forward a few events, then send nothing for `stall_s`
    "reset",  # forward a few events, then abort the TCP connection
    "truncate",  # forward a few events, then end the response cleanly (no [DONE])
    "invalid_json",  # replace one event's payload with a cut-off JSON object
    "malformed_sse",  # insert lines that are no SSE field, comments and unknown fields
    "html",  # not vLLM at all: every path answers 200 with an HTML page
    "not_found",  # not vLLM at all: every path answers 404
)


class FaultProxy:
    """Forwards every request to `upstream` (switchable) and breaks generations on purpose."""

    def __init__(self, upstream: str, fault: str = "pass", every: int = 1) -> None:
        assert fault in PROXY_FAULTS, fault
        self.upstream = upstream
        self.fault = fault
        self.every = every
        self.after_events = 3
        self.stall_s = 8.0
        self.generations = 0
        self.hits = 0
        self.url = ""

    def switch(self, upstream: str) -> None:
        """Send every later request to `upstream` (a server restarted elsewhere)."""
        self.upstream = upstream

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if self.fault == "html":
            return web.Response(
                text="<html><body>a web page</body></html>", content_type="text/html"
            )
        if self.fault == "not_found":
            return web.Response(status=404, text="404: Not Found")
        generation = request.method == "POST" and request.path.startswith("/v1/")
        hit = False
        if generation:
            self.generations += 1
            hit = self.fault != "pass" and self.generations % self.every == 0
            self.hits += hit
        if hit and self.fault == "http500":
            return web.json_response({"error": {"message": "injected fault"}}, status=500)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        body = await request.read()
        async with (
            ClientSession() as session,
            session.request(
                request.method, self.upstream + request.path_qs, data=body, headers=headers
            ) as upstream,
        ):
            response = web.StreamResponse(
                status=upstream.status,
                headers={k: v for k, v in upstream.headers.items() if k.lower() not in _HOP},
            )
            await response.prepare(request)
            try:
                if not hit:
                    async for chunk in upstream.content.iter_any():
                        await response.write(chunk)
                else:
                    await self._broken(request, response, upstream)
                    if self.fault in ("stall", "reset"):
                        return response
                await response.write_eof()
            except (ConnectionError, RuntimeError):
                pass  # the client went away (a timeout it hit, or a reset we made)
            return response

    async def _broken(self, request: Any, response: Any, upstream: Any) -> None:
        buffer, events = b"", 0
        async for chunk in upstream.content.iter_any():
            buffer += chunk
            *complete, buffer = buffer.split(b"\n\n")
            for event in complete:
                events += 1
                if events == self.after_events:
                    if self.fault == "stall":
                        await asyncio.sleep(self.stall_s)
                        request.transport.abort()
                        return
                    if self.fault == "reset":
                        request.transport.abort()
                        return
                    if self.fault == "truncate":
                        return
                    if self.fault == "invalid_json":
                        event = b'data: {"choices": [{"index": 0, "delta": {"content": "x'
                if self.fault == "malformed_sse":
                    await response.write(
                        b"not an sse field\n\n: a comment\n\nevent: odd\nid: 7\n\n"
                    )
                await response.write(event + b"\n\n")
        if buffer:
            await response.write(buffer)


@contextlib.contextmanager
def fault_proxy(upstream: str, fault: str = "pass", every: int = 1) -> Iterator[FaultProxy]:
    """The proxy serving on a free port in a background thread, for the block's duration."""
    proxy = FaultProxy(upstream, fault, every)
    port = free_port()
    proxy.url = f"http://127.0.0.1:{port}"
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    runner = web.AppRunner(app, handler_cancellation=True)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
