"""The official SPEED-Bench AL of a loaded cell: from its summary, else from its records.

Cells written before the official figure was recorded (`summary.json` without
`official_acceptance`) get it recomputed from their `requests.jsonl` with the same pure
function the run uses (`specbench.measure.official_al`). When that is impossible the
figure is n/a and `note` says why (never a number without its definition).
"""

from __future__ import annotations

from dataclasses import dataclass

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.measure.official_al import cell_official, official_summary
from specbench.results.loading import LoadedCell
from specbench.store.summary import OfficialAcceptanceSummary


@dataclass(frozen=True, slots=True)
class CellOfficialFigures:
    """A cell's official figures and where they came from."""

    cell: OfficialAcceptanceSummary | None
    #: category → (official AL, trimmed AL, questions, merged chunks or None when unknown)
    per_category: dict[str, tuple[float | None, float | None, int | None, int | None]]
    #: "summary", "recomputed from requests.jsonl", or why the figure is n/a.
    note: str


_CACHE: dict[str, CellOfficialFigures] = {}


def official_figures(cell: LoadedCell) -> CellOfficialFigures:
    """The official AL of one cell (cached per summary path)."""
    key = str(cell.path)
    if key not in _CACHE:
        _CACHE[key] = _compute(cell)
    return _CACHE[key]


def _compute(cell: LoadedCell) -> CellOfficialFigures:
    summary = cell.summary
    if summary.spec_decode is None:
        return CellOfficialFigures(None, {}, "not speculating")
    if summary.official_acceptance is not None:
        per_category = {
            name: (
                cat.official_acceptance_length,
                cat.official_trimmed_acceptance_length,
                cat.num_questions,
                cat.official_merged_chunks,
            )
            for name, cat in summary.per_category.items()
        }
        return CellOfficialFigures(summary.official_acceptance, per_category, "summary")
    path = cell.path.parent / store.REQUESTS
    if not path.is_file():
        return CellOfficialFigures(None, {}, f"n/a: {path} is missing (official AL needs chunks)")
    try:
        records = list(store.read_records(path))
    except (OSError, SpecbenchError) as error:
        return CellOfficialFigures(None, {}, f"n/a: {path} is not readable ({error})")
    official = cell_official(records)
    if official is None:
        return CellOfficialFigures(None, {}, f"n/a: {path} has no token-carrying chunk")
    per_category = {
        name: (
            official.official.per_category.get(name),
            official.trimmed.per_category.get(name),
            official.official.questions_per_category.get(name),
            official.merged_per_category.get(name, 0),
        )
        for name in official.official.per_category
    }
    return CellOfficialFigures(
        official_summary(official), per_category, "recomputed from requests.jsonl"
    )
