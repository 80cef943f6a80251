"""`data prepare --list-sources`: every upstream repo and file, and the command that fetches it.

Hub repos come from the registry; the files named by URL in rows' `source` values are read
from SPEED-Bench itself (the mirror's copy, or the hub), so SPEED-Bench is fetched first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.data.prepare.families import coser, rolebench
from specbench.data.prepare.registry import SOURCES, source_for
from specbench.data.prepare.resolve import load_speed_bench
from specbench.data.prepare.upstream import Upstream, download_command, url_command
from specbench.data.speed_bench import DEFAULT_REVISION, HUB_REPO, PLACEHOLDER


@dataclass(frozen=True)
class Listed:
    source: str
    repo: str
    revision: str
    files: str
    command: str


def _url_files(upstream: Upstream, configs: list[str], revision: str) -> dict[str, str]:
    """URL → source family, for the placeholder rows of `configs`."""
    urls: dict[str, str] = {}
    for config in configs:
        for row in load_speed_bench(upstream, config, revision):
            family = source_for(row["source"])
            if not row["turns"][0].startswith(PLACEHOLDER) or family is None or not family.by_url:
                continue
            if family.resolve is coser.resolve:
                urls[row["source"].replace("tree", "raw") + "/test/test_set.json"] = family.match
            elif family.resolve is rolebench.resolve:
                split = row["src_id"].split("_")[1]
                url = row["source"].replace("tree", "raw") + f"/{split}/role_specific/test.jsonl"
                urls[url] = family.match
                urls[rolebench.ROLES_URL] = family.match
            else:
                urls[row["source"]] = family.match
    return urls


def list_sources(
    configs: list[str], mirror: Path | None, revision: str = DEFAULT_REVISION
) -> tuple[list[Listed], str | None]:
    """The sources to fetch, and a note when the URL files could not be listed yet."""
    where = str(mirror) if mirror else "DIR"
    listed = [
        Listed(HUB_REPO, HUB_REPO, revision, "all", download_command(HUB_REPO, revision, where))
    ]
    for source in SOURCES:
        if source.repo and not source.by_url:
            files = ", ".join(source.files) or "all"
            listed.append(
                Listed(
                    source.match,
                    source.repo,
                    source.revision or "main (not pinned upstream)",
                    files + (" (gated: accept its terms first)" if source.gated else ""),
                    download_command(source.repo, source.revision, where, source.files),
                )
            )
    try:
        urls = _url_files(Upstream(mirror=mirror), configs, revision)
    except SpecbenchError as error:
        return listed, f"URL files not listed: SPEED-Bench is not readable yet ({error})"
    for url, family in sorted(urls.items()):
        listed.append(Listed(family, "(URL)", "sha256 recorded", url, url_command(url, where)))
    return listed, None
