"""A cell whose concurrency exceeds the conversations it has is under-loaded: the dry run
names it before anything runs, and the report marks it in every table and figure it is in
and never headlines it without saying so (issue 42, requirement 3)."""

from __future__ import annotations

from pathlib import Path

from analysis_fixtures import QUALITATIVE, spec_decode, summary, write_cell, write_manifest
from harness import invoke_main

from specbench.render.outcome import ReportOptions
from specbench.render.report import build_report

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"  # 12 conversations


def _campaign(root: Path) -> Path:
    """c = 1 and 16 on 64 conversations, c = 48 on 44: 48 is the card's concurrency and the
    server never held more than 44 requests there."""
    write_manifest(root, ["baseline"], ["eagle3"])
    for concurrency, conversations in ((1, 64), (16, 64), (48, 44)):
        for label, tok in (("eagle3", 2.0), ("baseline", 1.0)):
            write_cell(
                root,
                summary(
                    label=label,
                    dataset=QUALITATIVE,
                    concurrency=concurrency,
                    tok_s_per_gpu=tok * 10 * concurrency,
                    spec=spec_decode(1000, [800, 550, 350]) if label == "eagle3" else None,
                    num_requests=conversations,
                    num_conversations=conversations,
                ),
            )
    return root


def test_the_report_marks_the_under_loaded_cell_everywhere(tmp_path: Path) -> None:
    results = _campaign(tmp_path / "campaign")
    outcome = build_report(ReportOptions((results,), formats=("md", "html", "svg")))
    by_name = {t.name.split("_eagle3")[0].split("_c48")[0]: t for t in outcome.tables}
    note = (
        "† under-loaded: concurrency 48 exceeds the 44 conversations measured, so at most 44 "
        "requests were ever in flight: its figures are not of a load of 48."
    )
    serving = by_name["serving"]
    assert serving.title == (
        "Serving results at concurrency 48†, SPEED-Bench (qualitative) "
        "(under-loaded: 44 conversations)"
    )
    assert serving.footnotes[0] == note
    sweep = by_name["concurrency_sweep"]
    assert [row[0] for row in sweep.rows] == ["1", "16", "48†"] and note in sweep.footnotes
    health = by_name["cell_health"]
    assert sorted(row[2] for row in health.rows) == ["1", "1", "16", "16", "48†", "48†"]
    assert note in health.footnotes
    headline = by_name["headline"]
    assert headline.rows[0][0] == (
        "Output throughput/GPU at concurrency 48 (under-loaded: 44 conversations, never 48 "
        "in flight)"
    )
    figure = (outcome.out_dir / "figures").glob("throughput_vs_concurrency*.svg")
    svg = next(figure).read_text()
    assert "48†" in svg and "† under-loaded: fewer conversations than concurrency" in svg


def test_a_fully_loaded_campaign_has_no_mark(tmp_path: Path) -> None:
    results = tmp_path / "campaign"
    write_manifest(results, ["baseline"], ["eagle3"])
    for label in ("eagle3", "baseline"):
        write_cell(
            results,
            summary(
                label=label,
                dataset=QUALITATIVE,
                concurrency=48,
                spec=spec_decode(1000, [800, 550, 350]) if label == "eagle3" else None,
                num_conversations=48,
            ),
        )
    outcome = build_report(ReportOptions((results,), formats=("md",)))
    text = (outcome.out_dir / "report.md").read_text()
    assert "†" not in text and "under-loaded" not in text


def test_the_dry_run_names_each_under_loaded_cell_before_anything_runs(tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "loads"\n'
        '[target]\nengine = "emulator"\nmodel = "emu"\n'
        "[servers.baseline]\nbaseline = true\n"
        f'[[workloads]]\ndataset = "{TINY}"\nconcurrency = [4, 12, 16, 48]\nmax_tokens = 16\n'
    )
    result = invoke_main("run", suite, "--dry-run", "--output", tmp_path / "out")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    cells = [line.strip() for line in lines if line.startswith("  baseline/")]
    assert cells == [
        "baseline/tiny/c4/r0",
        "baseline/tiny/c12/r0",
        "baseline/tiny/c16/r0 (under-loaded: 12 conversations)",
        "baseline/tiny/c48/r0 (under-loaded: 12 conversations)",
    ]
    assert [line for line in lines if line.startswith("under-loaded: ")] == [
        "under-loaded: 2 cells ask for more requests in flight than their workload has "
        "conversations, so the server never holds their concurrency; the report marks them "
        "† wherever they appear (more conversations, or a lower concurrency, measure the "
        "load they name)"
    ]
