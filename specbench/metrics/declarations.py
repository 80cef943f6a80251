"""Every figure specbench reports, declared once: what it is, and who may use it how.

A declaration is data: the formula stays a pure function in its metric module
(`acceptance.py`, `latency.py`, `official.py`, …). Everything that lists figures reads
`FIGURES` through the queries at the end of this module: the better direction
(`directions.direction_of`), the gate's stored figures and default rules
(`gate/snapshot.py`, `gate/rules.py`), the serving table's rows (`analysis/table_data.py`,
`analysis/tables.py`), the precision targets (`measure/precision.py`), the column names
(`results/columns.py`) and the derived columns of the results frame (`results/frame.py`).

A new figure is its formula, one entry in `FIGURES`, and its test.

Names are summary field names (the frame's columns). A distribution (`ttft_ms`) stands for
its statistics (`ttft_ms_mean`, `ttft_ms_median`, `ttft_ms_p90`, `ttft_ms_p99`); a
statistic that a table, the gate or a precision target uses is declared on its own with
`statistic_of`. A family (`per_position_acceptance`) stands for its members
(`per_position_acceptance_2`) or, for `category_acceptance_length`, for the AL of each
category of a mixed run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from specbench.metrics.latency import interactivity_tok_s_per_user, tpot_ms

Direction = Literal["higher", "lower"]
#: How repeats (and cells) combine: `mean`, the plain mean over repeats (serving figures,
#: as model cards average runs); `pooled`, a ratio of sums pooled from the counters over
#: the repeats and cells it covers (acceptance: never a mean of per-cell ratios);
#: `mean_acceptance`, an acceptance figure averaged over repeats like a serving figure (the
#: official AL: a mean over questions, with no counters to pool).
Aggregation = Literal["mean", "pooled", "mean_acceptance"]
#: `scalar`: one column; `distribution`: one column per statistic; `statistic`: one
#: statistic of a distribution, declared for its own use; `family`: numbered members.
Shape = Literal["scalar", "distribution", "statistic", "family"]
#: How a table words a value: `rate`, one decimal and the table's unit (`415.2 tok/s`);
#: `seconds`, a duration in ms shown in seconds (`9.68 s`); `milliseconds` (`154 ms`);
#: `significant`, three significant digits and the unit (`0.412 J/token`).
Wording = Literal["rate", "seconds", "milliseconds", "significant"]
#: How a table words speculative against baseline: `ratio` (`1.47×`, higher is better),
#: `latency` (`1.36× faster`), `percent_latency` (`+18.5% latency`), `percent_energy`
#: (`−12.3% energy`).
ChangeWording = Literal["ratio", "latency", "percent_latency", "percent_energy"]

#: Statistics stored for each distribution, in the summary's order.
STATISTICS = ("mean", "median", "p90", "p99")
#: The statistics of a distribution declared with `interval` that carry one (the cards
#: print medians and tails, never the mean).
INTERVAL_STATISTICS = ("median", "p90", "p99")


class Turn(Protocol):
    """What a per-turn value reads from one request record (`client.record.RequestRecord`)."""

    @property
    def ttft_ms(self) -> float | None: ...

    @property
    def e2e_ms(self) -> float | None: ...

    @property
    def output_tokens(self) -> int | None: ...


@dataclass(frozen=True, slots=True)
class TableFormat:
    """How a table shows a figure: its row label, value and change wording."""

    label: str
    wording: Wording
    change: ChangeWording
    #: The unit a `rate` prints (the cards print `415.2 tok/s` for tok/s/GPU).
    shown_unit: str = ""


@dataclass(frozen=True, slots=True)
class GateDefault:
    """The gate's default rule of a figure: exactly one tolerance (see `gate/rules.py`)."""

    relative: float | None = None
    max: float | None = None
    #: False: the tolerance alone decides (no significance test, no noise band).
    noise: bool = True
    #: With ≥ 3 launches on both sides: the smallest relative worsening of the median
    #: launch value that counts (MLPerf calls a 2% difference material).
    material: float = 0.02


