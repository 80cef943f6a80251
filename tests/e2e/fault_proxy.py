"""A fault-injecting HTTP proxy on 127.0.0.1 for the fault tests: it streams every request
through to an upstream server, which the test may switch mid-run (a "restarted" server)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator

import aiohttp
from aiohttp import web

_HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}


class SwitchingProxy:
    """Forwards to `upstream`; `switch(url)` sends every later request elsewhere."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.url = ""

    def switch(self, upstream: str) -> None:
        self.upstream = upstream

    async def handle(self, request: web.Request) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        async with (
            aiohttp.ClientSession() as session,
            session.request(
                request.method,
                self.upstream + request.path_qs,
                data=await request.read(),
                headers=headers,
            ) as upstream,
        ):
            response = web.StreamResponse(
                status=upstream.status,
                headers={k: v for k, v in upstream.headers.items() if k.lower() not in _HOP},
            )
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response


@contextlib.contextmanager
def switching_proxy(upstream: str) -> Iterator[SwitchingProxy]:
    """The proxy serving on a free port in a background thread, for the block's duration."""
    proxy = SwitchingProxy(upstream)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proxy.url = f"http://127.0.0.1:{port}"
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
