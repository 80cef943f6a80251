"""How a report names a results directory: never by its absolute path.

A report is pasted into model cards and served from web servers; the path a campaign was
written to on one machine (`/scratch/alice/runs/…`) says nothing there and leaks a local
layout. A directory is named by the shortest tail of its path that tells it apart from
the other directories of the same report (its folder name, as a rule), and a file inside
it by that name and its path inside the directory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path


def display_names(directories: Sequence[Path]) -> dict[Path, str]:
    """Each directory's name in a report: its last path component, or as many trailing
    components as tell it apart from the others (`a/results`, `b/results`)."""
    resolved = {d: d.resolve() for d in directories}
    names: dict[Path, str] = {}
    for directory, path in resolved.items():
        parts = path.parts[1:] or (path.as_posix(),)
        for depth in range(1, len(parts) + 1):
            tail = parts[-depth:]
            clashes = [
                other
                for other in resolved.values()
                if other != path and other.parts[-depth:] == tail
            ]
            if not clashes:
                break
        names[directory] = "/".join(tail)
    return names


def relative_paths(text: str, names: Mapping[Path, str]) -> str:
    """`text` with every absolute path of a named directory (as given and resolved) written
    as its name: `/scratch/alice/runs/n01/eagle3/…` → `n01/eagle3/…`. The longest path is
    replaced first, and only where it ends (`/x` is not replaced inside `/xy` or `/x.bak`;
    it is before a sentence's full stop)."""
    pairs = {
        str(form): name
        for directory, name in names.items()
        for form in (directory.absolute(), directory.resolve())
    }
    for path in sorted(pairs, key=len, reverse=True):
        text = re.sub(re.escape(path) + r"(?![\w-]|\.\w)", pairs[path].replace("\\", r"\\"), text)
    return text
