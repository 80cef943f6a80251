"""report.html in a real headless Chromium (Debian's, from `make chromium`), network blocked.

An emulator campaign (baseline and eagle3 on SPEED-Bench qualitative and throughput_1k
fixtures) is run and reported with the real CLI; the page is then loaded from file:// and
checked as a reader's browser shows it: no console error, no request beyond the file, every
table of tables.json in the DOM with its rows, summary.json's values in them, no horizontal
overflow at 1280 px, a PDF print (A4 and Letter) holding every table, and the interaction
(sorting, the AL switch, hover values). Bad results folders must render too and say what is
missing. Playwright drives Debian's Chromium (tests/browser.py). Never skipped: `make test`
installs Chromium first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import QUALITATIVE, category, spec_decode, summary, write_cell
from browser import Loaded, open_page, pdf_text
from harness import REPO, campaign_timings, run_cli, suite_toml, workload

FIXTURE = REPO / "tests" / "fixtures" / "speed_bench"
A4_IN = (8.27, 11.69)
#: Loose bounds: 1 ms emulator steps meet them at every concurrency run.
SLO_TABLE = '\n[slo]\ntpot_p90 = "1s"\nttft_p90 = "5s"\n'

LETTER_IN = (8.5, 11.0)


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An emulator campaign, run and reported by the CLI: its report folder."""
    root = tmp_path_factory.mktemp("html")
    suite = root / "suite.toml"
    workloads = workload(f"speed-bench:qualitative:{FIXTURE}", (1, 4), 24) + workload(
        f"speed-bench:throughput_1k:{FIXTURE}", (4,), 16
    )
    # The [slo] table is read back from the manifest by the report: its capacity section.
    suite.write_text(
        suite_toml(name="html", model="emu-html", timings=campaign_timings(), workloads=workloads)
        + SLO_TABLE
    )
    ran = run_cli("run", suite, "--output", root / "results")
    assert ran.returncode == 0, ran.stderr
    reported = run_cli("report", root / "results")
    assert reported.returncode == 0, reported.stderr
    return root / "results" / "report"


def _run(check: Callable[[Loaded], Any], html: Path) -> Any:
    with open_page(html) as page:
        value = check(page)
        requests, errors = list(page.requests), page.errors
    assert errors == []  # no console error, no exception, no blocked request
    assert requests == [html.resolve().as_uri()]  # nothing but the file itself
    return value


def _plain(text: str) -> str:
    """A display string as the page shows it: markdown emphasis gone, spaces collapsed."""
    return " ".join(text.replace("**", "").replace("`", "").split())


# Each table's rows as the page shows them: a folded table's full copy (its last <table>),
# the header's facts (dt, dd) as two-cell rows.
DOM_TABLES = """
Array.from(document.querySelectorAll('section[data-table]')).map(s => {
  const text = c => c.textContent.trim().replace(/\\s+/g, ' ');
  if (s.classList.contains('facts')) {
    const fact = d => [text(d.querySelector('dt')), text(d.querySelector('dd'))];
    return {name: s.dataset.table, rows: Array.from(s.querySelectorAll('dl > div')).map(fact)};
  }
  const tables = s.querySelectorAll('table');
  const last = tables[tables.length - 1];
  const cells = r => Array.from(r.cells).map(text);
  const rows = Array.from(last.querySelectorAll('tbody tr, tfoot tr'));
  return {name: s.dataset.table, rows: rows.map(cells)};
})
"""


def test_the_page_holds_every_table_with_its_values_offline(report_dir: Path) -> None:
    html = report_dir / "report.html"
    tables = json.loads((report_dir / "tables.json").read_text())["tables"]
    shown = _run(lambda page: page.evaluate(DOM_TABLES), html)
    by_name = {t["name"]: t["rows"] for t in shown}
    assert len(tables) >= 8
    for table in tables:
        rows = [[_plain(cell) for cell in row] for row in table["rows"]]
        assert sorted(by_name[table["name"]]) == sorted(rows), table["name"]
    # summary.json's own values: every cell's request count in the health table, and the
    # c=4 qualitative throughput (one repeat) in the serving table.
    health = by_name["cell_health"]
    results = report_dir.parent
    for path in sorted(results.glob("*/*/c*/r*/summary.json")):
        cell = json.loads(path.read_text())
        row = [r for r in health if r[0] == cell["label"] and r[2] == str(cell["concurrency"])
               and r[1].startswith(f"speed-bench:{cell['workload'].split('-')[-1]}")]  # fmt: skip
        assert [r[4] for r in row] == [str(cell["num_requests"])], path
        if cell["workload"] == "speed-bench-qualitative" and cell["concurrency"] == 4:
            serving = next(rows for name, rows in by_name.items() if name.startswith("serving_c4"))
            value = f"{cell['output_tok_s_per_gpu']:,.1f} tok/s"
            assert value in [c for r in serving for c in r], (value, serving)


