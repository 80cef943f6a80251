"""A headless Debian Chromium driven over the DevTools protocol (CDP), for report.html tests.

`open_page(path)` starts `/usr/bin/chromium` with a fresh profile, no network (every host
resolves nowhere, a dead proxy, the page's network emulated offline), loads the file and
records what a reader's browser would show: console messages, uncaught exceptions, log
errors (a blocked request or a CSP violation lands there) and every request the page made.
It speaks CDP over the browser's websocket with aiohttp (a specbench dependency): no
browser download, no browser-automation package.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--remote-debugging-port=0",
    # The network is blocked: no name resolves and the proxy is a closed port.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",
)
START_TIMEOUT_S = 30.0


@dataclass
class Page:
    """One loaded page: a CDP session on it and everything it reported."""

    ws: aiohttp.ClientWebSocketResponse
    url: str
    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)  # (level, text)
    exceptions: list[str] = field(default_factory=list)
    _next_id: int = 0
    _waiting: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _events: dict[str, asyncio.Event] = field(default_factory=dict)

    @property
    def errors(self) -> list[str]:
        """Console errors, log errors and uncaught exceptions, in that order."""
        return [text for level, text in self.console if level == "error"] + self.exceptions

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next_id] = future
        await self.ws.send_str(
            json.dumps({"id": self._next_id, "method": method, "params": params})
        )
        reply = await asyncio.wait_for(future, 60)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return dict(reply.get("result", {}))

    async def evaluate(self, expression: str) -> Any:
        """The expression's value (JSON-able), raising on a JavaScript exception."""
        result = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def screenshot(self, path: Path, width: int, height: int | None = None) -> None:
        """A PNG at `width` CSS pixels: the whole page, or its first `height` pixels."""
        full = await self.evaluate("document.documentElement.scrollHeight")
        shown = min(int(full), height) if height else int(full)
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=shown,
            deviceScaleFactor=1,
            mobile=False,
        )
        data = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        await asyncio.to_thread(path.write_bytes, base64.b64decode(data["data"]))

    async def pdf(self, path: Path, paper_in: tuple[float, float]) -> None:
        """Print to PDF on paper `paper_in` (width, height in inches), print CSS applied."""
        data = await self.send(
            "Page.printToPDF",
            paperWidth=paper_in[0],
            paperHeight=paper_in[1],
            printBackground=False,
            preferCSSPageSize=False,
        )
        await asyncio.to_thread(path.write_bytes, base64.b64decode(data["data"]))

    async def wait_event(self, method: str, timeout_s: float = 30.0) -> None:
        await asyncio.wait_for(self._events.setdefault(method, asyncio.Event()).wait(), timeout_s)

    def handle(self, message: dict[str, Any]) -> None:
        if "id" in message:
            future = self._waiting.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(message)
            return
        method, params = message.get("method", ""), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.console.append((params["type"], text))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.exceptions.append(str(details.get("exception", {}).get("description", details)))
        elif method == "Log.entryAdded":
            entry = params["entry"]
            self.console.append((entry["level"], f"{entry.get('url', '')}: {entry['text']}"))
        self._events.setdefault(method, asyncio.Event()).set()


def _port(profile: Path, process: subprocess.Popen[bytes]) -> int:
    """The DevTools port Chromium chose (it writes DevToolsActivePort into the profile)."""
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chromium exited with {process.returncode}")
        if marker.exists() and marker.read_text().strip():
            return int(marker.read_text().split()[0])
        time.sleep(0.05)
    raise RuntimeError(f"chromium wrote no {marker} in {START_TIMEOUT_S} s")


@asynccontextmanager
async def open_page(path: Path, width: int = 1280, height: int = 900) -> AsyncIterator[Page]:
    """Chromium with `path` loaded (file://), events recorded from before the first byte."""
    profile = Path(tempfile.mkdtemp(prefix="specbench-chromium-"))
    url = path.resolve().as_uri()  # noqa: ASYNC240 (one stat before the browser starts)
    process = subprocess.Popen(  # noqa: ASYNC220 (the browser runs beside the event loop)
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        port = _port(profile, process)
        async with aiohttp.ClientSession() as session:
            async with session.put(f"http://127.0.0.1:{port}/json/new?about:blank") as reply:
                target = await reply.json(content_type=None)
            async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                page = Page(ws=ws, url=url)
                reader = asyncio.create_task(_read(ws, page))
                try:
                    for domain in ("Page", "Runtime", "Log", "Network"):
                        await page.send(f"{domain}.enable")
                    await page.send(
                        "Network.emulateNetworkConditions",
                        offline=True,
                        latency=0,
                        downloadThroughput=-1,
                        uploadThroughput=-1,
                    )
                    await page.send(
                        "Emulation.setDeviceMetricsOverride",
                        width=width,
                        height=height,
                        deviceScaleFactor=1,
                        mobile=False,
                    )
                    await page.send("Page.navigate", url=page.url)
                    await page.wait_event("Page.loadEventFired")
                    yield page
                finally:
                    reader.cancel()
    finally:
        # Its own session: the group holds the browser and every helper process it forked.
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        shutil.rmtree(profile, ignore_errors=True)


async def _read(ws: aiohttp.ClientWebSocketResponse, page: Page) -> None:
    async for message in ws:
        if message.type == aiohttp.WSMsgType.TEXT:
            page.handle(json.loads(message.data))


def pdf_text(path: Path) -> str:
    """The PDF's text (poppler's pdftotext, installed by `make chromium`), layout kept."""
    result = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    )
    return result.stdout
