"""The layout's finders and cell folders: every path to a results file is built in
`store.layout`."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.store.layout import (
    CellKey,
    cell_key,
    cell_key_of,
    cell_path,
    cell_summaries,
    failed_cells_below,
    summaries_below,
)


def _touch(root: Path, relative: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    return path


def test_cell_summaries_are_at_the_cells_depth_and_the_readers_find_any_depth(
    tmp_path: Path,
) -> None:
    second = _touch(tmp_path, "ngram/chat/c4/r1/summary.json")
    first = _touch(tmp_path, "baseline/chat/c4/r0/summary.json")
    nested = _touch(tmp_path, "old/ngram/chat/c1/r0/summary.json")
    _touch(tmp_path, "baseline/chat/c4/summary.json")  # not a cell folder
    assert cell_summaries(tmp_path) == [first, second]
    assert nested in summaries_below(tmp_path) and len(summaries_below(tmp_path)) == 4


def test_failed_cells_are_those_without_a_summary(tmp_path: Path) -> None:
    failed = _touch(tmp_path, "ngram/chat/c4/r0/failure.json")
    _touch(tmp_path, "ngram/chat/c4/r1/failure.json")
    _touch(tmp_path, "ngram/chat/c4/r1/summary.json")  # measured again since
    assert failed_cells_below(tmp_path) == [failed]


def test_a_launch_after_the_first_is_a_folder_level_both_ways(tmp_path: Path) -> None:
    first = CellKey("eagle3", "chat", 48, 1)
    third = CellKey("eagle3", "chat", 48, 1, launch=2)
    # Launch 0 keeps the folder and key results had before launches.
    assert cell_path(tmp_path, first) == tmp_path / "eagle3/chat/c48/r1"
    assert str(first) == "eagle3/chat/c48/r1" == cell_key("eagle3", "chat", 48, 1)
    assert cell_path(tmp_path, third) == tmp_path / "eagle3/chat/c48/l2/r1"
    assert str(third) == "eagle3/chat/c48/l2/r1" == cell_key("eagle3", "chat", 48, 1, 2)
    for key in (first, third):
        assert CellKey.parse(str(key)) == key
        assert cell_key_of(tmp_path, cell_path(tmp_path, key)) == key
    # One spelling per cell: launch 0 has no `l0`.
    with pytest.raises(SpecbenchError, match="is not a cell key"):
        CellKey.parse("eagle3/chat/c48/l0/r1")
    # Launch sorts before repeat: one launch's repeats stay together.
    keys = [CellKey("a", "w", 1, 1), CellKey("a", "w", 1, 0, launch=1), CellKey("a", "w", 1, 0)]
    assert [str(k) for k in sorted(keys)] == ["a/w/c1/r0", "a/w/c1/r1", "a/w/c1/l1/r0"]


def test_cell_summaries_find_both_depths(tmp_path: Path) -> None:
    zero = _touch(tmp_path, "ngram/chat/c4/r0/summary.json")
    one = _touch(tmp_path, "ngram/chat/c4/l1/r0/summary.json")
    _touch(tmp_path, "ngram/chat/c4/lx/r0/summary.json")  # not a launch folder
    _touch(tmp_path, "old/ngram/chat/c4/r0/summary.json")  # a nested results directory
    assert cell_summaries(tmp_path) == sorted([zero, one])
    assert [str(cell_key_of(tmp_path, p.parent)) for p in cell_summaries(tmp_path)] == [
        "ngram/chat/c4/l1/r0",
        "ngram/chat/c4/r0",
    ]
