"""A K sweep in a suite: a list of Ks expands into one server per K, each its own identity;
bad lists are one line naming the field and file; the dry run names the sweep."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import DATA, run_cli

from specbench.common.errors import SpecbenchError
from specbench.run.plan import (
    RunOptions,
    drop_neutral_server_fields,
    plan_suite,
    resolved_suite,
    suite_hash,
)
from specbench.run.resume import bind, check_resume
from specbench.store.manifest import Manifest, new_run, read_manifest, update_manifest
from specbench.suite import describe_suite, describe_sweeps, load_suite


def suite_text(ks: str, *, extra: str = "", acceptance: str = "") -> str:
    """A vLLM suite whose `eagle3` server has `num_speculative_tokens = ks` (TOML text)."""
    return f"""
name = "sweep"
[target]
model = "org/target"
tensor_parallel_size = 8
env = {{ VLLM_ROCM_USE_AITER = "1" }}

[servers.baseline]
baseline = true

[servers.eagle3]
attention_backend = "TRITON_ATTN"
speculative = {{ method = "eagle3", model = "org/draft", num_speculative_tokens = {ks} }}
{acceptance}
{extra}
[[workloads]]
dataset = "speed-bench:qualitative"
concurrency = [1, 48]
max_tokens = 64
"""


def load(tmp_path: Path, ks: str, *overrides: str, **kwargs: str):
    path = tmp_path / "suite.toml"
    path.write_text(suite_text(ks, **kwargs))
    return load_suite(path, overrides)


def error_of(tmp_path: Path, ks: str, *overrides: str, **kwargs: str) -> str:
    with pytest.raises(SpecbenchError) as caught:
        load(tmp_path, ks, *overrides, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_list_expands_into_one_full_server_per_k_in_the_lists_order(tmp_path: Path) -> None:
    suite = load(tmp_path, "[4, 1, 2]")
    assert list(suite.servers) == ["baseline", "eagle3-k4", "eagle3-k1", "eagle3-k2"]
    assert suite.k_sweeps == {"eagle3": ["eagle3-k4", "eagle3-k1", "eagle3-k2"]}
    assert suite.baseline == "baseline"
    for name, k in (("eagle3-k4", 4), ("eagle3-k1", 1), ("eagle3-k2", 2)):
        config = suite.servers[name]
        assert config.speculative is not None
        assert config.speculative.num_speculative_tokens == k
        assert config.speculative.model == "org/draft"
        assert config.model == "org/target"
        assert config.tensor_parallel_size == 8
        assert config.attention_backend == "TRITON_ATTN"
        assert config.env == {"VLLM_ROCM_USE_AITER": "1"}
        assert not config.baseline
    assert suite.servers["baseline"].speculative is None
    # Every K has its own cells: 2 concurrencies each, the baseline's too.
    keys = [cell.key for cell in suite.expand()]
    assert keys == [
        f"{server}/speed-bench-qualitative/c{c}/r0"
        for server in ("baseline", "eagle3-k4", "eagle3-k1", "eagle3-k2")
        for c in (1, 48)
    ]


def test_one_k_in_a_list_is_a_sweep_and_an_int_is_not(tmp_path: Path) -> None:
    listed = load(tmp_path, "[3]")
    assert list(listed.servers) == ["baseline", "eagle3-k3"]
    assert listed.k_sweeps == {"eagle3": ["eagle3-k3"]}
    single = load(tmp_path, "3")
    assert list(single.servers) == ["baseline", "eagle3"]
    assert single.k_sweeps == {}
    # The same config under another name: the identity is the expanded config, not the list.
    assert (
        resolved_suite(listed)["servers"]["eagle3-k3"]
        == resolved_suite(single)["servers"]["eagle3"]
    )


def test_a_suite_without_a_list_hashes_as_before_and_the_sweep_stays_out_of_it(
    tmp_path: Path,
) -> None:
    single = load(tmp_path, "3")
    assert "k_sweeps" not in resolved_suite(single)
    # The hash main's code (d389994, before K sweeps) gives this suite: its results resume.
    assert suite_hash(single) == "20ce811a6153ab57b1f0ad5889d8bee5c5ab1ee2b7ab0871587371d8ebcb37ab"
    swept = load(tmp_path, "[2, 3]")
    assert "k_sweeps" not in resolved_suite(swept)
    assert list(resolved_suite(swept)["servers"]) == ["baseline", "eagle3-k2", "eagle3-k3"]


def test_set_takes_a_list_through_the_shorthand(tmp_path: Path) -> None:
    suite = load(tmp_path, "3", "servers.eagle3.num_speculative_tokens=[1, 2]")
    assert list(suite.servers) == ["baseline", "eagle3-k1", "eagle3-k2"]
    back = load(tmp_path, "[1, 2]", "servers.eagle3.num_speculative_tokens=5")
    assert list(back.servers) == ["baseline", "eagle3"]
    assert back.servers["eagle3"].speculative is not None
    assert back.servers["eagle3"].speculative.num_speculative_tokens == 5


def bound(tmp_path: Path, ks: str) -> Manifest:
    """The manifest as the real writer leaves it after a run of the suite with `ks`."""
    plan = plan_suite(load(tmp_path, ks), RunOptions(output=tmp_path / "out"))
    out = tmp_path / "out"
    update_manifest(out, lambda m: bind(m, plan, force=False).with_run(new_run("run")))
    manifest = read_manifest(out)
    assert manifest is not None
    return manifest


def test_a_grown_list_keeps_the_identity_of_the_ks_already_measured(tmp_path: Path) -> None:
    manifest = bound(tmp_path, "[1, 2, 3]")
    out = tmp_path / "out"
    grown = plan_suite(load(tmp_path, "[1, 2, 3, 4]"), RunOptions(output=out))
    check_resume(manifest, grown, out, force=False)  # resumes: no refusal
    assert grown.suite is not None
    recorded = (manifest.suite or {})["servers"]
    assert list(recorded) == ["baseline", "eagle3-k1", "eagle3-k2", "eagle3-k3"]
    for name, config in recorded.items():
        drop_neutral_server_fields(config)  # as resume compares them
        assert config == resolved_suite(grown.suite, redact=False)["servers"][name]
    # Each K is its own identity: another draft is refused at the first K measured.
    other = plan_suite(
        load(tmp_path, "[1, 2, 3, 4]", 'servers.eagle3.speculative.model="org/draft-v2"'),
        RunOptions(output=out),
    )
    with pytest.raises(SpecbenchError) as caught:
        check_resume(manifest, other, out, force=False)
    assert str(caught.value).startswith(
        f"{out}: server 'eagle3-k1' was measured here with speculative.model='org/draft', "
        "this run asks 'org/draft-v2'"
    )


BAD_LISTS = [
    ("[]", "the K list is empty; list Ks of 1 or more, e.g. [1, 2, 3], or give one K"),
    (
        "[0, 1, 2]",
        "K = 0 is the baseline (the server with baseline = true, speculation off), not a "
        "speculative config; list Ks of 1 or more, got [0, 1, 2]",
    ),
    ("[1, 2, 2, 3]", "K 2 listed twice in [1, 2, 2, 3]; list each K once"),
    ("[1, 2.5]", "Ks are integers of 1 or more, got [1, 2.5]"),
    ('[1, "2"]', 'Ks are integers of 1 or more, got [1, "2"]'),
    ("[1, true]", "Ks are integers of 1 or more, got [1, true]"),
    ("[-1, 2]", "Ks are integers of 1 or more, got [-1, 2]"),
]


@pytest.mark.parametrize(("ks", "problem"), BAD_LISTS)
def test_a_bad_list_is_one_line_naming_the_field_and_file(
    tmp_path: Path, ks: str, problem: str
) -> None:
    path = tmp_path / "suite.toml"
    assert error_of(tmp_path, ks) == (
        f"{path}: servers.eagle3.speculative.num_speculative_tokens: {problem}"
    )


def test_a_bad_list_from_set_names_the_set(tmp_path: Path) -> None:
    message = error_of(tmp_path, "3", "servers.eagle3.num_speculative_tokens=[2, 2]")
    assert message == (
        f"{tmp_path / 'suite.toml'}: servers.eagle3.speculative.num_speculative_tokens: "
        "K 2 listed twice in [2, 2]; list each K once "
        "(from --set 'servers.eagle3.num_speculative_tokens=[2, 2]')"
    )


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_swept_name_that_clashes_with_a_written_server_is_refused(
    tmp_path: Path, where: str
) -> None:
    written = (
        '[servers.eagle3-k2]\nspeculative = { method = "ngram", num_speculative_tokens = 2 }\n'
    )
    text = suite_text("[1, 2, 3]", extra=written)
    if where == "before":  # the written server first in the file
        text = text.replace("[servers.baseline]", written + "\n[servers.baseline]").replace(
            written + "\n[[workloads]]", "[[workloads]]"
        )
    path = tmp_path / "suite.toml"
    path.write_text(text)
    with pytest.raises(SpecbenchError) as caught:
        load_suite(path)
    assert str(caught.value) == (
        f"{path}: servers.eagle3.speculative.num_speculative_tokens: the sweep's server "
        "'eagle3-k2' (K = 2) clashes with [servers.eagle3-k2]; rename one of them"
    )


def test_a_sweep_on_the_baseline_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(
        suite_text("3").replace(
            "baseline = true",
            'baseline = true\nspeculative = { method = "ngram", num_speculative_tokens = [1, 2] }',
        )
    )
    with pytest.raises(SpecbenchError) as caught:
        load_suite(path)
    assert str(caught.value) == (
        f"{path}: servers.baseline.speculative.num_speculative_tokens: a K sweep on the "
        "baseline server; the baseline is K = 0 (speculation off): sweep a speculative server"
    )


EMULATOR = """
name = "emu-sweep"
[target]
engine = "emulator"
model = "emu"
[servers.baseline]
baseline = true
[servers.eagle3]
speculative = {{ method = "eagle3", model = "d", num_speculative_tokens = {ks} }}
emulator = {{ acceptance = [0.8, 0.75, 0.7], reasoning_acceptance = [0.9, 0.5, 0.4] }}
[[workloads]]
dataset = "{data}"
concurrency = [1, 4]
max_tokens = 16
"""


def test_each_emulated_k_takes_the_first_k_acceptances(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(EMULATOR.format(ks="[1, 3]", data=DATA))
    suite = load_suite(path)
    one, three = suite.servers["eagle3-k1"].emulator, suite.servers["eagle3-k3"].emulator
    assert one is not None and three is not None
    assert (one.acceptance, one.reasoning_acceptance) == ([0.8], [0.9])
    assert (three.acceptance, three.reasoning_acceptance) == ([0.8, 0.75, 0.7], [0.9, 0.5, 0.4])
    path.write_text(EMULATOR.format(ks="[2, 4]", data=DATA))
    with pytest.raises(SpecbenchError) as caught:
        load_suite(path)
    assert str(caught.value) == (
        f"{path}: servers.eagle3.emulator.acceptance: 3 values, but the K sweep [2, 4] goes up "
        "to K = 4; give one value per draft position up to the largest K (each K takes its "
        "first K)"
    )


def test_describe_names_each_sweep_against_the_baseline(tmp_path: Path) -> None:
    suite = load(tmp_path, "[1, 2, 3]")
    line = (
        "K sweep: eagle3 \u2192 eagle3-k1, eagle3-k2, eagle3-k3 (K = 1, 2, 3) against "
        "baseline (K = 0)"
    )
    assert describe_sweeps(suite) == [line]
    assert line in describe_suite(suite).splitlines()
    assert describe_sweeps(load(tmp_path, "3")) == []


def test_the_dry_run_lists_the_expanded_servers_their_cells_and_the_sweep(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(EMULATOR.format(ks="[1, 2, 3]", data=DATA))
    out = tmp_path / "out"
    done = run_cli("run", path, "--output", out, "--dry-run")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        f"suite emu-sweep ({path}): 8 of its 8 cells selected; 0 already complete in {out}; "
        "8 to measure"
    )
    servers = [
        line.split(" [")[0].strip() for line in lines if line.startswith("  ") and " [" in line
    ]
    assert servers == ["baseline", "eagle3-k1", "eagle3-k2", "eagle3-k3"]
    commands = [line for line in lines if " emulate " in line]
    ks = [c.split("--num-speculative-tokens ")[1].split()[0] for c in commands[1:]]
    assert ks == ["1", "2", "3"]
    assert "--no-spec" in commands[0]
    assert (
        "K sweep: eagle3 \u2192 eagle3-k1, eagle3-k2, eagle3-k3 (K = 1, 2, 3) against baseline "
        "(K = 0)"
    ) in lines
    cells = lines[lines.index("cells (server/workload/concurrency/repeat):") + 1 :][:8]
    assert cells == [
        f"  {server}/tiny/c{c}/r0"
        for server in ("baseline", "eagle3-k1", "eagle3-k2", "eagle3-k3")
        for c in (1, 4)
    ]
    assert not out.exists()  # a dry run writes nothing


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ("[0, 1]", "K = 0 is the baseline"),
        ("[1, 1]", "K 1 listed twice in [1, 1]"),
        ('["one"]', 'Ks are integers of 1 or more, got ["one"]'),
    ],
)
def test_run_refuses_a_bad_list_in_one_line_with_exit_2_before_any_server(
    tmp_path: Path, setting: str, problem: str
) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(EMULATOR.format(ks="3", data=DATA))
    out = tmp_path / "out"
    done = run_cli(
        "run", path, "--output", out, "--set", f"servers.eagle3.num_speculative_tokens={setting}"
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(
        f"error: {path}: servers.eagle3.speculative.num_speculative_tokens: {problem}"
    )
    assert not out.exists()  # nothing started, nothing written
