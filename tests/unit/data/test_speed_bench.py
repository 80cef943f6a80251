"""SPEED-Bench loading: every layout, the hub path via a local repo folder, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from specbench.common.errors import SpecbenchError
from specbench.data import speed_bench
from specbench.data.loader import load_workload, read_dataset

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PREPARED = FIXTURES / "speed_bench"
QUALITATIVE_PARQUET = PREPARED / "data" / "speed" / "qualitative" / "test.parquet"
HUB = FIXTURES / "speed_bench_hub"


def _rows(path: Path = QUALITATIVE_PARQUET) -> list[dict]:
    return pq.read_table(path).to_pylist()


def test_model_optimizer_layout_loads_every_row_with_its_fields() -> None:
    workload = load_workload(f"speed-bench:qualitative:{PREPARED}")
    assert workload.name == "speed-bench-qualitative"
    assert workload.config == "qualitative"
    assert workload.nominal_context_tokens is None
    assert workload.revision is None
    assert workload.source == str(QUALITATIVE_PARQUET.resolve())
    assert len(workload.conversations) == 44
    assert workload.categories == speed_bench.QUALITATIVE_CATEGORIES
    first, expected = workload.conversations[0], _rows()[0]
    assert first.question_id == expected["question_id"] and len(first.question_id) == 32
    assert first.turns == tuple(expected["turns"])
    assert first.sub_category == expected["sub_category"]
    assert first.source == "specbench/synthetic"
    assert first.extra == {
        "multiturn": "false",
        "src_id": expected["src_id"],
        "difficulty": expected["difficulty"],
    }
    turn_counts = sorted(len(c.turns) for c in workload.conversations if len(c.turns) > 1)
    assert turn_counts == [2, 2, 3, 3, 4, 4, 4, 5, 5]


@pytest.mark.parametrize(
    "spec",
    [
        f"speed-bench:qualitative:{PREPARED}",
        f"speed-bench:qualitative:{PREPARED / 'data'}",
        f"speed-bench:qualitative:{PREPARED / 'data' / 'speed' / 'qualitative'}",
        f"speed-bench:qualitative:{QUALITATIVE_PARQUET}",
        str(QUALITATIVE_PARQUET),
        f"speed-bench:qualitative:{FIXTURES / 'speed_bench_jsonl'}",
        str(FIXTURES / "speed_bench_jsonl" / "qualitative.jsonl"),
        f"speed-bench:qualitative:{FIXTURES / 'speed_bench_nemo_skills'}",
        str(FIXTURES / "speed_bench_nemo_skills" / "qualitative.jsonl"),
    ],
)
def test_every_prepared_layout_gives_the_same_conversations(spec: str) -> None:
    reference = load_workload(f"speed-bench:qualitative:{QUALITATIVE_PARQUET}")
    workload = load_workload(spec)
    assert workload.config == "qualitative"
    assert workload.conversations == reference.conversations


def test_throughput_config_carries_its_nominal_length_and_tiers() -> None:
    workload = load_workload(f"speed-bench:throughput_1k:{PREPARED}")
    assert workload.name == "speed-bench-throughput_1k"
    assert workload.nominal_context_tokens == 1000
    assert workload.categories == ("low_entropy", "mixed", "high_entropy")
    assert all(c.turns[0].endswith("Answer now please.\n") for c in workload.conversations)
    low = load_workload(f"speed-bench:throughput_1k:{PREPARED}", entropy_tiers=["low"])
    assert [c.category for c in low.conversations] == ["low_entropy", "low_entropy"]
    both = load_workload(
        f"speed-bench:throughput_1k:{PREPARED}", entropy_tiers=["mixed", "high_entropy"]
    )
    assert both.categories == ("mixed", "high_entropy") and len(both.conversations) == 4


def test_placeholders_are_refused_with_count_and_preparation_hint() -> None:
    spec = f"speed-bench:qualitative:{FIXTURES / 'speed_bench_placeholders'}"
    with pytest.raises(SpecbenchError) as caught:
        load_workload(spec)
    message = str(caught.value)
    assert "\n" not in message
    assert "test.parquet: 7 of 44 rows are placeholders (field 'turns'" in message
    assert "specbench data prepare qualitative --output DIR" in message
    assert "--data-dir DIR" in message
    # The raw data still loads: inspect reports placeholders rather than refusing.
    raw = read_dataset(spec)
    assert sum(speed_bench.is_placeholder(c) for c in raw.conversations) == 7


def test_categories_without_placeholders_can_run() -> None:
    spec = f"speed-bench:qualitative:{FIXTURES / 'speed_bench_placeholders'}"
    workload = load_workload(spec, categories=["math", "stem"])
    assert len(workload.conversations) == 8
    with pytest.raises(SpecbenchError, match=r"1 of 4 rows are placeholders"):
        load_workload(spec, categories=["coding"])


def test_hub_path_reads_a_local_repo_folder_named_by_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(speed_bench.REPO_ENV, str(HUB))
    workload = load_workload("speed-bench:throughput_1k", revision="ignored-for-local")
    assert workload.source == str(HUB.resolve())
    assert workload.revision is None
    assert workload.nominal_context_tokens == 1000
    local = load_workload(f"speed-bench:throughput_1k:{PREPARED}")
    assert workload.conversations == local.conversations
    with pytest.raises(SpecbenchError, match=r"7 of 44 rows are placeholders"):
        load_workload("speed-bench:qualitative")
    with pytest.raises(SpecbenchError, match=r"the repository has no config 'throughput_8k'"):
        load_workload("speed-bench:throughput_8k")


def test_hub_without_network_fails_in_one_line_naming_repo_and_revision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(speed_bench.REPO_ENV, raising=False)
    with pytest.raises(SpecbenchError) as caught:
        load_workload("speed-bench:qualitative")
    message = str(caught.value)
    assert message.startswith(
        f"nvidia/SPEED-Bench config 'qualitative' at revision {speed_bench.DEFAULT_REVISION}"
    )
    assert "\n" not in message
    with pytest.raises(SpecbenchError, match=r"at revision abc123: cannot load"):
        load_workload("speed-bench:qualitative", revision="abc123")


def test_default_revision_is_a_full_commit_sha() -> None:
    assert len(speed_bench.DEFAULT_REVISION) == 40
    int(speed_bench.DEFAULT_REVISION, 16)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("speed-bench:throughput_4k", r"unknown SPEED-Bench config 'throughput_4k'; allowed: "),
        ("speed-bench:", r"name a config, e.g. speed-bench:qualitative"),
        ("speed-bench:qualitative:/nonexistent/x", r"/nonexistent/x: no such file or folder"),
        (f"speed-bench:throughput_2k:{PREPARED}", r"no prepared data for config 'throughput_2k'"),
        (f"speed-bench:qualitative:{FIXTURES / 'mt_bench'}", r"no prepared data for config"),
    ],
)
def test_bad_specs_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(SpecbenchError, match=message):
        load_workload(spec)


def test_unknown_category_and_misplaced_entropy_tier_are_refused() -> None:
    spec = f"speed-bench:qualitative:{PREPARED}"
    with pytest.raises(SpecbenchError, match=r"--category 'low_entropy' is not a qualitative"):
        load_workload(spec, categories=["low_entropy"])
    with pytest.raises(
        SpecbenchError, match=r"--entropy-tier applies only to SPEED-Bench throughput"
    ):
        load_workload(spec, entropy_tiers=["low"])
    with pytest.raises(SpecbenchError, match=r"--entropy-tier 'medium' is unknown"):
        load_workload(f"speed-bench:throughput_1k:{PREPARED}", entropy_tiers=["medium"])


def _write(tmp_path: Path, rows: list[dict], name: str = "qualitative.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("src_id"), r"missing column 'src_id'; SPEED-Bench data needs"),
        (lambda r: r.update(question_id="short"), r"row 1: field 'question_id' must be a 32-char"),
        (lambda r: r.update(category="poetry"), r"field 'category' is 'poetry', not a qualitative"),
        (lambda r: r.update(turns=[]), r"field 'turns' must be a non-empty list"),
        (lambda r: r.update(multiturn="yes"), r"field 'multiturn' must be a boolean"),
    ],
)
def test_schema_errors_name_file_row_and_field(tmp_path: Path, change, message: str) -> None:
    rows = _rows()[:3]
    for row in rows:
        change(row)
    path = _write(tmp_path, rows)
    with pytest.raises(SpecbenchError, match=message) as caught:
        load_workload(f"speed-bench:qualitative:{path}")
    assert str(path) in str(caught.value)


def test_duplicate_ids_and_empty_files_are_refused(tmp_path: Path) -> None:
    row = _rows()[0]
    path = _write(tmp_path, [row, row])
    with pytest.raises(SpecbenchError, match=r"duplicate question_id"):
        load_workload(f"speed-bench:qualitative:{path}")
    empty = tmp_path / "throughput_1k" / "test.parquet"
    empty.parent.mkdir()
    pq.write_table(pq.read_table(QUALITATIVE_PARQUET).slice(0, 0), empty)
    with pytest.raises(SpecbenchError, match=r"dataset is empty"):
        load_workload(f"speed-bench:throughput_1k:{empty}")


def test_nemo_skills_messages_must_be_user_text(tmp_path: Path) -> None:
    rows = [
        json.loads(line)
        for line in (FIXTURES / "speed_bench_nemo_skills" / "qualitative.jsonl")
        .read_text()
        .splitlines()
    ]
    rows[1]["messages"].insert(0, {"role": "system", "content": "be brief"})
    path = _write(tmp_path, rows[:3])
    with pytest.raises(SpecbenchError, match=r"row 2 .*field 'messages' may hold only user"):
        load_workload(str(path))


def test_speed_bench_file_without_config_in_its_path_asks_for_one(tmp_path: Path) -> None:
    path = tmp_path / "mine.parquet"
    shutil.copy(QUALITATIVE_PARQUET, path)
    with pytest.raises(SpecbenchError, match=r"its config is not in the path; use --dataset"):
        load_workload(str(path))
    assert len(load_workload(f"speed-bench:qualitative:{path}").conversations) == 44


def test_extra_columns_are_tolerated(tmp_path: Path) -> None:
    table = pq.read_table(QUALITATIVE_PARQUET)
    table = table.append_column("note", pa.array(["x"] * table.num_rows))
    path = tmp_path / "qualitative" / "test.parquet"
    path.parent.mkdir()
    pq.write_table(table, path)
    assert len(load_workload(str(path)).conversations) == 44
