"""The package reads as its pipeline: no folder imports from a stage after it.

The order is docs/development.md's (The package). An import hidden inside a function counts
too: a cycle dodged that way is still a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "specbench"
#: Stages, each allowed to import only from the ones before it.
ORDER = (
    "common",
    "stats",
    "data",
    "metrics",
    "client",
    "launch",
    "suite",
    "store",
    "energy",
    "measure",
    "run",
    "slurm",
    "results",
    "lossless",
    "analysis",
    "advise",
    "render",
    "gate",
    "emulator",
    "cli",
)


def imports() -> set[tuple[str, str, str]]:
    """(importing folder, imported folder, file) for every specbench import."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        if len(parts) == 1:
            continue  # specbench/__init__.py: version constants only
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = node.module.split(".")
                if names[0] != "specbench":
                    continue
                targets = names[1:2] or [a.name for a in node.names]
                for target in targets:
                    if target in ORDER and target != parts[0]:
                        found.add((parts[0], target, str(path.relative_to(PACKAGE))))
    return found


def test_every_folder_is_a_known_stage() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(ORDER)
    flat = {p.name for p in PACKAGE.glob("*.py")}
    assert flat == {"__init__.py"}


def test_no_import_runs_from_a_stage_to_a_later_one() -> None:
    rank = {name: index for index, name in enumerate(ORDER)}
    upward = sorted(
        f"{where}: {source} imports {target}"
        for source, target, where in imports()
        if rank[target] > rank[source]
    )
    assert upward == []
    assert len(imports()) > 50  # the walk sees the package's real imports


def test_the_emulator_stands_alone() -> None:
    # It is the test double of a vLLM server: it must not depend on what it tests.
    used = {target for source, target, _ in imports() if source == "emulator"}
    assert used <= {"common"}
