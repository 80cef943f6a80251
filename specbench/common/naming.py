"""Names of things on disk: filesystem-safe slugs, the folder of a dataset selection, and
the key of a cell (`server/workload/cN/rM`, or `server/workload/cN/lL/rM` on launch L ≥ 1:
its folder under a results directory, its name in the manifest, the gate and progress
output).

Pure and dependency-free, so both the data layer and the results store can use them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def slug(text: str) -> str:
    """A filesystem-safe name: `speed-bench:throughput_8k` → `speed-bench-throughput_8k`."""
    cleaned = _UNSAFE.sub("-", text).strip("-.")
    return cleaned or "unnamed"


#: Longest `bounded_slug`: with the rest of a file name it stays far below NAME_MAX (255).
SLUG_LIMIT = 100


def bounded_slug(text: str, limit: int = SLUG_LIMIT) -> str:
    """`slug(text)`, or when longer than `limit`: its end plus a digest of the whole text.

    For names built from something unbounded, such as a dataset path: a file name over 255
    bytes cannot be written. The end is kept (a path's file name and selection tell groups
    apart); the 8-hex sha256 digest of `text` keeps two long texts with one end apart.
    """
    name = slug(text)
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{digest}-{name[-(limit - len(digest) - 1) :].lstrip('-.')}"


def check_name(kind: str, name: str) -> str:
    """A server or workload name is a results folder as given: ValueError if `slug` changes it."""
    if not name or slug(name) != name:
        raise ValueError(
            f"{kind} {name!r}: use letters, digits and . _ + - only (it names a results folder)"
        )
    return name


def selection_key(
    spec: str, categories: Sequence[str] = (), entropy_tiers: Sequence[str] = ()
) -> str:
    """The folder of a dataset selection, known without loading the data (for resume checks).

    `speed-bench:CONFIG[:PATH]` → `speed-bench-CONFIG`, `mt-bench[:PATH]` → `mt-bench`,
    a path → its stem; a category or tier selection is appended (`+coding+math`).
    """
    kind, _, rest = spec.partition(":")
    if kind == "speed-bench":
        base = f"speed-bench-{rest.split(':')[0]}"
    elif kind == "mt-bench":
        base = "mt-bench"
    else:
        base = Path(rest if kind == "custom" else spec).stem
    selection = [*categories, *entropy_tiers]
    return slug("+".join([base, *selection]))


def point_key(server: str, workload: str, concurrency: int) -> str:
    """A measured point, its repeats together: `server/workload/cN` (the gate's key)."""
    return f"{server}/{workload}/c{concurrency}"


def cell_key(server: str, workload: str, concurrency: int, repeat: int, launch: int = 0) -> str:
    """A cell's key: `eagle3/speed-bench-qualitative/c48/r0`; the only builder of it.

    Launch 0 (the first start of the server, and every cell measured before launches
    existed) has no launch part; launch L ≥ 1 is `…/c48/lL/r0`, so older keys stay valid."""
    within = f"r{repeat}" if launch == 0 else f"l{launch}/r{repeat}"
    return f"{point_key(server, workload, concurrency)}/{within}"
