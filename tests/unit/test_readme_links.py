"""README.md is the docs site's front page: every link it gives lands on a file and a heading.

`mkdocs build --strict` (make lint) checks the links inside docs/; README.md lives outside
the site, so its links to `docs/PAGE.md#anchor` are checked here, with the slug rule of
Python-Markdown's toc extension that mkdocs uses for the anchors.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _slug(heading: str) -> str:
    """Python-Markdown's toc slugify: NFKD to ASCII, drop non-word characters, join with -."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def test_every_readme_link_lands_on_a_file_and_a_heading() -> None:
    links = _LINK.findall((REPO / "README.md").read_text(encoding="utf-8"))
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) >= 20  # the front page links the whole site
    for link in local:
        path, _, anchor = link.partition("#")
        target = REPO / path
        assert target.exists(), f"README.md links {link}: no {path}"
        if anchor:
            assert anchor in _anchors(target), f"README.md links {link}: no such heading"


def test_the_slug_rule_matches_mkdocs_on_a_command_heading() -> None:
    assert _slug("`specbench run` — a whole campaign from a suite") == (
        "specbench-run-a-whole-campaign-from-a-suite"
    )
