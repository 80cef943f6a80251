"""`prepared.json`: what a prepared folder holds, where each row came from, and its hashes.

A row's hash is over its resolved turns (JSON, UTF-8, no spaces), not the file's bytes:
`datasets` may write nested keys in another order and the text is what is benchmarked.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specbench import __version__
from specbench.common.errors import SpecbenchError
from specbench.data.prepare.registry import DEFAULT_FLAVOUR, FLAVOURS
from specbench.data.prepare.resolve import ResolvedConfig
from specbench.data.speed_bench import HUB_REPO

NAME = "prepared.json"
FORMAT = 1


def turns_hash(turns: list[str] | tuple[str, ...]) -> str:
    text = json.dumps(list(turns), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_entry(resolved: ResolvedConfig, files: dict[str, str]) -> dict[str, Any]:
    categories = Counter(str(row["category"]) for row in resolved.rows)
    return {
        "rows": len(resolved.rows),
        "categories": dict(sorted(categories.items())),
        "partial": bool(resolved.missing),
        "missing": resolved.missing,
        "files": files,
        "row_sha256": {row["question_id"]: turns_hash(row["turns"]) for row in resolved.rows},
    }


def build(
    configs: dict[str, dict[str, Any]],
    revision: str,
    sources: dict[str, str | None],
    mirror: Path | None,
    flavour: str = DEFAULT_FLAVOUR,
) -> dict[str, Any]:
    code, commit = FLAVOURS[flavour]
    return {
        "format": FORMAT,
        "flavour": flavour,
        "resolver": {"code": code, "commit": commit},
        # Read from a mirror, SPEED-Bench's revision is the one its folder recorded.
        "speed_bench": {"repo": HUB_REPO, "revision": sources.get(HUB_REPO) or revision},
        "sources": dict(sorted(sources.items())),
        "mirror": str(mirror.resolve()) if mirror else None,
        "specbench_version": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "configs": configs,
    }


def read(folder: Path) -> dict[str, Any]:
    path = folder / NAME
    if not path.is_file():
        raise SpecbenchError(
            f"{folder}: no {NAME}; not a folder written by `specbench data prepare`"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SpecbenchError(f"{path}: not readable JSON ({error})") from error
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SpecbenchError(f"{path}: field 'format' must be {FORMAT}")
    return manifest
