"""Reading upstream sources: from the hub and the web, or from a mirror folder, via `datasets`.

A mirror is the folder `huggingface-cli download --repo-type dataset REPO --revision REV
--local-dir DIR/REPO` fills, one repo per `DIR/<owner>/<name>/`; plain-URL files sit under
`DIR/urls/<host>/<path>`, and a file of a hub repo named by URL (`huggingface.co/datasets/
<owner>/<name>/resolve|raw/<rev>/<path>`) is read from that repo's folder. Both ways end in
`datasets.load_dataset`, so a mirror gives the rows the hub would.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from specbench.common.errors import SpecbenchError
from specbench.data._hf import first_line, quiet_datasets

_HUB_FILE = re.compile(
    r"^https?://huggingface\.co/datasets/(?P<repo>[^/]+/[^/]+)/(?:resolve|raw|blob|tree)/"
    r"(?P<rev>[^/]+)/(?P<path>.+)$"
)
#: Where `huggingface-cli download --local-dir` records each file's commit.
_METADATA = Path(".cache") / "huggingface" / "download"
#: A mirror repo's revision in `prepared.json` when its folder recorded none (copied by
#: hand, or `.cache/` left out): the pin was not checked, so it is not claimed.
NOT_RECORDED = "not recorded"


def download_command(
    repo: str, revision: str | None, mirror: str = "DIR", files: tuple[str, ...] = ()
) -> str:
    """The command that fills a mirror folder with one hub repo (or some of its files)."""
    named = "".join(f" {name}" for name in files)
    rev = f" --revision {revision}" if revision else ""
    return (
        f"huggingface-cli download --repo-type dataset {repo}{named}{rev} "
        f"--local-dir {mirror}/{repo}"
    )


def url_command(url: str, mirror: str = "DIR") -> str:
    """The command that puts one plain-URL file where a mirror expects it."""
    return f"curl -L --create-dirs -o {mirror}/{mirror_url_path(url)} {url}"


def mirror_url_path(url: str) -> str:
    """A URL's place in a mirror: its hub repo's folder, or `urls/<host>/<path>`."""
    hub = _HUB_FILE.match(url)
    if hub:
        return f"{hub['repo']}/{hub['path']}"
    parts = urlsplit(url)
    return f"urls/{parts.netloc}{parts.path}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _mirror_revision(folder: Path) -> str | None:
    """The commit `huggingface-cli download` recorded for a repo folder (None: not recorded)."""
    meta = folder / _METADATA
    commits = {
        path.read_text(encoding="utf-8").split("\n", 1)[0].strip()
        for path in sorted(meta.rglob("*.metadata"))
    }
    if len(commits) > 1:
        raise SpecbenchError(
            f"{folder}: files from several revisions ({', '.join(sorted(commits))}); "
            "download the repo again at one revision"
        )
    return commits.pop() if commits else None


@dataclass
class Upstream:
    """Opens upstream data, through a mirror folder when one is given; remembers what it read."""

    mirror: Path | None = None
    #: repo or URL → the revision used (a mirror's: the one it recorded, else NOT_RECORDED),
    #: or the sha256 of a plain-URL file.
    read: dict[str, str | None] = field(default_factory=dict)

    def repo_folder(self, repo: str, revision: str | None) -> Path:
        assert self.mirror is not None
        folder = self.mirror / repo
        if not folder.is_dir():
            raise SpecbenchError(
                f"mirror {self.mirror}: no folder {repo}/; fill it with: "
                + download_command(repo, revision, str(self.mirror))
            )
        recorded = _mirror_revision(folder)
        if revision and recorded and recorded != revision:
            raise SpecbenchError(
                f"mirror {folder}: holds revision {recorded}, not the pinned {revision}; "
                "download it again with: " + download_command(repo, revision, str(self.mirror))
            )
        self.read.setdefault(repo, recorded or NOT_RECORDED)
        return folder

    def hub(self, repo: str, config: str | None, revision: str | None) -> Any:
        """The `test` split of one config of a hub dataset repo."""
        datasets = quiet_datasets()
        where = f"{repo}" + (f" config {config!r}" if config else "")
        if self.mirror is not None:
            path = str(self.repo_folder(repo, revision))
            where = f"mirror {path}" + (f" config {config!r}" if config else "")
            load_revision = None
            # datasets 5.2 reuses its cache of a local repo folder after the files change.
            fresh: dict[str, str] = {
                "download_mode": "force_redownload",
                "verification_mode": "no_checks",
            }
        else:
            path, load_revision, fresh = repo, revision, {}
            self.read.setdefault(repo, revision)
        try:
            return datasets.load_dataset(
                path, config, split="test", revision=load_revision, **fresh
            )
        except Exception as error:  # network, offline, gated, corrupt file: one line each
            raise SpecbenchError(
                f"{where}: cannot load ({type(error).__name__}: {first_line(error)})"
            ) from error

    def local_file(self, url: str, revision: str | None = None) -> Path:
        """A URL's file on disk: from the mirror, or downloaded into the `datasets` cache.

        Recorded with `revision`, except from a mirror: there with the revision its repo
        folder recorded, else (none recorded) the file's sha256."""
        if self.mirror is not None:
            hub = _HUB_FILE.match(url)
            held: str | None = None
            if hub:
                pinned = hub["rev"] if re.fullmatch(r"[0-9a-f]{40}", hub["rev"]) else None
                self.repo_folder(hub["repo"], revision or pinned)
                held = self.read[hub["repo"]]
            revision = None if held == NOT_RECORDED else held
            path = self.mirror / mirror_url_path(url)
            if not path.is_file():
                raise SpecbenchError(
                    f"mirror {self.mirror}: no file {mirror_url_path(url)}; fetch it with: "
                    + url_command(url, str(self.mirror))
                )
        else:
            datasets = quiet_datasets()
            try:
                path = Path(datasets.DownloadManager().download(url))
            except Exception as error:
                raise SpecbenchError(
                    f"{url}: cannot download ({type(error).__name__}: {first_line(error)})"
                ) from error
        self.read.setdefault(url, revision or f"sha256:{sha256_file(path)}")
        return path

    def json(self, urls: list[str], revision: str | None = None) -> Any:
        """JSON or JSON Lines files named by URL, as one `datasets` split, in the order given."""
        datasets = quiet_datasets()
        files = [str(self.local_file(url, revision)) for url in urls]
        try:
            return datasets.load_dataset("json", data_files={"test": files}, split="test")
        except Exception as error:
            raise SpecbenchError(
                f"{files[0]}: cannot read with datasets ({type(error).__name__}: "
                f"{first_line(error)})"
            ) from error
