"""Results directories → tidy pandas frames: one row per cell, or per cell × category.

A results directory holds `manifest.json` and, per cell,
`<label>/<dataset-slug>/c<concurrency>/r<repeat>/summary.json` (a failed cell holds
`failure.json` instead). `load_results` reads every `summary.json` through the
`CellSummary` contract and flattens it into one row:

- identity: `results_dir`, `label` (unique across the merged directories: a label seen in
  two directories is prefixed `<dir name>/`), `server_label` (as written in the summary),
  `is_baseline` (from the manifest), `dataset`, `dataset_slug`, `split`
  (`qualitative`, `throughput_8k`, … or None), `context_k` (1, 2, 8, 16, 32 for throughput
  splits), `category` (None for a mixed run), `concurrency`, `launch`, `repeat`;
- every scalar field of the summary under its own name (`output_tok_s_per_gpu`, …);
- each distribution as `<name>_<stat>`: `ttft_ms_median`, `e2e_ms_p99`, `tpot_ms_count`, …;
- each derived figure of `metrics/declarations.py`, from its source column of the same row;
- GPU board energy (`summary.energy`; NaN/None where not measured): `energy_joules`,
  `joules_per_output_token`, `output_tokens_per_joule`, `mean_power_w_per_gpu`,
  `energy_valid`, `energy_reason`, `energy_source`, `energy_detail` (why not valid);
- the server's batches: `running_batch_mean` (time-weighted mean of
  `vllm:num_requests_running` over the window), `running_batch_samples`, and
  `per_step_drafted_counts` (K → verify steps, JSON text; `detailed` metrics only);
- spec decode (NaN when speculation is off): `acceptance_length`, `draft_acceptance_rate`,
  `effective_k` (Δ draft tokens / Δ drafts, from the counters, so older results have it
  too), `num_drafts`, `num_draft_tokens`, `num_accepted_tokens`, `acceptance_source`,
  `acceptance_definition`, and per position i = 1..K (K = the largest draft length seen):
  `per_position_acceptance_i`, `conditional_acceptance_i`,
  `num_accepted_tokens_per_position_i`.

Acceptance averaged over cells must be pooled from the counters (`pool_acceptance`), never
the mean of per-cell acceptance lengths: AL is a ratio of sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from specbench.common.naming import selection_key
from specbench.metrics.acceptance import effective_k
from specbench.metrics.declarations import derived as derived_figures
from specbench.results.columns import (
    ACCEPTANCE_DEFINITION,
    ACCEPTANCE_LENGTH,
    ACCEPTANCE_SOURCE,
    ACCEPTED_PER_POSITION_PREFIX,
    CATEGORY,
    CELL_DIR,
    COALESCING_CHECK,
    CONCURRENCY,
    CONDITIONAL_PREFIX,
    CONTEXT_K,
    DATASET,
    DISTRIBUTION_STATS,
    DISTRIBUTIONS,
    DRAFT_ACCEPTANCE_RATE,
    DRAFTED_STEP_SHARE,
    EFFECTIVE_K,
    ENERGY_DETAIL,
    ENERGY_JOULES,
    ENERGY_REASON,
    ENERGY_SOURCE,
    ENERGY_VALID,
    FULL_SELECTION,
    GROUP,
    IDENTITY_COLUMNS,
    IS_BASELINE,
    JOULES_PER_OUTPUT_TOKEN,
    LABEL,
    LAUNCH,
    MEAN_POWER_W_PER_GPU,
    MERGED_CHUNKS,
    NUM_ACCEPTED_TOKENS,
    NUM_DRAFT_TOKENS,
    NUM_DRAFTS,
    NUM_QUESTIONS,
    NUM_REQUESTS,
    NUM_SPEC_STEPS,
    NUM_SUCCEEDED,
    NUM_TURNS,
    OFFICIAL_ACCEPTANCE_LENGTH,
    OFFICIAL_IS_ESTIMATE,
    OFFICIAL_NOTE,
    OFFICIAL_TRIMMED_ACCEPTANCE_LENGTH,
    OUTPUT_TOKENS,
    OUTPUT_TOKENS_PER_JOULE,
    PER_POSITION_PREFIX,
    REPEAT,
    RESULTS_DIR,
    SCHEMA,
    SELECTION,
    SERVER_LABEL,
    SPLIT,
    VIEW,
    WORKLOAD,
    parse_split,
)
from specbench.results.loading import (
    LoadedCell,
    load_cells,
)
from specbench.results.official import CellOfficialFigures, official_figures
from specbench.store.summary import EnergySummary

if TYPE_CHECKING:
    import pandas as pd


def _flatten(cell: LoadedCell, max_positions: int) -> dict[str, Any]:
    summary = cell.summary
    cell_dir = cell.path.parent
    split, context_k = parse_split(summary.dataset, summary.workload)
    full = summary.categories is None and summary.entropy_tiers is None
    row: dict[str, Any] = {
        RESULTS_DIR: str(cell.results_dir),
        LABEL: cell.label,
        SERVER_LABEL: summary.label,
        IS_BASELINE: cell.is_baseline,
        DATASET: summary.dataset,
        WORKLOAD: summary.workload,
        SELECTION: selection_key(
            summary.dataset, summary.categories or (), summary.entropy_tiers or ()
        ),
        FULL_SELECTION: full,
        GROUP: cell.identity,
        VIEW: None,
        SPLIT: split,
        CONTEXT_K: context_k,
        CATEGORY: summary.category,
        CONCURRENCY: summary.concurrency,
        REPEAT: summary.repeat,
        LAUNCH: summary.launch,
        CELL_DIR: str(cell_dir),
        SCHEMA: summary.schema_version,
        NUM_SUCCEEDED: summary.num_requests - summary.num_failed,
    }
    dumped = summary.model_dump(
        exclude={"spec_decode", "per_category", "official_acceptance", "energy", *DISTRIBUTIONS}
    )
    for key, value in dumped.items():
        if key not in (
            "label",
            "workload",
            "categories",
            "entropy_tiers",
            "dataset",
            "category",
            "concurrency",
            "repeat",
            "launch",
            "schema_version",
        ):
            # Nested records (precision, acceptance_cuts, standard_errors) stay whole, as
            # JSON text: a column of dicts is no table value, and Parquet cannot hold an
            # empty one (`standard_errors.categories` is {} below 5 conversations).
            row[key] = _json_text(value) if isinstance(value, dict) else value
    for name in DISTRIBUTIONS:
        distribution = getattr(summary, name)
        for stat in DISTRIBUTION_STATS:
            row[f"{name}_{stat}"] = getattr(distribution, stat)
    spec = summary.spec_decode
    row[ACCEPTANCE_LENGTH] = spec.acceptance_length if spec else None
    row[DRAFT_ACCEPTANCE_RATE] = spec.draft_acceptance_rate if spec else None
    # From the counters, not the summary's field: results written before it get it too.
    row[EFFECTIVE_K] = effective_k(spec.num_draft_tokens, spec.num_drafts) if spec else None
    row[NUM_DRAFTS] = spec.num_drafts if spec else None
    row[NUM_DRAFT_TOKENS] = spec.num_draft_tokens if spec else None
    row[NUM_ACCEPTED_TOKENS] = spec.num_accepted_tokens if spec else None
    row[ACCEPTANCE_SOURCE] = spec.source if spec else None
    row[ACCEPTANCE_DEFINITION] = spec.definition if spec else None
    per_position = spec.per_position_acceptance if spec else []
    conditional = spec.conditional_acceptance if spec else []
    accepted = spec.num_accepted_tokens_per_position if spec else []
    for i in range(max_positions):
        row[f"{PER_POSITION_PREFIX}{i + 1}"] = _at(per_position, i)
        row[f"{CONDITIONAL_PREFIX}{i + 1}"] = _at(conditional, i)
        row[f"{ACCEPTED_PER_POSITION_PREFIX}{i + 1}"] = _at(accepted, i)
    row.update(_official_columns(cell))
    row.update(_energy_columns(summary.energy))
    for figure in derived_figures():
        assert figure.derived is not None
        source = row.get(figure.derived.source)
        row[figure.name] = None if source is None else figure.derived.formula(source)
    return row


def _json_text(value: dict[Any, Any]) -> str:
    """A nested record as JSON text, keys sorted; integer keys (`per_step_drafted_counts`)
    in numeric order, not as text ("10" before "5")."""
    if value and all(isinstance(key, int) for key in value):
        return orjson.dumps(dict(sorted(value.items())), option=orjson.OPT_NON_STR_KEYS).decode()
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _energy_columns(energy: EnergySummary | None) -> dict[str, Any]:
    """The energy figures as columns: null figures stay null (never 0), with their reason."""
    return {
        ENERGY_JOULES: energy.joules if energy else None,
        JOULES_PER_OUTPUT_TOKEN: energy.joules_per_output_token if energy else None,
        OUTPUT_TOKENS_PER_JOULE: energy.output_tokens_per_joule if energy else None,
        MEAN_POWER_W_PER_GPU: energy.mean_power_w_per_gpu if energy else None,
        ENERGY_VALID: energy.valid if energy else None,
        ENERGY_REASON: energy.reason if energy else None,
        ENERGY_SOURCE: energy.source if energy else None,
        ENERGY_DETAIL: (energy.detail or energy.source_detail) if energy else None,
    }


def _official_columns(cell: LoadedCell) -> dict[str, Any]:
    figures = official_figures(cell)
    official = figures.cell
    return {
        OFFICIAL_ACCEPTANCE_LENGTH: official.acceptance_length if official else None,
        OFFICIAL_TRIMMED_ACCEPTANCE_LENGTH: official.trimmed_acceptance_length
        if official
        else None,
        NUM_QUESTIONS: official.num_questions if official else None,
        NUM_TURNS: official.num_turns if official else None,
        MERGED_CHUNKS: official.merged_chunks if official else None,
        OFFICIAL_IS_ESTIMATE: official.is_estimate if official else None,
        DRAFTED_STEP_SHARE: official.drafted_step_share if official else None,
        COALESCING_CHECK: official.coalescing_check if official else None,
        OFFICIAL_NOTE: figures.note,
    }


QUOTE = '"'


def _name_groups(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace each row's group identity by its display name, and name its view.

    A group is shown as its dataset spec; when several groups share a dataset, the
    measured fields they differ in are appended (`speed-bench:qualitative · max_tokens=8192`).
    A view is its group, with the selection appended unless it is the whole dataset.
    """
    by_dataset: dict[str, set[Any]] = {}
    for row in rows:
        by_dataset.setdefault(row[DATASET], set()).add(row[GROUP])
    names: dict[Any, str] = {}
    for dataset, identities in by_dataset.items():
        fields = [dict(identity) for identity in identities]
        differing = [k for k in fields[0] if any(f[k] != fields[0][k] for f in fields)]
        for identity, values in zip(identities, fields, strict=True):
            parts = [f"{k}={values[k].strip(QUOTE)}" for k in differing if k != "dataset"]
            names[identity] = " · ".join([dataset, *parts])
    for row in rows:
        row[GROUP] = names[row[GROUP]]
        selected = row[SELECTION]
        row[VIEW] = row[GROUP] if row[FULL_SELECTION] else f"{row[GROUP]} [{selected}]"
    return rows


