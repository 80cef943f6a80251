"""`manifest.json`: what a results directory holds and how it was produced.

The manifest is rewritten atomically, merging new sections into what is there, so a
directory filled by several commands (or resumed runs) keeps every earlier entry. The
read-merge-write holds an exclusive `flock` on `.manifest.lock` beside it: Slurm shards
running at once on several nodes update one manifest without losing each other's sections.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from specbench import SCHEMA_VERSION, __version__, store
from specbench.common.errors import SpecbenchError

#: Lock file beside manifest.json; flock works across NFS (v4) clients, which shards share.
MANIFEST_LOCK = ".manifest.lock"


def git_sha() -> str | None:
    """The specbench checkout's commit, when it runs from one."""
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def load_manifest(root: Path) -> dict[str, Any]:
    path = root / store.MANIFEST
    if not path.exists():
        return {}
    manifest = store.read_json(path)
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        raise SpecbenchError(
            f"{path}: schema_version {version} but this specbench writes {SCHEMA_VERSION}; "
            "use a new --output directory"
        )
    return manifest


def update_manifest(
    root: Path, *, runs: Sequence[dict[str, Any]] = (), **sections: Any
) -> dict[str, Any]:
    """Merge `sections` into the manifest (nested dicts key by key) and append `runs`."""
    with _locked(root):
        return _update(root, runs, sections)


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with (root / MANIFEST_LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _update(root: Path, runs: Sequence[dict[str, Any]], sections: dict[str, Any]) -> dict[str, Any]:
    manifest = load_manifest(root)
    if not manifest:
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "created_at": sections.pop("created_at", None),
            "runs": [],
        }
    manifest["specbench_version"] = __version__
    manifest["git_sha"] = git_sha()
    manifest["python"] = sys.version.split()[0]
    _merge(manifest, sections)
    manifest.setdefault("runs", []).extend(runs)
    store.write_json(root / store.MANIFEST, manifest)
    return manifest


def _merge(target: dict[str, Any], updates: dict[str, Any]) -> None:
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value
