"""Resuming into a results directory: identity per cell; a sweep grows, a measured change stops."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import run_cli

from specbench.common.errors import SpecbenchError
from specbench.run.plan import RunOptions, plan_suite
from specbench.run.resume import bind, check_resume, recorded_workload, with_suite
from specbench.store.manifest import Manifest, new_run, read_manifest, update_manifest
from specbench.suite import load_suite

from .pilot_resume_suites import suite_text

TINY = Path(__file__).resolve().parents[2] / "fixtures" / "custom" / "tiny.jsonl"

SUITE = suite_text(
    "sweep",
    top='description = "first pass"\n',
    target='env = { HF_TOKEN = "hf_old" }\n',
    workloads="""[[workloads]]
dataset = "mt-bench"
concurrency = [1, 4]
max_tokens = 64
""",
)


def plan(tmp_path: Path, *overrides: str, command: str = "run", extra: str = ""):
    path = tmp_path / "suite.toml"
    path.write_text(SUITE + extra)
    return plan_suite(
        load_suite(path, overrides), RunOptions(output=tmp_path / "out"), command=command
    )


def bound(tmp_path: Path, *overrides: str, command: str = "run") -> Manifest:
    """The manifest as the real writer leaves it after a run of the suite (secrets redacted)."""
    first = plan(tmp_path, *overrides, command=command)
    out = tmp_path / "out"
    update_manifest(out, lambda m: bind(m, first, force=False).with_run(new_run(command)))
    manifest = read_manifest(out)
    assert manifest is not None
    return manifest


def refusal(manifest: Manifest, tmp_path: Path, *overrides: str) -> str:
    with pytest.raises(SpecbenchError) as error:
        check_resume(manifest, plan(tmp_path, *overrides), tmp_path / "out", force=False)
    return str(error.value)


GROWN = (
    "workloads.0.concurrency=[1, 4, 16]",
    "repeats=2",
    'description="extended by one point"',
    'name="sweep-v2"',
    "workloads.0.request_timeout_s=60.0",  # no figure changes: never blocks
    "workloads.0.save_outputs=false",
)


def test_a_grown_sweep_resumes_and_a_new_workload_or_server_is_welcome(tmp_path):
    manifest = bound(tmp_path)
    check_resume(manifest, plan(tmp_path, *GROWN), tmp_path / "out", force=False)
    grown = plan(
        tmp_path,
        extra='[servers.ngram]\nspeculative = { method = "ngram", num_speculative_tokens = 2 }\n'
        '[[workloads]]\nname = "long"\ndataset = "mt-bench"\nconcurrency = [2]\nmax_tokens = 128\n',
    )
    check_resume(manifest, grown, tmp_path / "out", force=False)
    rebound = bind(manifest, grown, force=False)
    assert sorted(rebound.workloads) == ["long", "mt-bench"]
    assert rebound.workloads["mt-bench"] == manifest.workloads["mt-bench"]  # first record kept
    assert rebound.suite is not None and "ngram" in rebound.suite["servers"]


def test_a_dry_run_refuses_what_the_run_would_refuse_into_the_same_folder(tmp_path):
    local = f'workloads.0.dataset="{TINY}"'
    bound(tmp_path, local)
    suite = tmp_path / "suite.toml"
    out = tmp_path / "out"
    before = (out / "manifest.json").read_bytes()

    def dry_run(*overrides: str):
        sets = [word for o in (local, *overrides) for word in ("--set", o)]
        return run_cli("run", suite, "--output", out, "--dry-run", *sets)

    grown = dry_run("repeats=2")
    assert grown.returncode == 0, grown.stderr
    changed = dry_run("workloads.0.max_tokens=32")
    assert changed.returncode == 2
    (line,) = [x for x in changed.stderr.splitlines() if x.startswith("error:")]
    assert "workload 'tiny' was measured here with max_tokens=64, this run asks 32" in line
    assert (out / "manifest.json").read_bytes() == before


def test_a_new_token_resumes(tmp_path):
    manifest = bound(tmp_path)
    tokened = plan(tmp_path, 'target.env={ HF_TOKEN = "hf_new" }')
    check_resume(manifest, tokened, tmp_path / "out", force=False)


def test_a_changed_measured_workload_field_is_one_line_naming_both_values(tmp_path):
    manifest = bound(tmp_path)
    message = refusal(manifest, tmp_path, "workloads.0.max_tokens=32")
    assert message == (
        f"{tmp_path / 'out'}: workload 'mt-bench' was measured here with max_tokens=64, this "
        "run asks 32; give the workload a new name (`name` in the suite, --workload-name in "
        "bench), measure its cells again with --force, or use a new --output"
    )
    assert "warmup=0, this run asks 2" in refusal(manifest, tmp_path, "workloads.0.warmup=2")
    assert "precision=None, this run asks 0.05" in refusal(
        manifest, tmp_path, "workloads.0.precision=0.05"
    )
    # --force measures the workload again and records it anew.
    forced = plan(tmp_path, "workloads.0.max_tokens=32")
    check_resume(manifest, forced, tmp_path / "out", force=True)
    assert bind(manifest, forced, force=True).workloads["mt-bench"].spec["max_tokens"] == 32


def test_a_changed_server_field_is_refused_with_its_dotted_path(tmp_path):
    manifest = bound(tmp_path)
    message = refusal(manifest, tmp_path, "servers.eagle3.speculative.num_speculative_tokens=2")
    assert (
        "server 'eagle3' was measured here with speculative.num_speculative_tokens=3, this run "
        "asks 2;" in message
    )
    assert "server 'baseline' was measured here with max_model_len=None, this run asks 512" in (
        refusal(manifest, tmp_path, "target.max_model_len=512")
    )
    assert "the suite was measured here with gpus=None, this run asks 4" in (
        refusal(manifest, tmp_path, "gpus=4")
    )


def test_a_server_left_out_and_added_back_with_another_config_is_refused(tmp_path):
    manifest = bound(tmp_path)
    without = plan(tmp_path)
    assert without.suite is not None
    dropped = without.suite.model_copy(
        update={"servers": {"baseline": without.suite.servers["baseline"]}}
    )
    rebound = with_suite(manifest, dropped)
    assert rebound.suite is not None and list(rebound.suite["servers"]) == ["baseline"]
    assert rebound.retired_servers["eagle3"] == manifest.suite["servers"]["eagle3"]
    # Added back with K = 2: refused as a changed server, though the latest suite lacked it.
    message = refusal(rebound, tmp_path, "servers.eagle3.speculative.num_speculative_tokens=2")
    assert "server 'eagle3' was measured here with speculative.num_speculative_tokens=3" in message
    # Added back as it was: resumes, and it is no longer retired once bound again.
    again = plan(tmp_path)
    check_resume(rebound, again, tmp_path / "out", force=False)
    assert bind(rebound, again, force=False).retired_servers == {}


def test_a_record_written_before_later_fields_still_resumes(tmp_path):
    manifest = bound(tmp_path)
    record = manifest.workloads["mt-bench"]
    # Schema-2 records made before per_chunk_usage, history and precision existed.
    older = {k: v for k, v in record.spec.items() if k not in ("per_chunk_usage", "history")}
    assert older == recorded_workload(plan(tmp_path).workloads[0])
    manifest = manifest.model_copy(
        update={"workloads": {"mt-bench": record.model_copy(update={"spec": older})}}
    )
    check_resume(manifest, plan(tmp_path, *GROWN[:2]), tmp_path / "out", force=False)


def test_pilot_and_campaign_cells_never_share_a_directory(tmp_path):
    pilot = bound(tmp_path, command="pilot")
    assert "holds pilot cells (run --dry-run --pilot)" in refusal(pilot, tmp_path)
    (tmp_path / "c").mkdir()
    campaign = bound(tmp_path / "c")
    with pytest.raises(SpecbenchError, match="holds campaign cells"):
        check_resume(campaign, plan(tmp_path, command="pilot"), tmp_path / "out", force=False)
