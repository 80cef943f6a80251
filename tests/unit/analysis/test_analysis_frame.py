"""The tidy frames: flattening, labels of merged directories, repeats, pooling, bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from analysis_fixtures import (
    QUALITATIVE,
    spec_decode,
    summary,
    write_campaign,
    write_cell,
    write_manifest,
)

from specbench.analysis import aggregate as AG
from specbench.common.errors import SpecbenchError
from specbench.results import columns as C
from specbench.results import frame as F
from specbench.results import loading as L


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    return write_campaign(tmp_path / "campaign")


def test_one_row_per_cell_with_flattened_columns(campaign: Path) -> None:
    frame = F.load_results([campaign])
    assert len(frame) == 11  # 4 + 4 qualitative, 2 + 1 throughput
    row = frame[
        (frame[C.LABEL] == "eagle3") & (frame[C.CONCURRENCY] == 48) & (frame[C.REPEAT] == 1)
        & (frame[C.SPLIT] == "qualitative")
    ].iloc[0]  # fmt: skip
    assert row[C.DATASET] == QUALITATIVE
    assert row[C.WORKLOAD] == "speed-bench-qualitative"
    assert row[C.OUTPUT_TOK_S_PER_GPU] == pytest.approx(415.4)
    assert row[C.TTFT_MS_MEDIAN] == 158.0
    assert row["e2e_ms_p99"] == 2 * 9690.0
    assert row["tpot_ms_count"] == 64
    assert row[C.ACCEPTANCE_LENGTH] == pytest.approx(1 + 7300 / 4000)
    assert row[C.NUM_DRAFTS] == 4000
    assert row[C.per_position_column(1)] == pytest.approx(3300 / 4000)
    assert row[C.per_position_column(3)] == pytest.approx(1600 / 4000)
    assert row[f"{C.ACCEPTED_PER_POSITION_PREFIX}2"] == 2400
    assert row[f"{C.CONDITIONAL_PREFIX}2"] == pytest.approx(2400 / 3300)
    assert row[C.ACCEPTANCE_DEFINITION] == "step_weighted"
    assert not row[C.IS_BASELINE]
    assert C.position_columns(frame) == [C.per_position_column(i) for i in (1, 2, 3)]


def test_baseline_from_manifest_and_missing_spec_decode_is_nan(campaign: Path) -> None:
    frame = F.load_results([campaign])
    baseline = frame[frame[C.LABEL] == "baseline"]
    assert baseline[C.IS_BASELINE].all()
    assert baseline[C.ACCEPTANCE_LENGTH].isna().all()
    assert baseline[C.NUM_DRAFTS].isna().all()
    assert str(baseline[C.NUM_DRAFTS].dtype) == "Int64"


def test_split_and_context_from_dataset_or_slug(campaign: Path) -> None:
    frame = F.load_results([campaign])
    eagle = frame[frame[C.LABEL] == "eagle3"]
    by_dataset = dict(zip(eagle[C.DATASET], eagle[C.CONTEXT_K], strict=True))
    assert by_dataset["speed-bench:throughput_1k"] == 1
    # The local parquet path says nothing; its directory slug does.
    assert by_dataset["/data/speed/eight/test.parquet"] == 8
    assert C.parse_split("data/speed/throughput_32k/test.parquet") == ("throughput_32k", 32)
    assert C.parse_split("speed-bench-throughput-16k") == ("throughput_16k", 16)
    assert C.parse_split("mt-bench") == (None, None)


def test_aggregate_repeats_mean_and_spread(campaign: Path) -> None:
    aggregated = AG.aggregate_repeats(F.load_results([campaign]))
    row = aggregated[
        (aggregated[C.LABEL] == "eagle3") & (aggregated[C.CONCURRENCY] == 48)
        & (aggregated[C.SPLIT] == "qualitative")
    ].iloc[0]  # fmt: skip
    assert row[AG.N_REPEATS] == 2
    assert row[C.OUTPUT_TOK_S_PER_GPU] == pytest.approx(415.2)
    assert row["output_tok_s_per_gpu_min"] == pytest.approx(415.0)
    assert row["output_tok_s_per_gpu_max"] == pytest.approx(415.4)
    std = math.sqrt(2 * 0.2**2)  # two values 0.2 from their mean, ddof 1
    assert row["output_tok_s_per_gpu_std"] == pytest.approx(std)
    assert row["output_tok_s_per_gpu_n"] == 2
    # t(0.975, 1) = 12.706: a two-repeat interval is wide, as it should be.
    assert row[AG.ci_column(C.OUTPUT_TOK_S_PER_GPU)] == pytest.approx(12.7062 * std / math.sqrt(2))
    assert row[C.TTFT_MS_MEDIAN] == pytest.approx(154.0)
    # Plain mean of the two ALs vs the pooled, step-weighted one.
    assert row[C.ACCEPTANCE_LENGTH] == pytest.approx((2.7 + 2.825) / 2)
    assert row["acceptance_length_pooled"] == pytest.approx(1 + 9000 / 5000)
    single = aggregated[(aggregated[C.LABEL] == "eagle3") & (aggregated[C.CONCURRENCY] == 1)].iloc[
        0
    ]
    assert single[AG.N_REPEATS] == 1
    assert math.isnan(single["output_tok_s_per_gpu_std"])
    assert math.isnan(single[AG.ci_column(C.OUTPUT_TOK_S_PER_GPU)])


def test_pool_acceptance_sums_counters(campaign: Path) -> None:
    frame = F.load_results([campaign])
    qualitative = frame[frame[C.SPLIT] == "qualitative"]
    pooled = AG.pool_acceptance(qualitative, [C.LABEL])
    assert list(pooled[C.LABEL]) == ["eagle3"]  # the baseline has no counters
    row = pooled.iloc[0]
    assert row[AG.N_CELLS] == 4
    assert row[C.ACCEPTANCE_LENGTH] == pytest.approx(1 + 12670 / 7000)
    assert row[C.DRAFT_ACCEPTANCE_RATE] == pytest.approx(12670 / 21000)
    assert row[C.per_position_column(1)] == pytest.approx((800 + 3300 + 850 + 800) / 7000)


def test_category_frame_and_step_weighted_pooling(campaign: Path) -> None:
    categories = F.load_category_results([campaign])
    eagle = categories[categories[C.LABEL] == "eagle3"]
    assert set(eagle[C.CATEGORY]) == {
        "coding", "math", "rag", "multilingual", "reasoning", "summarization", "stem",
        "humanities", "qa", "writing", "roleplay",
    }  # fmt: skip
    assert len(eagle) == 3 * 11
    pooled = AG.pool_category_acceptance(eagle, [C.CATEGORY]).set_index(C.CATEGORY)
    # 1 + (2.3·100 + 2.4·50 + 7/3·30) / 180, not the mean of 3.30, 3.40 and 3.33.
    assert pooled.loc["coding", C.ACCEPTANCE_LENGTH] == pytest.approx(1 + 420 / 180)
    assert pooled.loc["coding", C.NUM_SPEC_STEPS] == 180
    assert pooled.loc["math", C.ACCEPTANCE_LENGTH] == pytest.approx(3.17)
    assert pooled.loc["math", C.ACCEPTANCE_SOURCE] == "per_request_metrics"


def test_colliding_labels_of_merged_directories_are_prefixed(tmp_path: Path) -> None:
    for name in ("vllm-0.31", "vllm-0.32"):
        root = tmp_path / name
        write_manifest(root, ["baseline"], ["eagle3"])
        write_cell(root, summary(label="baseline", dataset=QUALITATIVE, concurrency=4))
        write_cell(
            root,
            summary(
                label="eagle3", dataset=QUALITATIVE, concurrency=4,
                spec=spec_decode(10, [5, 3, 1]),
            ),
        )  # fmt: skip
    write_cell(
        tmp_path / "vllm-0.32",
        summary(label="ngram", dataset=QUALITATIVE, concurrency=4, spec=spec_decode(10, [2, 1, 0])),
    )
    frame = F.load_results([tmp_path / "vllm-0.31", tmp_path / "vllm-0.32"])
    assert sorted(set(frame[C.LABEL])) == [
        "ngram",
        "vllm-0.31/baseline",
        "vllm-0.31/eagle3",
        "vllm-0.32/baseline",
        "vllm-0.32/eagle3",
    ]
    assert set(frame[frame[C.IS_BASELINE]][C.LABEL]) == {"vllm-0.31/baseline", "vllm-0.32/baseline"}
    assert set(frame[C.SERVER_LABEL]) == {"baseline", "eagle3", "ngram"}


def test_baseline_marked_in_the_suite_section_of_the_manifest(tmp_path: Path) -> None:
    # The campaign runner records its suite: {"suite": {"servers": {name: {"baseline": …}}}}.
    suite_servers = {"vanilla": {"baseline": True}, "eagle3": {"baseline": False}}
    manifest = {
        "schema_version": 1,
        "servers": {"vanilla": {}, "eagle3": {}},
        "suite": {"servers": suite_servers},
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    write_cell(tmp_path, summary(label="vanilla", dataset=QUALITATIVE, concurrency=1))
    write_cell(tmp_path, summary(label="eagle3", dataset=QUALITATIVE, concurrency=1))
    frame = F.load_results([tmp_path])
    assert dict(zip(frame[C.LABEL], frame[C.IS_BASELINE], strict=True)) == {
        "eagle3": False,
        "vanilla": True,
    }


def test_empty_directory_is_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(SpecbenchError, match=r"no summary\.json found") as error:
        F.load_results([tmp_path])
    assert "\n" not in str(error.value)
    with pytest.raises(SpecbenchError, match="does not exist"):
        F.load_results([tmp_path / "missing"])


def test_foreign_json_is_refused_naming_the_file(tmp_path: Path) -> None:
    cell = tmp_path / "x" / "y" / "c1" / "r0"
    cell.mkdir(parents=True)
    (cell / "summary.json").write_text(json.dumps({"accuracy": 0.9}))
    with pytest.raises(SpecbenchError, match=r"summary.json: not a specbench summary"):
        F.load_results([tmp_path])
    (cell / "summary.json").write_text(json.dumps({"schema_version": 1, "label": "x"}))
    with pytest.raises(
        SpecbenchError, match=r"not a specbench summary \(dataset: required but missing"
    ):
        F.load_results([tmp_path])


def test_schema_1_loads_beside_schema_2_and_unknown_versions_are_refused(tmp_path: Path) -> None:
    write_cell(tmp_path / "a", summary(label="baseline", dataset=QUALITATIVE, concurrency=1))
    path = write_cell(tmp_path / "b", summary(label="eagle3", dataset=QUALITATIVE, concurrency=1))
    # A schema-1 summary: no workload or selection fields; both come from its folder.
    raw = json.loads(path.read_text())
    for field in ("workload", "categories", "entropy_tiers"):
        del raw[field]
    raw["schema_version"] = 1
    path.write_text(json.dumps(raw))
    frame = F.load_results([tmp_path / "a", tmp_path / "b"])
    assert sorted(frame[C.WORKLOAD]) == ["speed-bench-qualitative"] * 2
    assert frame[C.FULL_SELECTION].all()
    raw["schema_version"] = 3
    path.write_text(json.dumps(raw))
    with pytest.raises(SpecbenchError, match="schema_version 3 is not supported") as error:
        F.load_results([tmp_path / "b"])
    assert "\n" not in str(error.value)


def test_only_failed_cells_is_an_error_and_failures_are_listed(tmp_path: Path) -> None:
    cell = tmp_path / "eagle3" / "speed-bench-qualitative" / "c1" / "r0"
    cell.mkdir(parents=True)
    (cell / "failure.json").write_text(json.dumps({"message": "server died"}))
    with pytest.raises(SpecbenchError, match="all 1 cells failed"):
        F.load_results([tmp_path])
    write_cell(tmp_path, summary(label="eagle3", dataset=QUALITATIVE, concurrency=2))
    _, failed = L.load_cells([tmp_path])
    assert [f.reason for f in failed] == ["server died"]


def test_effective_k_and_the_running_batch_are_columns_and_k_pools_over_repeats(
    tmp_path: Path,
) -> None:
    root = tmp_path / "schedule"
    write_manifest(root, [], ["schedule"])
    # Repeat 0: 1000 steps at K 5. Repeat 1: 3000 steps at K 1 (a heavier load). Its
    # summary predates the field (effective_k None): the frame takes it from the counters.
    light = spec_decode(1000, [600, 300, 100, 0, 0], draft_tokens=5000)
    heavy = spec_decode(3000, [1500, 0, 0, 0, 0], draft_tokens=3000)
    write_cell(root, summary(
        label="schedule", dataset=QUALITATIVE, concurrency=16, spec=light, effective_k=5.0,
        running_batch_mean=15.25, running_batch_samples=40,
        per_step_drafted_counts={10: 1, 5: 990, 1: 9},
    ))  # fmt: skip
    write_cell(root, summary(label="schedule", dataset=QUALITATIVE, concurrency=16, repeat=1,
                             spec=heavy, running_batch_mean=15.75))  # fmt: skip
    frame = F.load_results([root])
    assert list(frame[C.EFFECTIVE_K]) == [5.0, 1.0]
    assert list(frame[C.RUNNING_BATCH_MEAN]) == [15.25, 15.75]
    assert frame[C.RUNNING_BATCH_SAMPLES][0] == 40
    assert frame[C.RUNNING_BATCH_SAMPLES].isna()[1]
    # JSON text, K in numeric order, not "10" before "5".
    assert frame[C.PER_STEP_DRAFTED_COUNTS][0] == '{"1":9,"5":990,"10":1}'
    assert frame[C.PER_STEP_DRAFTED_COUNTS].isna()[1]
    (row,) = AG.aggregate_repeats(frame).to_dict("records")
    assert row[C.RUNNING_BATCH_MEAN] == pytest.approx(15.5)
    assert row[C.EFFECTIVE_K] == pytest.approx(3.0)  # the mean of the two cells' K …
    # … and the pooled one, Σ draft tokens / Σ drafts: 8000 / 4000.
    assert row[C.EFFECTIVE_K + AG.SUFFIX_POOLED] == pytest.approx(2.0)
    assert AG.pool_acceptance(frame, [C.LABEL]).iloc[0][C.EFFECTIVE_K] == pytest.approx(2.0)
