"""The layout's finders: every path to a results file is built in `store.layout`."""

from __future__ import annotations

from pathlib import Path

from specbench.store.layout import cell_summaries, failed_cells_below, summaries_below


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