def _max_positions(cells: Sequence[LoadedCell]) -> int:
    return max(
        (
            len(c.summary.spec_decode.per_position_acceptance)
            for c in cells
            if c.summary.spec_decode
        ),
        default=0,
    )


def _at(values: Sequence[Any], index: int) -> Any:
    return values[index] if index < len(values) else None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _to_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame(rows)
    # pandas turns ints with a None into floats: keep counts integral (nullable Int64).
    for column in frame.columns:
        present = [row[column] for row in rows if row.get(column) is not None]
        if present and len(present) < len(rows) and all(_is_int(v) for v in present):
            frame[column] = pd.array([row.get(column) for row in rows], dtype="Int64")
    return frame


def load_results(dirs: Sequence[Path]) -> pd.DataFrame:
    """One row per cell of every directory in `dirs` (see the module docstring for columns).

    Raises SpecbenchError (one line) for a missing, empty or foreign directory, a
    `summary.json` that does not follow the contract, or an unsupported schema version.
    Rows are sorted by label, dataset, category, concurrency, launch and repeat.
    """
    cells, _ = load_cells(dirs)
    return cells_frame(cells)


def cells_frame(cells: Sequence[LoadedCell]) -> pd.DataFrame:
    """The per-cell frame of already loaded cells (what `load_results` returns)."""
    positions = _max_positions(cells)
    frame = _to_frame(_name_groups([_flatten(c, positions) for c in cells]))
    order = [LABEL, DATASET, CATEGORY, CONCURRENCY, LAUNCH, REPEAT]
    return frame.sort_values(order, na_position="first", kind="stable").reset_index(drop=True)


