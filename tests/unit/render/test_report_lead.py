"""The report opens with the card: what was measured, the headline, the card's tables and
its figure; a long table folds to the card's concurrency; no absolute results path leaks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
from analysis_fixtures import QUALITATIVE, spec_decode, summary, write_campaign, write_cell

from specbench.analysis.table import Table
from specbench.render.html import table_html
from specbench.render.markdown import to_markdown
from specbench.render.outcome import ReportOptions
from specbench.render.report import build_report
from specbench.results.names import display_names, relative_paths


def _manifest(root: Path) -> None:
    """The campaign's manifest as a vLLM run on a ROCm node records it: the suite, each
    server's start (its version, its GPUs' product), the workload's dataset and the runs."""
    spec = {"method": "eagle3", "model": "amd/MiniMax-M3-EAGLE3.1", "num_speculative_tokens": 3}
    target = {"engine": "vllm", "model": "amd/MiniMax-M3-MXFP4", "emulator": None}
    inventory = {"tool": "amd-smi static", "product": "AMD Instinct MI355X", "num_gpus": 8}
    server = {
        "engine": "vllm",
        "gpus": 8,
        "vllm_version": "0.27.1",
        "provenance": {"gpu_inventory": inventory, "vllm_version": "0.27.1"},
    }
    run = {
        "id": "r",
        "command": "run",
        "argv": ["specbench", "run", "suite.toml", "--output", str(root)],
        "started_at": "2026-11-30T22:10:00+00:00",
        "finished_at": "2026-12-01T03:40:00+00:00",
        "status": "completed",
    }
    manifest = {
        "schema_version": 2,
        "created_at": "2026-11-30T22:10:00Z",
        "specbench_version": "0.1.0",
        "python": "3.11",
        "suite": {
            "name": "minimax-m3-mxfp4-eagle3",
            "description": "MiniMax-M3 MXFP4 + EAGLE3.1, TP=8 MI355X",
            "servers": {
                "baseline": {**target, "baseline": True, "speculative": None},
                "eagle3": {**target, "baseline": False, "speculative": spec},
            },
        },
        "suite_hash": "ab12cd34ef56" + "0" * 52,
        "servers": {
            "baseline": {**server, "baseline": True, "speculative": False},
            "eagle3": {**server, "baseline": False, "speculative": True},
        },
        "workloads": {
            "speed-bench-qualitative": {
                "spec": {"dataset": "speed-bench:qualitative:/scratch/me/prepared/qualitative"},
                "dataset_source": "/scratch/me/prepared/qualitative",
                "dataset_revision": "0123456789abcdef0123",
            }
        },
        "runs": [run],
    }
    (root / "manifest.json").write_text(json.dumps(manifest))


def test_the_report_opens_with_what_was_measured_and_the_headline(tmp_path: Path) -> None:
    results = write_campaign(tmp_path / "campaign")
    _manifest(results)
    outcome = build_report(ReportOptions((results,), formats=("md", "json", "html", "png")))
    header, headline = outcome.tables[:2]
    assert dict(header.rows) == {
        "Suite": "minimax-m3-mxfp4-eagle3: MiniMax-M3 MXFP4 + EAGLE3.1, TP=8 MI355X",
        "Model": "amd/MiniMax-M3-MXFP4",
        "Draft": "eagle3: amd/MiniMax-M3-EAGLE3.1 (eagle3, K = 3)",
        "GPUs": "baseline, eagle3: 8 × AMD Instinct MI355X",
        "vLLM": "0.27.1",
        "Dataset": "speed-bench:qualitative @ 0123456789ab",
        "Date (UTC)": "2026-11-30 to 2026-12-01",
        "Results": "campaign (suite hash ab12cd34ef56)",
        "Compared": "eagle3 vs baseline",
    }
    # The card's serving figures at c = 48 (REFERENCE.md §1: 415.2 vs 281.7, 1.47×), as
    # the serving table prints them; the AL is the AL by domain table's Overall row.
    al_table = next(t for t in outcome.tables if t.name.startswith("al_by_domain"))
    # This campaign's summaries carry no chunk counts: no official AL, so the headline
    # prints the step-weighted one and says which it is.
    assert al_table.rows[-1][1] == "n/a"
    assert headline.rows == (
        ("AL overall (step-weighted, vLLM counters)", al_table.rows[-1][2]),
        ("Output throughput/GPU at concurrency 48", "eagle3 415.2 tok/s; baseline 281.7 tok/s"),
        ("Speedup at concurrency 48, eagle3 vs baseline", "1.47×"),
    )
    report = (outcome.out_dir / "report.md").read_text()
    assert report.startswith("# minimax-m3-mxfp4-eagle3: specbench report\n")
    order = [
        "### What was measured",
        "### Headline",
        "## The model card's tables",
        "### Acceptance length by domain",
        "### Serving results at concurrency 48",
        "![Output throughput per GPU vs concurrency",
        "### Output throughput per GPU vs concurrency",
        "## More tables",
        "### Cell health",
    ]
    offsets = [report.index(marker) for marker in order]
    assert offsets == sorted(offsets)
    page = (outcome.out_dir / "report.html").read_text()
    assert page.index('id="table-card-header"') < page.index('id="table-headline"')
    assert page.index('id="table-headline"') < page.index('class="controls"')
    assert page.index('id="figure-throughput-vs-concurrency') < page.index(
        'id="table-concurrency-sweep'
    )
    # Every in-page link lands on one element, and no id is given twice.
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    assert set(re.findall(r'href="#([^"]+)"', page)) <= set(ids)


