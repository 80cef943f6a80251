"""`data prepare --mirror FIXTURE` reproduces NVIDIA's recorded output byte for byte.

`tests/fixtures/speed_bench_nvidia/` holds what NVIDIA Model-Optimizer's own code wrote from
the same fixture mirror (its README says how it was produced).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from .conftest import CONFIGS, NVIDIA


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


@pytest.mark.parametrize("config", CONFIGS)
def test_every_row_is_identical_to_nvidias(prepared: Path, config: str) -> None:
    ours = rows(prepared / "speed" / config / "test.parquet")
    theirs = rows(NVIDIA / "speed" / config / "test.parquet")
    assert [r["question_id"] for r in ours] == [r["question_id"] for r in theirs]
    for mine, recorded in zip(ours, theirs, strict=True):
        assert mine == recorded
        # Byte for byte, not just equal as Python strings.
        assert [t.encode() for t in mine["turns"]] == [t.encode() for t in recorded["turns"]]
    assert not any(t.startswith("FULL BENCHMARK DATA") for r in ours for t in r["turns"])


@pytest.mark.parametrize(("config", "target"), [("throughput_1k", 1000), ("throughput_32k", 32000)])
def test_throughput_prompts_have_the_config_length(
    prepared: Path, config: str, target: int
) -> None:
    from specbench.data.prepare.tokens import count

    lengths: dict[str, set[int]] = {}
    for row in rows(prepared / "speed" / config / "test.parquet"):
        lengths.setdefault(row["source"].rsplit("/", 1)[-1], set()).add(count(row["turns"][0]))
    # Padded or cut to exactly N; HLE's upstream slice keeps one token more.
    assert lengths.pop("hle") == {target + 1}
    assert lengths.pop("SPEED-Bench") == {161}  # a row already resolved upstream: unchanged
    assert set().union(*lengths.values()) == {target}


def test_prepared_json_records_revisions_and_row_hashes(prepared: Path) -> None:
    from specbench.data.prepare.manifest import turns_hash

    manifest = json.loads((prepared / "prepared.json").read_text())
    assert manifest["flavour"] == "model-optimizer"
    assert manifest["resolver"]["commit"] == "a2fbac7bad8ab446d3f8783dadb0c3366eb0ad73"
    assert manifest["speed_bench"]["revision"] == "487aa718444e816458d1a0a52bfce7a454285cf4"
    assert manifest["sources"]["cais/hle"] == "021a3d71f516a7ac28ceb8d284969902edf1edeb"
    url = "http://opencompass.openxlab.space/utils/AdaLEval/stackselect_1k.json"
    assert manifest["sources"][url].startswith("sha256:")
    entry = manifest["configs"]["qualitative"]
    assert entry["rows"] == 21 and entry["partial"] is False
    assert sum(entry["categories"].values()) == 21
    first = rows(prepared / "speed" / "qualitative" / "test.parquet")[0]
    assert entry["row_sha256"][first["question_id"]] == turns_hash(first["turns"])


def test_the_jsonl_shape_holds_the_same_text_as_messages(prepared: Path) -> None:
    parquet = rows(prepared / "speed" / "qualitative" / "test.parquet")
    lines = (prepared / "qualitative.jsonl").read_text().splitlines()
    shaped = [json.loads(line) for line in lines]
    assert [r["question_id"] for r in shaped] == [r["question_id"] for r in parquet]
    for row, nemo in zip(parquet, shaped, strict=True):
        assert [m["content"] for m in nemo["messages"]] == row["turns"]
        assert {m["role"] for m in nemo["messages"]} == {"user"}
        assert "turns" not in nemo


def test_the_folder_loads_as_speed_bench_config_dir(prepared: Path) -> None:
    from specbench.data.loader import load_workload

    workload = load_workload(f"speed-bench:throughput_8k:{prepared}")
    assert len(workload.conversations) == 12
    nemo = load_workload(f"speed-bench:qualitative:{prepared / 'qualitative.jsonl'}")
    assert len(nemo.conversations) == 21
