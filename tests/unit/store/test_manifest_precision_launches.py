"""The manifest's `precision_launches` record: absent in older manifests (which load and are
rewritten without it), replaced whole by each run's decision, read back as written."""

from __future__ import annotations

import json
from pathlib import Path

from specbench.store.manifest import PrecisionPoint, read_manifest, update_manifest

POINT = PrecisionPoint(
    server="eagle3",
    workload="tiny",
    concurrency=2,
    target=0.02,
    launches_used=4,
    max_launches=4,
    half_widths={"output_tok_s_per_gpu": 0.031, "ttft_ms_median": None},
    stopped="cap reached",
    regimes=["ttft_ms_median"],
)


def test_a_manifest_without_the_record_loads_and_is_rewritten_without_it(tmp_path: Path) -> None:
    update_manifest(tmp_path, lambda manifest: manifest)
    assert "precision_launches" not in json.loads((tmp_path / "manifest.json").read_text())
    manifest = read_manifest(tmp_path)
    assert manifest is not None and manifest.precision_launches is None


def test_the_record_is_written_and_read_back_and_a_rerun_replaces_it(tmp_path: Path) -> None:
    update_manifest(tmp_path, lambda m: m.model_copy(update={"precision_launches": [POINT]}))
    raw = json.loads((tmp_path / "manifest.json").read_text())
    assert raw["precision_launches"] == [
        {
            "server": "eagle3",
            "workload": "tiny",
            "concurrency": 2,
            "target": 0.02,
            "launches_used": 4,
            "max_launches": 4,
            "half_widths": {"output_tok_s_per_gpu": 0.031, "ttft_ms_median": None},
            "stopped": "cap reached",
            "regimes": ["ttft_ms_median"],
        }
    ]
    reached = POINT.model_copy(update={"launches_used": 5, "stopped": "precision reached"})
    update_manifest(tmp_path, lambda m: m.model_copy(update={"precision_launches": [reached]}))
    manifest = read_manifest(tmp_path)
    assert manifest is not None and manifest.precision_launches == [reached]


def test_a_record_without_regimes_loads_with_none_flagged() -> None:
    raw = POINT.model_dump(mode="json")
    del raw["regimes"]
    assert PrecisionPoint.model_validate(raw).regimes == []
