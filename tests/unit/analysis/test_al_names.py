"""Every AL is named by its definition in the same words, and a chunk estimate is never
called step-weighted (issue 42, requirement 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_fixtures import QUALITATIVE, spec_decode, summary, write_cell

from specbench.analysis.cuts_tables import CHUNK_ESTIMATE_NOTE, al_by_position
from specbench.render.outcome import ReportOptions
from specbench.render.report import build_report
from specbench.results.loading import load_cells
from specbench.store.summary import AcceptanceCuts, CutGroup, PositionBinCut


def _cuts(source: str, steps: int, accepted: int) -> AcceptanceCuts:
    """One 0–128 position bin of `steps` verify steps that accepted `accepted` drafts."""
    cut = PositionBinCut(
        start_token=0,
        end_token=128,
        acceptance_length=1 + accepted / steps,
        num_steps=steps,
        num_accepted_tokens=accepted,
    )
    group = CutGroup(
        num_requests=8, source=source, is_estimate=source == "chunks", position_bins=[cut]
    )
    return AcceptanceCuts(bin_tokens=128, num_spec_tokens=3, overall=group, per_category={})


def _write(root: Path, label: str, source: str, steps: int, accepted: int) -> None:
    write_cell(
        root,
        summary(
            label=label,
            dataset=QUALITATIVE,
            concurrency=1,
            spec=spec_decode(1000, [800, 550, 350]),
            acceptance_cuts=_cuts(source, steps, accepted),
        ),
    )


@pytest.mark.parametrize(
    ("sources", "title", "estimate"),
    [
        (("per_step_metrics",), "Acceptance length by output position (step-weighted)", False),
        (("chunks",), "Acceptance length by output position (chunk estimate)", True),
        (
            ("per_step_metrics", "chunks"),
            "Acceptance length by output position (step-weighted where exact, chunk estimate "
            "elsewhere)",
            True,
        ),
    ],
)
def test_the_position_table_names_the_al_its_rows_hold(
    tmp_path: Path, sources: tuple[str, ...], title: str, estimate: bool
) -> None:
    labels = [f"draft{i}" for i in range(len(sources))]
    for label, source in zip(labels, sources, strict=True):
        _write(tmp_path, label, source, steps=100, accepted=161)
    cells, _ = load_cells([tmp_path])
    table = al_by_position(cells, labels)
    assert table.title == title
    assert [row[2] for row in table.rows] == ["2.61"] * len(sources)
    assert (CHUNK_ESTIMATE_NOTE in table.footnotes) is estimate
    assert set(table.data["al_definition"]) == {
        "chunk_estimate" if s == "chunks" else "step_weighted" for s in sources
    }


def test_a_chunk_estimate_figure_is_titled_so_and_stays_out_of_the_al_switch(
    tmp_path: Path,
) -> None:
    _write(tmp_path, "eagle3", "chunks", steps=100, accepted=161)
    outcome = build_report(ReportOptions((tmp_path,), formats=("md", "html", "png")))
    [figure] = [f for f in outcome.html_figures if f.name == "al_by_position"]
    assert figure.title == "Acceptance length by output position (chunk estimate)"
    assert figure.al_definition is None
    report = (outcome.out_dir / "report.md").read_text()
    assert "(step-weighted)](figures/al_by_position.png)" not in report
    assert "![Acceptance length by output position (chunk estimate)]" in report
