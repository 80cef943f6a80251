"""The committed fixtures are exactly what `make_fixtures.py` writes, and follow the schema."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pyarrow.parquet as pq

from specbench.data.speed_bench import COLUMNS, ENTROPY_TIERS, QUALITATIVE_CATEGORIES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _load_generator():
    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generator_reproduces_the_committed_fixtures(tmp_path: Path) -> None:
    _load_generator().main(tmp_path)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert len(written) == 11
    for relative in written:
        committed = FIXTURES / relative
        if relative.suffix == ".parquet":
            assert pq.read_table(tmp_path / relative).equals(pq.read_table(committed)), relative
        else:
            assert (tmp_path / relative).read_bytes() == committed.read_bytes(), relative


def test_speed_bench_fixtures_follow_the_real_schema() -> None:
    qualitative = FIXTURES / "speed_bench" / "data" / "speed" / "qualitative" / "test.parquet"
    table = pq.read_table(qualitative)
    assert tuple(table.column_names) == COLUMNS
    rows = table.to_pylist()
    assert {r["category"] for r in rows} == set(QUALITATIVE_CATEGORIES)
    assert all(len(r["question_id"]) == 32 for r in rows)
    assert all(r["multiturn"] == (len(r["turns"]) > 1) for r in rows)
    throughput = pq.read_table(
        FIXTURES / "speed_bench" / "data" / "speed" / "throughput_1k" / "test.parquet"
    )
    assert [r["category"] for r in throughput.to_pylist()] == [
        t for t in ENTROPY_TIERS for _ in "ab"
    ]
