"""A headless Debian Chromium driven by Playwright, for the report.html tests.

`open_page(path)` launches Debian's `chromium` (`make chromium`) as Playwright's
`executable_path`: no browser is ever downloaded (`playwright install` never runs). The
network is blocked three ways: every host resolves nowhere, the proxy is a closed port,
and the page's context is offline. It loads the file and records what a reader's browser
would show: console messages (a CSP violation lands there), uncaught exceptions, failed
requests and every request the page made.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# The network is blocked: no name resolves and the proxy is a closed port.
BLOCKED_NETWORK = ("--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9")


@dataclass
class Loaded:
    """One loaded page (Playwright's) and everything it reported."""

    page: Page
    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)  # (type, text)
    exceptions: list[str] = field(default_factory=list)  # uncaught, and failed requests

    @property
    def errors(self) -> list[str]:
        """Console errors, then uncaught exceptions and failed requests."""
        return [text for kind, text in self.console if kind == "error"] + self.exceptions

    def evaluate(self, expression: str) -> Any:
        """The expression's value (JSON-able; a promise is awaited)."""
        return self.page.evaluate(expression)

    def screenshot(self, path: Path) -> None:
        """A PNG of the whole page at the viewport's width."""
        self.page.screenshot(path=path, full_page=True)

    def pdf(self, path: Path, paper_in: tuple[float, float]) -> None:
        """Print to PDF on paper `paper_in` (width, height in inches), print CSS applied."""
        width, height = paper_in
        self.page.pdf(path=path, width=f"{width}in", height=f"{height}in")


@contextmanager
def open_page(path: Path, width: int = 1280, height: int = 900) -> Iterator[Loaded]:
    """Chromium with `path` loaded (file://), events recorded from before the first byte."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BLOCKED_NETWORK)
        try:
            context = browser.new_context(viewport={"width": width, "height": height}, offline=True)
            loaded = Loaded(context.new_page())
            loaded.page.on("request", lambda request: loaded.requests.append(request.url))
            loaded.page.on("console", lambda m: loaded.console.append((m.type, m.text)))
            loaded.page.on("pageerror", lambda error: loaded.exceptions.append(str(error)))
            loaded.page.on(
                "requestfailed",
                lambda r: loaded.exceptions.append(f"{r.url}: {r.failure}"),
            )
            loaded.page.goto(path.resolve().as_uri(), wait_until="load")
            yield loaded
        finally:
            browser.close()


def pdf_text(path: Path) -> str:
    """The PDF's text (poppler's pdftotext, installed by `make chromium`), layout kept."""
    result = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    )
    return result.stdout
