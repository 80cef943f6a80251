"""The cell-health table: failures, preemptions, load, prefix cache and the token check."""

from __future__ import annotations

from pathlib import Path

from analysis_fixtures import QUALITATIVE, spec_decode, summary, write_cell

from specbench.analysis.health import NO_COUNTER, OLDER, OLDER_NOTE, cell_health
from specbench.results import frame as F
from specbench.store.summary import CellSummary


def with_fields(cell: CellSummary, **fields: object) -> CellSummary:
    return cell.model_copy(update=fields)


def test_new_figures_show_with_failures_and_a_refused_reset_in_bold(tmp_path: Path) -> None:
    base = summary(label="eagle3", dataset=QUALITATIVE, concurrency=8, num_requests=40,
                   spec=spec_decode(10, [5]))  # fmt: skip
    write_cell(
        tmp_path,
        with_fields(
            base, num_failed=3, num_skipped_turns=2, server_preemptions=4,
            achieved_concurrency=6.25, prefix_cache_reset=False, prefix_cache_hit_rate=0.5,
            generation_tokens_mismatch=-0.02,
        ),
    )  # fmt: skip
    write_cell(
        tmp_path,
        summary(
            label="eagle3", dataset=QUALITATIVE, concurrency=8, repeat=1,
            spec=spec_decode(10, [5]), num_skipped_turns=0, server_preemptions=0,
            achieved_concurrency=7.9, prefix_cache_reset=True, prefix_cache_hit_rate=0.0,
            generation_tokens_mismatch=0.0,
        ),
    )  # fmt: skip
    table = cell_health(F.load_results([tmp_path]))
    view = "speed-bench:qualitative"
    assert table.rows == (
        ("eagle3", view, "8", "0", "40", "**3 (2 skipped)**", "4", "6.2", "**NO**",
         "50.0%", "**-2.00%**"),
        ("eagle3", view, "8", "1", "64", "0", "0", "7.9", "yes", "0.0%", "+0.00%"),
    )  # fmt: skip
    assert OLDER_NOTE not in table.footnotes


def test_older_results_and_missing_counters_say_na_with_the_reason(tmp_path: Path) -> None:
    # Written before the side figures existed: no num_skipped_turns, no reset field.
    write_cell(tmp_path, summary(label="baseline", dataset=QUALITATIVE, concurrency=1))
    # New, against a server without generation or prefix-cache counters, reset not tried.
    other = summary(label="other", dataset=QUALITATIVE, concurrency=1)
    write_cell(
        tmp_path,
        with_fields(other, num_skipped_turns=0, achieved_concurrency=1.0,
                    server_generation_tokens=None),
    )  # fmt: skip
    table = cell_health(F.load_results([tmp_path]))
    older, new = table.rows
    assert older[6:] == (OLDER, OLDER, OLDER, OLDER, OLDER)
    assert new[6:] == (NO_COUNTER, "1.0", "not attempted", NO_COUNTER, NO_COUNTER)
    assert OLDER_NOTE in table.footnotes
    assert any(note.startswith("² n/a") for note in table.footnotes)