def test_no_file_of_the_report_names_the_results_directory_by_its_absolute_path(
    tmp_path: Path,
) -> None:
    results = write_campaign(tmp_path / "deep" / "campaign")
    _manifest(results)
    outcome = build_report(ReportOptions((results,), formats=("md", "csv", "json", "html")))
    absolute = str(results.resolve())
    texts = {
        p: p.read_text()
        for p in outcome.out_dir.rglob("*")
        if p.suffix in (".md", ".csv", ".json", ".html")
    }
    assert len(texts) > 10
    assert [p for p, text in texts.items() if absolute in text] == []
    summary = pd.read_csv(outcome.out_dir / "summary.csv")
    assert set(summary["results_dir"]) == {"campaign"}
    assert "no official AL" in " ".join(outcome.tables[1].footnotes)
    assert all(
        c.startswith("campaign/eagle3/") or c.startswith("campaign/baseline/")
        for c in summary["cell_dir"]
    )
    # The last run's command line keeps its --output, by the directory's name.
    assert "specbench run suite.toml --output campaign" in texts[outcome.out_dir / "report.html"]


def test_directories_are_named_by_the_shortest_tail_that_tells_them_apart(tmp_path: Path) -> None:
    a, b, c = tmp_path / "x" / "results", tmp_path / "y" / "results", tmp_path / "y" / "n01"
    assert display_names([a, b, c]) == {a: "x/results", b: "y/results", c: "n01"}
    names = {c: "n01"}
    text = f"{c}/eagle3/c1 and {c}x, {c}.bak, {c.parent}/n012 and {c}."
    assert (
        relative_paths(text, names) == f"n01/eagle3/c1 and {c}x, {c}.bak, {c.parent}/n012 and n01."
    )


def test_a_folded_table_shows_the_cards_rows_and_the_rest_one_click_away() -> None:
    rows = tuple((f"d{i}", str(c)) for c in (1, 48, 128) for i in range(2))
    table = Table(
        name="domain_speedup_x",
        title="Per-domain speedup",
        columns=("Domain", "Concurrency"),
        rows=rows,
        data=pd.DataFrame({"concurrency": [int(r[1]) for r in rows]}),
        shown_rows=frozenset({2, 3}),
        folded_note="Shown: concurrency 48",
    )
    markdown = to_markdown(table, fold=True)
    assert "| d0 | 48 |" in markdown and "| d0 | 1 |" not in markdown
    assert (
        "_Shown: concurrency 48; the other 4 rows: "
        "[tables/domain_speedup_x.md](tables/domain_speedup_x.md)._"
    ) in markdown
    assert "| d0 | 1 |" in to_markdown(table)  # its own file holds every row
    page = table_html(table)
    first, _, folded = page.partition("<details")
    assert first.count("<tr>") == 3  # the header and the two rows at 48
    assert folded.count("<tr>") == 7 and "Shown: concurrency 48: all 6 rows" in folded


def test_the_headline_has_each_comparisons_speedup_and_a_cpu_build_says_it_used_no_gpu(
    tmp_path: Path,
) -> None:
    results = write_campaign(tmp_path / "campaign")
    _manifest(results)
    manifest = json.loads((results / "manifest.json").read_text())
    for server in manifest["servers"].values():  # as a CPU build's start records it
        server["provenance"] = {
            "gpu_inventory": None,
            "gpu_check": "none used: vLLM 0.32.0+cpu is a CPU build; no GPU tool answered (…)",
        }
    (results / "manifest.json").write_text(json.dumps(manifest))
    for repeat, tok in enumerate((350.0, 351.0)):
        write_cell(
            results,
            summary(
                label="ngram",
                dataset=QUALITATIVE,
                concurrency=48,
                repeat=repeat,
                tok_s_per_gpu=tok,
                spec=spec_decode(1000, [700, 400, 200]),
            ),
        )
    outcome = build_report(ReportOptions((results,), formats=("md",)))
    header, headline = outcome.tables[:2]
    assert dict(header.rows)["GPUs"] == "baseline, eagle3: none (vLLM 0.32.0+cpu is a CPU build)"
    assert [row for row in headline.rows if row[0].startswith("Speedup")] == [
        ("Speedup at concurrency 48, eagle3 vs baseline", "1.47×"),
        ("Speedup at concurrency 48, ngram vs baseline", "1.24×"),
    ]