def load_category_results(dirs: Sequence[Path]) -> pd.DataFrame:
    """One row per cell × category, from `per_category` of mixed runs.

    A single-category cell without `per_category` contributes one row from its server
    counters (source `server_counters`, step-weighted, `num_spec_steps` = drafts).
    Columns: the identity columns with `category` the category of the row, `num_requests`,
    `output_tokens`, `acceptance_length`, `acceptance_source`, `acceptance_definition`,
    `draft_acceptance_rate`, `num_spec_steps`, `per_position_acceptance_i`.
    """
    cells, _ = load_cells(dirs)
    return category_frame(cells)


def _category_official(figures: CellOfficialFigures, category: str) -> dict[str, Any]:
    al, trimmed, questions, merged = figures.per_category.get(category, (None, None, None, None))
    cell = figures.cell
    if al is None and cell is not None and len(figures.per_category) <= 1:
        # a single-category cell: its own official figure is the category's
        al, trimmed, questions = (
            cell.acceptance_length,
            cell.trimmed_acceptance_length,
            cell.num_questions,
        )
        merged = cell.merged_chunks
    if cell is None:
        estimate = None
    elif merged is None:  # written before per-category merges were recorded: the cell's
        estimate = cell.is_estimate
    else:
        estimate = merged > 0 or (cell.is_estimate and cell.merged_chunks == 0)
    return {
        OFFICIAL_ACCEPTANCE_LENGTH: al,
        OFFICIAL_TRIMMED_ACCEPTANCE_LENGTH: trimmed,
        NUM_QUESTIONS: questions,
        OFFICIAL_IS_ESTIMATE: estimate,
        MERGED_CHUNKS: merged if merged is not None else (cell.merged_chunks if cell else None),
        OFFICIAL_NOTE: figures.note,
    }


