"""report.html's renderer: tables as real, escaped tables; provenance as the manifest has it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
from analysis_fixtures import write_campaign

from specbench.analysis.provenance import provenance
from specbench.analysis.table import Table
from specbench.render.html import inline, table_html
from specbench.render.report import ReportOptions, build_report


def test_a_table_is_escaped_bold_and_keeps_its_total_last() -> None:
    table = Table(
        name="t",
        title="AL <by> domain",
        columns=("Domain", "AL"),
        rows=(("<script>alert(1)</script>", "2.00"), ("Math", "**1.50**"), ("Overall", "1.75")),
        data=pd.DataFrame(),
        bold_rows=frozenset({2}),
        footnotes=("`code` and <b>raw</b>",),
    )
    text = table_html(table)
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<strong>1.50</strong>" in text
    assert re.search(r"<tfoot><tr class=\"bold\"><th scope=\"row\">Overall</th>", text)
    assert "<caption>AL &lt;by&gt; domain</caption>" in text
    assert '<td class="num">2.00</td>' in text
    assert "<code>code</code> and &lt;b&gt;raw&lt;/b&gt;" in text
    assert inline("a | b") == "a | b"


def test_the_page_holds_every_report_table_and_loads_nothing(tmp_path: Path) -> None:
    results = write_campaign(tmp_path / "campaign")
    outcome = build_report(ReportOptions((results,), formats=("md", "json", "html")))
    page = (outcome.out_dir / "report.html").read_text()
    assert outcome.out_dir / "report.html" in outcome.files
    shown = re.findall(
        r'<section class="(?:table|facts)" id="table-[^"]+" data-table="([^"]+)"', page
    )
    # Every table once: the lead, then the card's tables, then the others.
    assert sorted(shown) == sorted(t.name for t in outcome.tables) and len(set(shown)) == len(shown)
    card = [
        n for n in shown if outcome.section_of[n] in ("al_by_domain", "al_by_context", "serving")
    ]
    assert shown[:2] == ["card_header", "headline"] and shown[2 : 2 + len(card)] == card
    # the lead (2), then cell health, acceptance summary and two Pareto frontiers
    assert len(card) == 6 and len(shown) == len(card) + 6
    # Nothing to fetch: no src or href to anything but the page's own anchors.
    assert not re.findall(r'\s(?:src|href)="(?!#)', page)
    assert "<link" not in page and "@import" not in page
    # No png/svg asked for: the figures are inline only, each with its cells.
    assert not (outcome.out_dir / "figures").exists()
    assert page.count("<figure ") == len(outcome.html_figures) >= 3
    assert page.count("this figure rests on</summary>") == len(outcome.html_figures)


def test_provenance_shows_the_manifest_and_the_prepared_data_manifest(tmp_path: Path) -> None:
    prepared = tmp_path / "prepared" / "qualitative"
    prepared.mkdir(parents=True)
    (prepared / "prepared.json").write_text(json.dumps({"config": "qualitative", "rows": 880}))
    manifest = {
        "schema_version": 2,
        "created_at": "2026-12-04T00:00:00Z",
        "specbench_version": "0.1.0",
        "python": "3.11.2",
        "suite_hash": "ab" * 32,
        "servers": {
            "eagle3": {
                "speculative": True,
                "vllm_version": "0.32.0",
                "gpus": 8,
                "provenance": {
                    "argv": ["vllm", "serve", "m", "--api-key", "<redacted>"],
                    "env": {"HF_TOKEN": "<redacted>", "VLLM_USE_V1": "1"},
                    "gpu_inventory": {
                        "tool": "amd-smi", "output": "$ amd-smi static ...", "num_gpus": 8,
                        "product": "AMD Instinct MI355X", "vram_mib": 294896,
                        "driver": "6.16.6", "rocm_version": "7.2.0", "cuda_version": None,
                    },
                    "gpu_check": "8 × AMD Instinct MI355X, ... (amd-smi)",
                },
            },
            "baseline": {"baseline": True, "gpus": 8, "provenance": {
                "gpu_inventory": None,
                "gpu_check": "unchecked: no GPU tool answered (amd-smi: not found; ...)",
            }},
        },
        "workloads": {
            "qual": {"spec": {"dataset": "speed-bench:qualitative"},
                     "dataset_source": str(prepared), "dataset_revision": "487aa718"},
            "mt": {"spec": {"dataset": "mt-bench"}, "dataset_source": None},
        },
    }  # fmt: skip
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    record = provenance(tmp_path)
    suite, servers, workloads = record.tables
    assert ("suite hash", "ab" * 32) in suite.rows
    eagle = next(row for row in servers.rows if row[0] == "eagle3")
    assert eagle[1:5] == ("speculative", "n/a", "0.32.0", "8")
    assert eagle[6] == "vllm serve m --api-key '<redacted>'"
    assert eagle[7] == "HF_TOKEN=<redacted> VLLM_USE_V1=1"
    # The GPUs as amd-smi listed them; a start no GPU tool answered for says it went unchecked.
    assert eagle[8:] == ("AMD Instinct MI355X", "294896", "6.16.6", "7.2.0", "n/a", "amd-smi")
    assert servers.columns[8:] == ("GPU", "VRAM per GPU (MiB)", "Driver", "ROCm", "CUDA",
                                   "GPU inventory")  # fmt: skip
    baseline = next(row for row in servers.rows if row[0] == "baseline")
    assert baseline[8:] == ("n/a", "n/a", "n/a", "n/a", "n/a", "unchecked")
    assert [row[-1] for row in workloads.rows] == ["none", "below"]  # mt, qual (sorted)
    assert ("487aa718" in workloads.rows[1]) and record.notes == ()
    assert record.prepared == (("qual", json.dumps({"config": "qualitative", "rows": 880},
                                                   indent=2)),)  # fmt: skip
    (prepared / "prepared.json").unlink()
    assert provenance(tmp_path).notes == (
        "no prepared-data manifest (prepared.json) for any workload",
    )
    (tmp_path / "manifest.json").write_text("{")
    assert provenance(tmp_path).notes[0].startswith("manifest unreadable: ")
    (tmp_path / "manifest.json").unlink()
    assert provenance(tmp_path).tables == ()
