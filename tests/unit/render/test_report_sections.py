"""The report as a list of sections: a new section is one entry, built in the list's order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
from analysis_fixtures import write_campaign
from matplotlib.figure import Figure

from specbench.analysis.table import Table
from specbench.analysis.tables import TableUnavailable
from specbench.render.outcome import ReportOptions, ReportOutcome
from specbench.render.report import build_report
from specbench.render.section import (
    FigureSpec,
    Part,
    ReportInputs,
    Section,
    TablePart,
    build_sections,
)
from specbench.render.sections import SECTIONS
from specbench.results.selection import Selection


def _energy_table() -> Table:
    data = pd.DataFrame({"config": ["eagle3"], "joules_per_token": [0.42]})
    return Table("energy", "Energy per token", ("Config", "J/token"), (("eagle3", "0.42"),), data)


def _absent() -> Table:
    raise TableUnavailable("energy by domain: n/a, no energy counters in these results")


def _energy(inputs: ReportInputs) -> Iterator[Part]:
    """A later issue's section: its table, a figure of it, and a table that is absent."""
    yield "energy at c=1: not run"
    yield TablePart(
        _energy_table,
        lambda table: [FigureSpec("energy_per_token", table.title, Figure)],
    )
    yield TablePart(_absent)


def test_a_new_section_is_one_entry_and_is_built_in_order(tmp_path: Path) -> None:
    options = ReportOptions(results_dirs=(tmp_path,), formats=("png",))
    selection = Selection(speculative=(), baselines=(), comparisons=())
    inputs = ReportInputs(pd.DataFrame(), pd.DataFrame(), (), selection, options)
    outcome = ReportOutcome(out_dir=tmp_path)
    build_sections(outcome, (Section("energy", _energy),), inputs)
    assert [t.name for t in outcome.tables] == ["energy"]
    assert outcome.not_built == [
        "energy at c=1: not run",
        "energy by domain: n/a, no energy counters in these results",
    ]
    [figure] = outcome.figures
    assert figure.title == "Energy per token" and figure.table == "energy"
    assert figure.paths == [tmp_path / "figures" / "energy_per_token.png"]
    assert figure.paths[0].is_file()
    assert outcome.section_of == {"energy": "energy"}


def test_the_report_prints_its_tables_in_the_order_the_list_declares(tmp_path: Path) -> None:
    names = [section.name for section in SECTIONS]
    assert len(names) == len(set(names))
    results = write_campaign(tmp_path / "campaign")
    outcome = build_report(ReportOptions((results,), out=tmp_path / "out", formats=("md",)))
    # The lead first (what was measured, the headline), then each section's tables in the
    # list's order, each recorded with the section that built it.
    assert [t.name for t in outcome.tables[:2]] == ["card_header", "headline"]
    built = [outcome.section_of[t.name] for t in outcome.tables[2:]]
    assert built == sorted(built, key=names.index)
    assert built == [
        "al_by_domain",
        "al_by_context",
        "serving",
        "serving",
        "serving",
        "serving",
        "pareto",  # qualitative and throughput_1k: baseline and eagle3 ran both
        "pareto",
        "cell_health",
        "acceptance_summary",
    ]