@dataclass(frozen=True, slots=True)
class Derivation:
    """A figure computed from another stored figure of the same repeat when read back."""

    source: str
    formula: Callable[[float], float | None]

    def standard_error(self, source_value: float, source_error: float) -> float | None:
        """The derived figure's standard error from its source's, to first order (the delta
        method: |f'(x)| × se, f' by a central difference of relative step 1e-6).

        None where the formula is undefined at the source value.
        """
        step = abs(source_value) * 1e-6
        if step == 0:
            return None
        above, below = self.formula(source_value + step), self.formula(source_value - step)
        if above is None or below is None:
            return None
        return abs(above - below) / (2 * step) * source_error


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure: its identity, definition and every use."""

    name: str
    unit: str
    #: Which way is better; None for counts and durations the gate never judges.
    direction: Direction | None
    #: One line: the text of the report's footnotes and of the docs.
    definition: str
    aggregation: Aggregation
    shape: Shape = "scalar"
    table: TableFormat | None = None
    #: Row of the serving table (1 = first; the cards' order), None: not shown there.
    serving_row: int | None = None
    #: Column title of the precision table; set: a precision target may stop a cell on it.
    precision: str | None = None
    #: The gate watches it by default with this rule; None: only when a rules file says so.
    gate: GateDefault | None = None
    #: The figure compared instead when a side's GPU count is unknown.
    per_server: str | None = None
    #: A distribution's per-turn value (what its statistics and bootstraps summarise).
    per_turn: Callable[[Turn], float | None] | None = None
    #: The distribution and statistic a `statistic` figure is (`("ttft_ms", "median")`).
    statistic: tuple[str, str] | None = None
    derived: Derivation | None = None
    #: The report gives it a 95% interval over launches (`analysis/intervals.py`): a
    #: distribution, for each of `INTERVAL_STATISTICS`.
    interval: bool = False
    #: A serving row shown only where a side measured it (energy: most servers have no
    #: telemetry, and a row of dashes in every card table says nothing).
    only_where_measured: bool = False

    def statistic_of(self, statistic: str, **uses: object) -> Figure:
        """This distribution's `statistic` as a figure of its own, with `uses` set."""
        if self.shape != "distribution" or statistic not in STATISTICS:
            raise ValueError(f"{self.name}: no statistic {statistic!r}")
        return replace(
            self,
            name=f"{self.name}_{statistic}",
            definition=f"{statistic} over requests of: {self.definition}",
            shape="statistic",
            per_turn=None,
            statistic=(self.name, statistic),
            **uses,  # type: ignore[arg-type]
        )


def _tpot(turn: Turn) -> float | None:
    if turn.e2e_ms is None or turn.ttft_ms is None or turn.output_tokens is None:
        return None
    return tpot_ms(turn.e2e_ms, turn.ttft_ms, turn.output_tokens)


_AL_RULE = GateDefault(relative=0.02)