def test_figures_are_inline_svg_with_their_cells_one_click_away(report_dir: Path) -> None:
    html = report_dir / "report.html"
    text = html.read_text()
    assert "<img" not in text and "http://" not in text.replace("http://www.w3.org/", "")
    figures = _run(
        lambda page: page.evaluate(
            "Array.from(document.querySelectorAll('figure')).map(f => [f.dataset.figure,"
            " f.querySelectorAll('svg').length, f.querySelector('details table') ? "
            "f.querySelector('details table').tBodies[0].rows.length : 0])"
        ),
        html,
    )
    files = {p.stem for p in (report_dir / "figures").glob("*.svg")}
    assert {name for name, _, _ in figures} == files
    for name, svgs, cells in figures:
        assert svgs == 1 and cells >= 1, name


def test_no_horizontal_overflow_at_1280_px(report_dir: Path, tmp_path: Path) -> None:
    def check(page: Loaded) -> list[int]:
        page.screenshot(tmp_path / "page.png")
        return list(
            page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
        )

    scroll, client = _run(check, report_dir / "report.html")
    assert scroll <= client <= 1280
    assert (tmp_path / "page.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("paper", [A4_IN, LETTER_IN], ids=["A4", "Letter"])
def test_the_pdf_print_holds_every_table(
    report_dir: Path, tmp_path: Path, paper: tuple[float, float]
) -> None:
    pdf = tmp_path / "report.pdf"
    _run(lambda page: page.pdf(pdf, paper), report_dir / "report.html")
    text = " ".join(pdf_text(pdf).split())
    for table in json.loads((report_dir / "tables.json").read_text())["tables"]:
        assert _plain(table["title"]) in text, table["title"]
        for row in table["rows"]:
            assert _plain(row[0]) in text, (table["name"], row[0])
            assert _plain(row[-1]) in text, (table["name"], row[-1])


INTERACT = """
(async () => {
  const out = {};
  const table = document.querySelector('section[data-table^="al_by_domain"] table');
  const header = table.tHead.rows[0].cells[1];
  const values = () => Array.from(table.tBodies[0].rows)
    .map(r => parseFloat(r.cells[1].textContent));
  header.click();
  out.ascending = values();
  header.click();
  out.descending = values();
  out.total_last = table.tFoot.rows[0].cells[0].textContent;
  const pick = v => { const i = document.querySelector(`input[name="al-definition"][value="${v}"]`);
    i.checked = true; i.dispatchEvent(new Event('change')); };
  pick('official');
  out.hidden_headers = Array.from(table.tHead.rows[0].cells)
    .filter(c => getComputedStyle(c).display === 'none').map(c => c.textContent);
  out.figures_shown = Array.from(document.querySelectorAll('figure[data-al-pair]'))
    .filter(f => !f.hidden).map(f => f.dataset.al);
  pick('both');
  out.hidden_after_both = document.querySelectorAll('.al-hidden').length;
  const point = document.querySelector('figure[data-points] g[id^="point-0-"]');
  const box = point.getBoundingClientRect();
  point.dispatchEvent(new MouseEvent('mouseover', {bubbles: true,
    clientX: box.x + box.width / 2, clientY: box.y + box.height / 2}));
  const tip = point.closest('figure').querySelector('.tooltip');
  out.tooltip = tip.hidden ? null : tip.textContent;
  return out;
})()
"""


def test_sorting_the_al_switch_and_hover_values(report_dir: Path) -> None:
    result = _run(lambda page: page.evaluate(INTERACT), report_dir / "report.html")
    assert isinstance(result, dict)
    assert result["ascending"] == sorted(result["ascending"])
    assert result["descending"] == sorted(result["ascending"], reverse=True)
    assert result["total_last"] == "Overall"  # the total stays below the sorted rows
    assert result["hidden_headers"] and all("step-weighted" in h for h in result["hidden_headers"])
    assert set(result["figures_shown"]) == {"official"}
    assert result["hidden_after_both"] == 0
    sweep = next(
        t
        for t in json.loads((report_dir / "tables.json").read_text())["tables"]
        if t["name"].startswith("concurrency_sweep")
    )
    first = sweep["rows"][0]
    shown = "\n".join(f"{c}: {v}" for c, v in zip(sweep["columns"], first, strict=True))
    # The row as the table prints it, then each side's 95% interval with its kind (one
    # launch here: labelled so) and the speedup's.
    assert result["tooltip"].startswith(shown + "\n")
    extra = result["tooltip"][len(shown) + 1 :].splitlines()
    labels = [sweep["columns"][1].split(" ")[0], sweep["columns"][2].split(" ")[0], "speedup"]
    assert [line.split(" 95% interval: ")[0] for line in extra] == labels
    assert all(line.endswith("(one launch: between-launch variance not measured)")
               for line in extra[:2])  # fmt: skip


PARETO_HOVER = """
(() => {
  const figure = document.querySelector('figure[data-figure^="throughput_vs_interactivity"]');
  const targets = figure.querySelectorAll('g[id^="point-"]');
  const point = targets[0];
  const box = point.getBoundingClientRect();
  point.dispatchEvent(new MouseEvent('mouseover', {bubbles: true,
    clientX: box.x + box.width / 2, clientY: box.y + box.height / 2}));
  const tip = figure.querySelector('.tooltip');
  return {targets: targets.length, tooltip: tip.hidden ? null : tip.textContent};
})()
"""


def test_the_pareto_frontier_and_the_suite_slo_capacity(report_dir: Path, tmp_path: Path) -> None:
    text = (report_dir / "report.md").read_text()
    assert (
        "### Throughput against interactivity (Pareto frontier), SPEED-Bench (qualitative)" in text
    )
    assert "### Capacity under the SLO" in text
    # The suite's [slo], read from the manifest, and named in the footnote.
    assert "manifest.json: suite.slo): tpot_p90 ≤ 1s, ttft_p90 ≤ 5s." in text
    for name in ("baseline", "eagle3"):  # every point meets the loose bounds
        row = rf"\| (\*\*)?{name}(\*\*)? \| (\*\*)?≥ 4 \(max measured\)(\*\*)? \| "
        assert re.search(row, text), name
    figures = report_dir / "figures"
    stems = {p.stem for p in figures.glob("throughput_vs_interactivity*.png")}
    # A figure per workload where two configs have both axes. Under make test's load the
    # client can read a whole short answer in one go (E2E = TTFT, median TPOT 0 ms), so a
    # cell may have no interactivity: count from the points the report saved.
    points = pd.read_csv(report_dir / "summary_mean.csv")
    finite = points[np.isfinite(points["interactivity_tok_s_per_user"].astype(float))]
    paired = finite.groupby("view")["label"].nunique()
    assert "speed-bench-qualitative" in " ".join(stems)
    assert len(stems) == int((paired >= 2).sum()) >= 1
    assert all((figures / f"{stem}.svg").is_file() for stem in stems)
    hover = _run(lambda page: page.evaluate(PARETO_HOVER), report_dir / "report.html")
    qualitative = finite[finite["view"].str.startswith("speed-bench:qualitative")]
    assert hover["targets"] == len(qualitative) >= 2  # each point with both axes
    assert hover["tooltip"].startswith("Config: baseline\nConcurrency: 1\ntok/s/GPU: ")
    assert "\ntok/s/user: " in hover["tooltip"]
    # --slo wins over the suite's table; a bound without its unit is one line, exit 2.
    tight = run_cli("report", report_dir.parent, "--slo", "tpot_p90=1ms", "--out",
                    tmp_path / "tight", "--format", "md")  # fmt: skip
    assert tight.returncode == 0, tight.stderr
    assert "SLO (--slo): tpot_p90 ≤ 1ms." in (tmp_path / "tight" / "report.md").read_text()
    bad = run_cli("report", report_dir.parent, "--slo", "ttft_p90=2", "--out", tmp_path / "bad")
    assert bad.returncode == 2
    last = bad.stderr.strip().splitlines()[-1]
    assert last.endswith("--slo: ttft_p90=2 has no unit; allowed units: ms, s (write "
                         "ttft_p90=2ms or ttft_p90=2s)")  # fmt: skip
    assert "Traceback" not in bad.stderr


# -- bad results folders: each renders, and says what is missing --------------------------


def _failed_cells(root: Path) -> str:
    _pair(root)
    cell = root / "eagle3" / "speed-bench-qualitative" / "c8" / "r0"
    cell.mkdir(parents=True)
    (cell / "failure.json").write_text(json.dumps({"message": "server died mid-cell"}))
    return "server died mid-cell"


def _no_speculative(root: Path) -> str:
    write_cell(root, summary(label="baseline", dataset=QUALITATIVE, concurrency=4))
    return "no speculative config"


def _no_baseline(root: Path) -> str:
    # One speculative config at two concurrencies.
    for concurrency in (1, 4):
        spec = spec_decode(100, [60, 30, 10])
        write_cell(root, summary(label="eagle3", dataset=QUALITATIVE, concurrency=concurrency,
                                 spec=spec))  # fmt: skip
    return "no baseline"


def _two_speculative_no_baseline(root: Path) -> str:
    # Two speculative configs and no baseline: both are reported, the speedup says why not.
    for label, accepted in (("eagle3", [60, 30, 10]), ("ngram", [40, 10, 2])):
        spec = spec_decode(100, accepted)
        write_cell(root, summary(label=label, dataset=QUALITATIVE, concurrency=4, spec=spec))
    return "no baseline for a speedup"


def _single_cell(root: Path) -> str:
    spec = spec_decode(100, [60, 30, 10])
    write_cell(root, summary(label="eagle3", dataset=QUALITATIVE, concurrency=4, spec=spec))
    return "Not built"


LONG = "a-category-name-far-longer-than-any-column-" * 4


def _long_names(root: Path) -> str:
    per_category = {f"{LONG}{i}": category(2.0 + i / 10, 100) for i in range(3)}
    spec = spec_decode(300, [180, 90, 30])
    for label, s, cats in (("baseline", None, None), ("eagle3", spec, per_category)):
        write_cell(
            root,
            summary(label=label, dataset=QUALITATIVE, concurrency=4, spec=s, per_category=cats),
        )
    (root / "manifest.json").write_text(
        json.dumps({"schema_version": 1, "servers": {"baseline": {"baseline": True}}})
    )
    return LONG[:40]


def _schema_1(root: Path) -> str:
    _pair(root)
    for path in root.glob("*/*/c*/r*/summary.json"):
        raw = json.loads(path.read_text())
        for name in ("workload", "categories", "entropy_tiers"):
            raw.pop(name, None)
        raw["schema_version"] = 1
        path.write_text(json.dumps(raw))
    (root / "manifest.json").write_text(
        json.dumps({"schema_version": 1, "servers": {"baseline": {"baseline": True, "gpus": 8}}})
    )
    return "Suite and specbench"  # the provenance of the converted manifest


def _pair(root: Path) -> None:
    spec = spec_decode(100, [60, 30, 10])
    for label, s in (("baseline", None), ("eagle3", spec)):
        write_cell(root, summary(label=label, dataset=QUALITATIVE, concurrency=4, spec=s))


@pytest.mark.parametrize(
    "build",
    [
        _failed_cells,
        _no_speculative,
        _no_baseline,
        _two_speculative_no_baseline,
        _single_cell,
        _long_names,
        _schema_1,
    ],
    ids=lambda build: build.__name__.strip("_"),
)
def test_bad_results_folders_render_and_say_what_is_missing(
    tmp_path: Path, build: Callable[[Path], str]
) -> None:
    root = tmp_path / "results"
    expected = build(root)
    reported = run_cli("report", root)
    assert reported.returncode == 0, reported.stderr
    assert "Traceback" not in reported.stderr
    html = root / "report" / "report.html"
    text, width = _run(
        lambda page: page.evaluate(
            "[document.body.innerText, document.documentElement.scrollWidth"
            " - document.documentElement.clientWidth]"
        ),
        html,
    )
    assert expected in re.sub(r"\s+", " ", text)
    assert width <= 0  # long names wrap inside their cells
    if build is _failed_cells:
        assert "Failed cells" in text


GATE_VIEW = """[document.querySelector('#gate h2').textContent,
  document.querySelectorAll('#gate tbody tr').length,
  Array.from(document.querySelectorAll('#gate tbody tr')).filter(
    r => r.cells[8].textContent === 'REGRESSION').map(r => r.cells[1].textContent)]"""


def test_the_gate_verdict_as_a_page_and_inside_the_report(report_dir: Path, tmp_path: Path) -> None:
    results = report_dir.parent
    baseline = tmp_path / "baseline.json"
    saved = run_cli("baseline", "save", results, "--out", baseline)
    assert saved.returncode == 0, saved.stderr
    worse = tmp_path / "worse"
    worse_draft = "servers.eagle3.emulator.acceptance=[0.5, 0.4, 0.3]"
    ran = run_cli("run", results.parent / "suite.toml", "--output", worse, "--set", worse_draft)
    assert ran.returncode == 0, ran.stderr
    page, summary = tmp_path / "gate.html", tmp_path / "gate.md"
    gated = run_cli("gate", worse, "--baseline", baseline, "--html", page, "--summary", summary)
    assert gated.returncode == 1, gated.stderr
    checks = [line for line in summary.read_text().splitlines() if line.startswith("|")][2:]
    headline, rows, regressed = _run(lambda p: p.evaluate(GATE_VIEW), page)
    assert headline.startswith("❌ specbench gate: regression")
    assert rows == len(checks)
    assert "acceptance_length" in regressed
    reported = run_cli("report", worse, "--gate", page)
    assert reported.returncode == 0, reported.stderr
    inside = _run(lambda p: p.evaluate(GATE_VIEW), worse / "report" / "report.html")
    assert inside == [headline, rows, regressed]
    not_a_page = run_cli("report", worse, "--gate", summary)
    assert not_a_page.returncode == 2
    assert not_a_page.stderr.strip().endswith("not a page `specbench gate --html` wrote")
