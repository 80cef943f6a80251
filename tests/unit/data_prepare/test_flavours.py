"""NeMo-Skills' flavour: qualitative text the same, throughput whitespace and HLE draws not."""

from __future__ import annotations

from pathlib import Path

from specbench.data.prepare import pipeline, templates
from specbench.data.prepare.diff import diff_config

from .conftest import MIRROR, NVIDIA


def test_nemo_skills_prompts_are_model_optimizers_without_trailing_spaces() -> None:
    nemo = templates.NEMO_SKILLS
    assert "completer. \n" in templates.BAMBOO_HEAD and "completer.\n" in nemo["BAMBOO_HEAD"]
    assert nemo["TEXTSORT_REPLACEMENT"].endswith("\nZZZ\n\nYYY\n")
    assert (
        "\nEach time, you will be provided with 4 pieces of text.\n" in nemo["TEXTSORT_REPLACEMENT"]
    )
    assert "to the question.\nYou must" in nemo["STACKSELECT_INTRO"]
    assert templates.pick("STACKSELECT_END", "nemo-skills") == templates.STACKSELECT_END


def test_the_flavours_agree_on_qualitative_and_differ_on_throughput(tmp_path: Path) -> None:
    out = tmp_path / "nemo"
    content = pipeline.prepare(["qualitative", "throughput_2k"], out, MIRROR, flavour="nemo-skills")
    assert content["flavour"] == "nemo-skills"
    assert content["resolver"]["commit"] == "aeda1da41ec2888848ffa094305b7669df493f6c"
    same = diff_config("qualitative", out, NVIDIA)
    assert (same.identical, same.compared) == (21, 21)
    other = diff_config("throughput_2k", out, NVIDIA)
    changed = {qid for qid, *_ in other.changed}
    # The 2 BAMBOO, 2 TextSort and 3 StackSelect rows; HLE's draws start afresh here.
    assert (other.identical, len(changed)) == (5, 7)


def test_nemo_skills_shares_one_hle_generator_across_configs(tmp_path: Path) -> None:
    alone = pipeline.prepare(["throughput_2k"], tmp_path / "a", MIRROR, flavour="nemo-skills")
    after = pipeline.prepare(
        ["throughput_1k", "throughput_2k"], tmp_path / "b", MIRROR, flavour="nemo-skills"
    )
    hashes_alone = alone["configs"]["throughput_2k"]["row_sha256"]
    hashes_after = after["configs"]["throughput_2k"]["row_sha256"]
    assert hashes_alone != hashes_after  # the HLE rows drew after throughput_1k's
    mo_alone = pipeline.prepare(["throughput_2k"], tmp_path / "c", MIRROR)
    mo_after = pipeline.prepare(["throughput_1k", "throughput_2k"], tmp_path / "d", MIRROR)
    assert (
        mo_alone["configs"]["throughput_2k"]["row_sha256"]
        == mo_after["configs"]["throughput_2k"]["row_sha256"]
    )
