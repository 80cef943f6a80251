"""`prepared.json` records the revision each mirror folder holds, or that it recorded none.

A repo folder copied without the `.cache/huggingface/download/*.metadata` that
`huggingface-cli download --local-dir` writes holds no record of its commit: the pin cannot
be checked, so `prepared.json` must not claim it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness import run_cli
from hf_offline import offline_env

from specbench.data.prepare.upstream import sha256_file

from .conftest import mirror_copy

UNRECORDED = ("TIGER-Lab/MMLU-Pro", "livecodebench/code_generation_lite", "nvidia/SPEED-Bench")
LIVECODEBENCH_URL = (
    "https://huggingface.co/datasets/livecodebench/code_generation_lite/resolve/"
    "0fe84c3912ea0c4d4a78037083943e8f0c4dd505/test.jsonl"
)


def test_a_mirror_folder_without_its_revision_is_recorded_as_not_recorded(
    tmp_path: Path,
) -> None:
    mirror = mirror_copy(tmp_path)
    for repo in UNRECORDED:
        shutil.rmtree(mirror / repo / ".cache")
    out = tmp_path / "out"
    result = run_cli(
        "data",
        "prepare",
        "qualitative",
        "--mirror",
        mirror,
        "--output",
        out,
        env=offline_env(tmp_path),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "prepared.json").read_text())
    sources = manifest["sources"]
    assert {repo: sources[repo] for repo in UNRECORDED} == dict.fromkeys(UNRECORDED, "not recorded")
    assert manifest["speed_bench"] == {"repo": "nvidia/SPEED-Bench", "revision": "not recorded"}
    # A file of such a repo, named by URL, is recorded by its content instead.
    held = mirror / "livecodebench/code_generation_lite/test.jsonl"
    assert sources[LIVECODEBENCH_URL] == f"sha256:{sha256_file(held)}"
    # Folders that recorded their commit keep it.
    assert sources["cais/hle"] == "021a3d71f516a7ac28ceb8d284969902edf1edeb"
    assert sources["Helsinki-NLP/opus-100"] == "805090dc28bf78897da9641cdf08b61287580df9"
    assert (
        "note: the mirror recorded no revision for TIGER-Lab/MMLU-Pro, "
        "livecodebench/code_generation_lite, nvidia/SPEED-Bench: not checked against the pins; "
        "prepared.json says 'not recorded'" in result.stdout
    )