ACCEPTANCE_LENGTH = Figure(
    "acceptance_length",
    "tokens/step",
    "higher",
    "1 + accepted / drafts over the window's steps (metrics/acceptance.py)",
    "pooled",
    gate=_AL_RULE,
    interval=True,
)
OFFICIAL_ACCEPTANCE_LENGTH = Figure(
    "official_acceptance_length",
    "tokens/step",
    "higher",
    "mean over questions of Σ tokens / Σ chunks (metrics/official.py)",
    "mean_acceptance",
    gate=_AL_RULE,
    interval=True,
)
PER_POSITION_ACCEPTANCE = Figure(
    "per_position_acceptance",
    "fraction",
    "higher",
    "accepted at draft position i / drafts (metrics/acceptance.py)",
    "pooled",
    shape="family",
    gate=_AL_RULE,
)
CATEGORY_ACCEPTANCE_LENGTH = Figure(
    "category_acceptance_length",
    "tokens/step",
    "higher",
    "acceptance length of one category of a mixed run, pooled per request",
    "pooled",
    shape="family",
    gate=_AL_RULE,
)
DRAFT_ACCEPTANCE_RATE = Figure(
    "draft_acceptance_rate", "fraction", "higher", "accepted / draft tokens, in [0, 1]", "pooled"
)
#: No better direction: a larger K drafts more per step, which pays at a light load and
#: costs at a heavy one; what a schedule should do there is the advice's question.
EFFECTIVE_K = Figure(
    "effective_k",
    "draft tokens/step",
    None,
    "Δ draft tokens / Δ drafts over the window: the mean K verified per step "
    "(metrics/acceptance.py)",
    "pooled",
)
NUM_REQUESTS = Figure(
    "num_requests", "requests", None, "requests sent in the measured window", "mean"
)
NUM_FAILED = Figure(
    "num_failed",
    "requests",
    "lower",
    "requests that ended with an error record",
    "mean",
    gate=GateDefault(max=0, noise=False),
)
DURATION_S = Figure("duration_s", "s", None, "wall time of the measured window", "mean")
INPUT_TOKENS = Figure("input_tokens", "tokens", None, "Σ prompt tokens the server reported", "mean")
OUTPUT_TOKENS = Figure("output_tokens", "tokens", None, "Σ output tokens", "mean")
OUTPUT_TOK_S = Figure(
    "output_tok_s",
    "tok/s",
    "higher",
    "output tokens / window duration",
    "mean",
    table=TableFormat("Output throughput per server", "rate", "ratio", "tok/s"),
)
OUTPUT_TOK_S_PER_GPU = Figure(
    "output_tok_s_per_gpu",
    "tok/s/GPU",
    "higher",
    "output tokens / duration / GPUs",
    "mean",
    table=TableFormat("Output throughput/GPU", "rate", "ratio", "tok/s"),
    serving_row=1,
    precision="tok/s/GPU",
    gate=GateDefault(relative=0.05),
    per_server=OUTPUT_TOK_S.name,
    interval=True,
)
REQUEST_PER_S = Figure(
    "request_per_s", "requests/s", "higher", "successful requests / window duration", "mean"
)
TTFT_MS = Figure(
    "ttft_ms",
    "ms",
    "lower",
    "first token-carrying chunk − send (metrics/latency.py)",
    "mean",
    shape="distribution",
    per_turn=lambda turn: turn.ttft_ms,
    interval=True,
)
TPOT_MS = Figure(
    "tpot_ms",
    "ms",
    "lower",
    "(E2E − TTFT) / (output tokens − 1)",
    "mean",
    shape="distribution",
    per_turn=_tpot,
    interval=True,
)
E2E_MS = Figure(
    "e2e_ms",
    "ms",
    "lower",
    "last token-carrying chunk − send",
    "mean",
    shape="distribution",
    per_turn=lambda turn: turn.e2e_ms,
    interval=True,
)
STEP_GAP_MS = Figure(
    "step_gap_ms",
    "ms",
    "lower",
    "gap between consecutive token-carrying chunks",
    "mean",
    shape="distribution",
)
TTFT_MS_MEDIAN = TTFT_MS.statistic_of(
    "median",
    table=TableFormat("Median TTFT", "milliseconds", "percent_latency"),
    serving_row=3,
    precision="TTFT p50",
    gate=GateDefault(relative=0.10),
)
E2E_MS_MEDIAN = E2E_MS.statistic_of(
    "median",
    table=TableFormat("Median E2E latency", "seconds", "latency"),
    serving_row=2,
    precision="E2E p50",
    gate=GateDefault(relative=0.10),
)
TPOT_MS_MEDIAN = TPOT_MS.statistic_of("median")
#: Gated like tok/s/GPU (−5%), not like the latency medians (+10%): it is the other axis
#: of the throughput–interactivity trade-off, and a median TPOT averages each turn over
#: its tokens, so it is far steadier than a median TTFT or E2E.
INTERACTIVITY = Figure(
    "interactivity_tok_s_per_user",
    "tok/s/user",
    "higher",
    "1000 / median TPOT (ms): output tokens per second one user sees (metrics/latency.py)",
    "mean",
    table=TableFormat("Interactivity", "rate", "ratio", "tok/s/user"),
    serving_row=4,
    precision="interactivity",
    gate=GateDefault(relative=0.05),
    derived=Derivation(TPOT_MS_MEDIAN.name, interactivity_tok_s_per_user),
    interval=True,
)

#: GPU board energy (`energy/window.py`, docs/energy.md): the counted GPUs' energy counters
#: over the window; CPU, memory, network and cooling are not in it. Off the gate's default
#: rules (a rules file may watch it): few servers have telemetry.
_BOARD = "GPU board energy: Σ over the server's GPUs of the energy counter's delta"
ENERGY_JOULES = Figure("energy_joules", "J", None, f"{_BOARD} over the window", "mean")
JOULES_PER_OUTPUT_TOKEN = Figure(
    "joules_per_output_token",
    "J/token",
    "lower",
    f"{_BOARD} / Δ vllm:generation_tokens_total over the window (energy/window.py)",
    "mean",
    table=TableFormat(
        "Energy per output token (GPU board)", "significant", "percent_energy", "J/token"
    ),
    serving_row=5,
    interval=True,
    only_where_measured=True,
)
OUTPUT_TOKENS_PER_JOULE = Figure(
    "output_tokens_per_joule",
    "tokens/J",
    "higher",
    f"Δ vllm:generation_tokens_total / {_BOARD} over the window",
    "mean",
)
MEAN_POWER_W_PER_GPU = Figure(
    "mean_power_w_per_gpu",
    "W/GPU",
    None,
    f"{_BOARD} / window seconds / GPUs counted",
    "mean",
)