def category_frame(cells: Sequence[LoadedCell]) -> pd.DataFrame:
    """The per-category frame of already loaded cells (what `load_category_results` returns)."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    positions = _max_positions(cells)
    for cell in cells:
        summary = cell.summary
        base = {k: v for k, v in _flatten(cell, 0).items() if k in IDENTITY_COLUMNS}
        official = official_figures(cell)
        entries: list[tuple[str, dict[str, Any]]] = []
        for name, cat in summary.per_category.items():
            entries.append(
                (
                    name,
                    {
                        NUM_REQUESTS: cat.num_requests,
                        OUTPUT_TOKENS: cat.output_tokens,
                        ACCEPTANCE_LENGTH: cat.acceptance_length,
                        ACCEPTANCE_SOURCE: cat.acceptance_source,
                        ACCEPTANCE_DEFINITION: cat.definition,
                        DRAFT_ACCEPTANCE_RATE: cat.draft_acceptance_rate,
                        NUM_SPEC_STEPS: cat.num_spec_steps,
                        **_category_official(official, name),
                        "_positions": cat.per_position_acceptance,
                    },
                )
            )
        spec = summary.spec_decode
        if not entries and summary.category is not None and spec is not None:
            entries.append(
                (
                    summary.category,
                    {
                        NUM_REQUESTS: summary.num_requests - summary.num_failed,
                        OUTPUT_TOKENS: summary.output_tokens,
                        ACCEPTANCE_LENGTH: spec.acceptance_length,
                        ACCEPTANCE_SOURCE: spec.source,
                        ACCEPTANCE_DEFINITION: spec.definition,
                        DRAFT_ACCEPTANCE_RATE: spec.draft_acceptance_rate,
                        NUM_SPEC_STEPS: spec.num_drafts,
                        **_category_official(official, summary.category),
                        "_positions": spec.per_position_acceptance,
                    },
                )
            )
        for name, values in entries:
            row = {**base, CATEGORY: name}
            per_position = values.pop("_positions")
            row.update(values)
            for i in range(positions):
                row[f"{PER_POSITION_PREFIX}{i + 1}"] = (
                    per_position[i] if per_position and i < len(per_position) else None
                )
            rows.append(row)
    if not rows:
        return pd.DataFrame(columns=[*IDENTITY_COLUMNS, NUM_REQUESTS, ACCEPTANCE_LENGTH])
    frame = _to_frame(_name_groups(rows))
    order = [LABEL, DATASET, CATEGORY, CONCURRENCY, LAUNCH, REPEAT]
    return frame.sort_values(order, kind="stable").reset_index(drop=True)
