"""Snapshots and baseline files built from results directories written through the contract."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from gate_fixtures import write_cell, write_results

from specbench.common.errors import SpecbenchError
from specbench.gate.baseline import build_baseline, load_baseline, save_baseline
from specbench.gate.snapshot import snapshot

CELL = "eagle3/speed-bench-qualitative/c8"


def test_acceptance_is_pooled_and_spread_is_over_repeats(tmp_path):
    results = write_results(tmp_path / "r")
    stats = snapshot(results).cells[CELL]
    al = stats.metrics["acceptance_length"]
    # Repeats: AL 2.8 over 1000 steps and 3.0 over 500 steps; pooled = 1 + 2800/1500.
    assert al.value == pytest.approx(1 + 2800 / 1500)
    assert al.value != pytest.approx(2.9)  # not the mean of the per-repeat ALs
    assert al.std == pytest.approx(math.sqrt(2) * 0.1)
    assert (al.n, al.min, al.max) == (2, pytest.approx(2.8), pytest.approx(3.0))
    assert stats.metrics["per_position_acceptance_3"].value == pytest.approx(650 / 1500)
    tok_s = stats.metrics["output_tok_s_per_gpu"]
    assert (tok_s.value, tok_s.std) == (pytest.approx(1005.0), pytest.approx(math.sqrt(50)))
    assert stats.repeats == 2 and stats.max_tokens == 256 and stats.categories == {}


def test_category_acceptance_is_pooled_by_steps(tmp_path):
    results = write_results(
        tmp_path / "r",
        categories=[
            {"code": (3.0, 300), "chat": (2.0, 100)},
            {"code": (2.5, 100), "chat": (2.2, 100)},
        ],
    )
    categories = snapshot(results).cells[CELL].categories
    code = categories["code"]["acceptance_length"]
    assert code.value == pytest.approx(1 + (2.0 * 300 + 1.5 * 100) / 400)
    assert code.std == pytest.approx(math.sqrt(2) * 0.25) and code.n == 2
    assert categories["chat"]["acceptance_length"].value == pytest.approx(2.1)


def test_failed_cell_is_listed_with_its_reason(tmp_path):
    results = write_results(tmp_path / "r")
    failed = tmp_path / "r" / "eagle3" / "speed-bench-qualitative" / "c16" / "r0"
    failed.mkdir(parents=True)
    (failed / "failure.json").write_text(json.dumps({"error": "server died\ntraceback"}))
    data = snapshot(results)
    assert data.failed_cells == {"eagle3/speed-bench-qualitative/c16": "r0: server died"}
    with pytest.raises(SpecbenchError, match=r"cell eagle3/speed-bench-qualitative/c16 failed"):
        build_baseline(results)


def test_baseline_round_trip_is_self_describing(tmp_path):
    results = write_results(tmp_path / "r", name="nightly", draft="ckpt-7")
    out = tmp_path / "baselines" / "nightly.json"
    saved = save_baseline(results, out)
    raw = json.loads(out.read_text())
    assert raw["kind"] == "specbench-baseline" and raw["schema_version"] == 2
    assert raw["suite"]["name"] == "nightly" and raw["source_results_dir"] == str(results.resolve())
    # Path-independent: the dataset's absolute path is reduced to its folder name.
    assert raw["suite"]["workloads"][0]["dataset_dir"] == "speed-bench-qualitative"
    assert len(raw["suite"]["workloads_hash"]) == 64
    assert raw["servers"]["eagle3"]["speculative"] == {"method": "eagle3", "model": "ckpt-7"}
    assert load_baseline(out) == saved


def test_foreign_or_newer_baseline_is_refused(tmp_path):
    results = write_results(tmp_path / "r")
    out = tmp_path / "b.json"
    save_baseline(results, out)
    raw = json.loads(out.read_text())
    (tmp_path / "newer.json").write_text(json.dumps({**raw, "schema_version": 3}))
    with pytest.raises(SpecbenchError, match=r"newer.json: baseline schema_version 3 is not"):
        load_baseline(tmp_path / "newer.json")
    (tmp_path / "other.json").write_text(json.dumps({"schema_version": 1}))
    with pytest.raises(SpecbenchError, match=r"other.json: not a specbench baseline"):
        load_baseline(tmp_path / "other.json")
    del raw["cells"]
    (tmp_path / "cut.json").write_text(json.dumps(raw))
    with pytest.raises(
        SpecbenchError, match=r"cut.json: invalid baseline \(cells: required but missing"
    ):
        load_baseline(tmp_path / "cut.json")


def test_cells_without_speculation_have_no_acceptance(tmp_path):
    from gate_fixtures import summary, write_manifest

    write_manifest(tmp_path / "r")
    write_cell(tmp_path / "r", summary(label="baseline"))
    stats = snapshot(Path(tmp_path / "r")).cells["baseline/speed-bench-qualitative/c8"]
    assert "acceptance_length" not in stats.metrics
    assert stats.metrics["ttft_ms_median"].std is None and stats.metrics["ttft_ms_median"].n == 1
