"""The gated source (`cais/hle`): access checked first, in one line; `--skip-gated` is partial."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from specbench.analysis.provenance import provenance
from specbench.common.errors import SpecbenchError
from specbench.data.loader import load_workload
from specbench.data.prepare import gated, pipeline
from specbench.render.report import ReportOptions, build_report
from specbench.run.preflight import load_plan_workload
from specbench.store.manifest import WorkloadRecord, read_manifest
from specbench.suite.model import IDENTITY_FIELDS, WorkloadSpec

from .conftest import FIXTURES, MIRROR

RUN = FIXTURES / "runs" / "tiny-vllm-ngram"  # a real recorded run, to report on


def test_no_token_is_one_line_naming_the_source_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-token-here"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "token"))
    monkeypatch.setattr(
        huggingface_hub.constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "tokens")
    )
    with pytest.raises(SpecbenchError) as caught:
        gated.check_access("cais/hle")
    message = str(caught.value)
    assert message.startswith("source cais/hle (the HLE rows of every config) is gated and no")
    assert "https://huggingface.co/datasets/cais/hle" in message and "--skip-gated" in message


def test_a_token_without_access_is_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2 as httpx
    import huggingface_hub
    from huggingface_hub.errors import GatedRepoError

    def refuse(self: object, repo_id: str, **kwargs: object) -> None:
        url = f"https://huggingface.co/api/datasets/{repo_id}/auth-check"
        response = httpx.Response(403, request=httpx.Request("GET", url))
        raise GatedRepoError(f"Access to dataset {repo_id} is restricted", response=response)

    monkeypatch.setenv("HF_TOKEN", "hf_fixture_token_without_access")
    monkeypatch.setattr(huggingface_hub.HfApi, "auth_check", refuse)
    with pytest.raises(SpecbenchError, match=r"your token has no access to this gated repo"):
        gated.check_access("cais/hle")


def test_skip_gated_writes_the_rest_marked_partial_and_run_refuses_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    content = pipeline.prepare(["qualitative", "throughput_1k"], out, MIRROR, skip_gated=True)
    entry = content["configs"]["throughput_1k"]
    assert entry["partial"] is True and entry["rows"] == 8
    assert set(entry["missing"].values()) == {"cais/hle: gated source skipped"}
    assert len(content["configs"]["qualitative"]["missing"]) == 2
    recorded = json.loads((out / "prepared.json").read_text())
    assert recorded["configs"]["throughput_1k"]["missing"] == entry["missing"]
    with pytest.raises(SpecbenchError, match=r"config 'throughput_1k' is partial, 4 rows left out"):
        load_workload(f"speed-bench:throughput_1k:{out}")


def test_run_loads_a_partial_config_only_when_the_workload_accepts_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    pipeline.prepare(["throughput_1k"], out, MIRROR, skip_gated=True)
    spec = f"speed-bench:throughput_1k:{out}"
    with pytest.raises(SpecbenchError) as refused:
        load_plan_workload(WorkloadSpec(dataset=spec, concurrency=[1], max_tokens=16), "w")
    message = str(refused.value)
    assert "4 rows left out (cais/hle: gated source skipped)" in message
    assert "set accept_partial = true on the workload" in message
    loaded = load_plan_workload(
        WorkloadSpec(dataset=spec, concurrency=[1], max_tokens=16, accept_partial=True), "w"
    )
    assert len(loaded.conversations) == 8
    missing = json.loads((out / "prepared.json").read_text())["configs"]["throughput_1k"]["missing"]
    assert not {c.question_id for c in loaded.conversations} & set(missing)
    assert "accept_partial" in IDENTITY_FIELDS  # which rows are measured: an identity


def test_the_report_lists_the_rows_left_out(tmp_path: Path) -> None:
    out = tmp_path / "data"
    pipeline.prepare(["throughput_1k"], out, MIRROR, skip_gated=True)
    results = tmp_path / "run"
    shutil.copytree(RUN, results)
    manifest = read_manifest(results)
    assert manifest is not None
    workload = WorkloadRecord(
        spec={"dataset": f"speed-bench:throughput_1k:{out}", "accept_partial": True},
        dataset_source=str((out / "speed" / "throughput_1k" / "test.parquet").resolve()),
        num_conversations=8,
    )
    manifest = manifest.model_copy(update={"workloads": {"tp1k": workload}, "converted_from": None})
    (results / "manifest.json").write_text(manifest.model_dump_json())
    assert provenance(results).left_out == (
        "tp1k: 4 rows left out (cais/hle: gated source skipped)",
    )
    build_report(ReportOptions(results_dirs=(results,), formats=("md", "html")))
    markdown = (results / "report" / "report.md").read_text()
    assert "## Rows left out" in markdown
    assert "- tp1k: 4 rows left out (cais/hle: gated source skipped)" in markdown
    page = (results / "report" / "report.html").read_text()
    provenance_html = page[page.index('<section id="provenance">') :]
    assert "<li>tp1k: 4 rows left out (cais/hle: gated source skipped)</li>" in provenance_html
