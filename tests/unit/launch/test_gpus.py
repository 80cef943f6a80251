"""The GPU inventory: each vendor tool's output parsed (recorded layouts and broken ones), and
the tools asked in turn through stand-in executables on PATH."""

from __future__ import annotations

from pathlib import Path

from gpu_tools import AMD_SMI_24, AMD_SMI_26, FIXTURES, NVIDIA_SMI, ROCM_SMI, stand_in

from specbench.launch.gpu_output import (
    GpuFacts,
    parse_amd_smi_static,
    parse_amd_smi_version,
    parse_nvidia_smi_query,
    parse_nvidia_smi_version,
    parse_rocm_smi,
)
from specbench.launch.gpus import probe_gpus


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_amd_smi_26_static_names_the_mi355x() -> None:
    facts = parse_amd_smi_static(fixture("amd-smi-26-static-mi355x.json"))
    assert facts == GpuFacts(
        count=8, product="AMD Instinct MI355X", vram_mib=294_896, driver="6.16.6"
    )
    assert parse_amd_smi_version(fixture("amd-smi-26-version.json")) == "7.2.0"


def test_amd_smi_24_static_is_a_bare_list() -> None:
    facts = parse_amd_smi_static(fixture("amd-smi-24-static-mi300x.json"))
    assert facts == GpuFacts(
        count=2, product="AMD Instinct MI300X", vram_mib=196_592, driver="6.7.0"
    )
    assert parse_amd_smi_version(fixture("amd-smi-24-version.json")) == "6.2.4"


def test_rocm_smi_fallback_reads_cards_and_the_system_driver() -> None:
    facts = parse_rocm_smi(fixture("rocm-smi-mi300x.json"))
    # 206,141,652,992 B = 196,592 MiB: the same card as amd-smi's 196,592 "MB".
    assert facts == GpuFacts(
        count=8, product="AMD Instinct MI300X", vram_mib=196_592, driver="6.7.0"
    )


def test_nvidia_smi_csv_and_its_cuda_version() -> None:
    facts = parse_nvidia_smi_query(fixture("nvidia-smi-query-h100.csv"))
    assert facts == GpuFacts(
        count=8, product="NVIDIA H100 80GB HBM3", vram_mib=81_559, driver="550.54.15"
    )
    assert parse_nvidia_smi_version(fixture("nvidia-smi-version.txt")) == "12.4"


def test_malformed_or_empty_output_lists_no_gpu() -> None:
    static = fixture("amd-smi-26-static-mi355x.json")
    for text in ("", "not json", static[: len(static) // 2], '{"gpu_data": []}', "[]", "{}"):
        assert parse_amd_smi_static(text) is None, text
    assert parse_rocm_smi("{}") is None and parse_rocm_smi('{"system": {}}') is None
    assert parse_rocm_smi("WARNING: No JSON data to report") is None
    assert parse_nvidia_smi_query("No devices were found") is None
    assert parse_nvidia_smi_query("") is None
    assert parse_amd_smi_version("garbage") is None
    assert parse_nvidia_smi_version("NVIDIA-SMI version  : 550.54.15") is None


def test_a_warning_before_the_json_and_missing_fields_are_tolerated() -> None:
    text = (
        "WARNING: User is missing the following required groups: render\n"
        '{"gpu_data": [{"gpu": 0, "asic": {"market_name": "N/A"}, "board": '
        '{"product_name": "AMD Instinct MI355X OAM"}, "vram": {"size": "294896 MB"}}, '
        '{"gpu": 1, "asic": {"market_name": "AMD Instinct MI300X"}, "vram": {"size": "N/A"}, '
        '"driver": {"version": "N/A"}}]}'
    )
    # market_name N/A falls back to the board's name; different GPUs are both named; VRAM is
    # the smaller known one; an N/A driver is unknown.
    assert parse_amd_smi_static(text) == GpuFacts(
        count=2,
        product="AMD Instinct MI355X OAM, AMD Instinct MI300X",
        vram_mib=294_896,
        driver=None,
    )
    assert parse_nvidia_smi_query("NVIDIA GB10, [N/A], 580.142\n") == GpuFacts(
        count=1, product="NVIDIA GB10", vram_mib=None, driver="580.142"
    )


def test_amd_smi_answers_first_with_rocm_version(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "amd-smi", AMD_SMI_26)
    stand_in(bin_dir, "nvidia-smi", NVIDIA_SMI)
    probe = probe_gpus({"PATH": str(bin_dir)})
    inventory = probe.inventory
    assert inventory is not None and probe.silent == ()
    assert inventory.summary() == (
        "8 × AMD Instinct MI355X, 294,896 MiB each, driver 6.16.6, ROCm 7.2.0 (amd-smi)"
    )
    assert (inventory.tool, inventory.num_gpus, inventory.cuda_version) == ("amd-smi", 8, None)
    assert inventory.output.startswith("$ amd-smi static --asic --vram --driver --json\n{")
    assert "\n$ amd-smi version --json\n[" in inventory.output


def test_a_failing_or_silent_tool_hands_over_to_the_next(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "amd-smi", None)  # exits 1, as without a driver
    stand_in(bin_dir, "rocm-smi", ROCM_SMI)
    probe = probe_gpus({"PATH": str(bin_dir)})
    assert probe.silent == ("amd-smi: exit 1",)
    assert probe.inventory is not None
    assert probe.inventory.summary() == (
        "8 × AMD Instinct MI300X, 196,592 MiB each, driver 6.7.0 (rocm-smi)"
    )
    older = tmp_path / "older"
    stand_in(older, "amd-smi", {"static": "nvidia-smi-version.txt"})  # not JSON: no GPU
    stand_in(older, "nvidia-smi", NVIDIA_SMI)
    probe = probe_gpus({"PATH": str(older)})
    assert probe.silent == ("amd-smi: listed no GPU", "rocm-smi: not found")
    assert probe.inventory is not None
    assert probe.inventory.summary() == (
        "8 × NVIDIA H100 80GB HBM3, 81,559 MiB each, driver 550.54.15, CUDA 12.4 (nvidia-smi)"
    )
    stand_in(tmp_path / "v24", "amd-smi", AMD_SMI_24)
    inventory = probe_gpus({"PATH": str(tmp_path / "v24")}).inventory
    assert inventory is not None and inventory.rocm_version == "6.2.4"


def test_no_tool_at_all_says_which_were_tried(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    probe = probe_gpus({"PATH": str(empty)})
    assert probe.inventory is None
    assert probe.unanswered() == (
        "no GPU tool answered (amd-smi: not found; rocm-smi: not found; nvidia-smi: not found)"
    )