#: Every figure. Within one aggregation this is the order of the stored figures (the
#: gate's snapshots); the order of the gate's default rules (ceilings last).
FIGURES: tuple[Figure, ...] = (
    ACCEPTANCE_LENGTH,
    OFFICIAL_ACCEPTANCE_LENGTH,
    PER_POSITION_ACCEPTANCE,
    CATEGORY_ACCEPTANCE_LENGTH,
    DRAFT_ACCEPTANCE_RATE,
    EFFECTIVE_K,
    NUM_REQUESTS,
    NUM_FAILED,
    DURATION_S,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    OUTPUT_TOK_S,
    OUTPUT_TOK_S_PER_GPU,
    REQUEST_PER_S,
    TTFT_MS,
    TTFT_MS_MEDIAN,
    TPOT_MS,
    TPOT_MS_MEDIAN,
    E2E_MS,
    E2E_MS_MEDIAN,
    STEP_GAP_MS,
    INTERACTIVITY,
    ENERGY_JOULES,
    JOULES_PER_OUTPUT_TOKEN,
    OUTPUT_TOKENS_PER_JOULE,
    MEAN_POWER_W_PER_GPU,
)

_BY_NAME = {figure.name: figure for figure in FIGURES}


def figure_of(name: str) -> Figure | None:
    """The declaration of a figure, a distribution's statistic or a family's member."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    for statistic in STATISTICS:
        suffix = f"_{statistic}"
        found = _BY_NAME.get(name[: -len(suffix)]) if name.endswith(suffix) else None
        if found is not None and found.shape == "distribution":
            return found
    family, _, member = name.rpartition("_")
    found = _BY_NAME.get(family)
    if member.isdigit() and found is not None and found.shape == "family":
        return found
    return None


def distributions() -> tuple[str, ...]:
    """Names of the distributions, in the summary's order."""
    return tuple(f.name for f in FIGURES if f.shape == "distribution")


def stored(aggregation: Aggregation | None = None) -> tuple[str, ...]:
    """The per-cell columns of the scalar figures and the distributions' statistics.

    Families (numbered columns, per category) are left to their readers. `aggregation`:
    only the figures aggregated so.
    """
    names: list[str] = []
    for f in FIGURES:
        if aggregation is not None and f.aggregation != aggregation:
            continue
        if f.shape == "scalar":
            names.append(f.name)
        elif f.shape == "distribution":
            names += [f"{f.name}_{statistic}" for statistic in STATISTICS]
    return tuple(names)


def derived() -> tuple[Figure, ...]:
    """Figures computed from another column of the same repeat when results are read."""
    return tuple(f for f in FIGURES if f.derived is not None)


def serving_rows(per_gpu: bool = True) -> tuple[Figure, ...]:
    """The serving table's figures, in row order; per server when `per_gpu` is False."""
    rows = sorted((f for f in FIGURES if f.serving_row is not None), key=_row)
    if per_gpu:
        return tuple(rows)
    return tuple(_BY_NAME[f.per_server] if f.per_server else f for f in rows)


def targeted() -> tuple[Figure, ...]:
    """The figures a precision target stops a cell on, in the serving table's order."""
    return tuple(sorted((f for f in FIGURES if f.precision is not None), key=_row))


def targeted_phrase() -> str:
    """The targeted figures in words: `tok/s/GPU, E2E p50 and TTFT p50`."""
    titles = [f.precision or f.name for f in targeted()]
    return " and ".join([", ".join(titles[:-1]), titles[-1]]) if len(titles) > 1 else titles[0]


def with_intervals() -> tuple[str, ...]:
    """Column names of the figures the report gives an interval, in `FIGURES` order: a
    scalar's or statistic's name, a distribution's `INTERVAL_STATISTICS` columns."""
    names: list[str] = []
    for f in FIGURES:
        if not f.interval:
            continue
        if f.shape == "distribution":
            names += [f"{f.name}_{statistic}" for statistic in INTERVAL_STATISTICS]
        else:
            names.append(f.name)
    return tuple(dict.fromkeys(names))


def gated() -> tuple[Figure, ...]:
    """Figures the gate watches by default: comparisons in `FIGURES` order, ceilings last."""
    watched = [f for f in FIGURES if f.gate is not None]
    return tuple(sorted(watched, key=lambda f: f.gate is not None and f.gate.max is not None))


def _row(figure: Figure) -> float:
    return figure.serving_row if figure.serving_row is not None else float("inf")
