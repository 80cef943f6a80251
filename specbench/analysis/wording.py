"""How model cards word numbers: values with units, and the Change column.

Category display names live with the datasets (`data/categories.py`).

Ratios are computed from unrounded values and rounded only when worded, so
415.2 vs 281.7 tok/s reads `1.47×` and a card built from rounded cells still agrees.
"""

from __future__ import annotations

import math

from specbench.common import text

# One formatter family (common/text.py), named here as the report's tables call them.
fixed = text.fixed
number = text.grouped
percent = text.percent

MINUS = "\u2212"  # typographic minus, as the cards print negative changes
TIMES = "\u00d7"

#: Each AL definition's name, in the same words in every table, title and figure: the
#: official SPEED-Bench AL (what the AMD card prints), the step-weighted AL of vLLM's
#: counters or per-step arrays (what the GQA card prints), and an estimate from the
#: client's streamed chunks, which is neither and is never called step-weighted.
AL_NAMES = {
    "official": "official",
    "step_weighted": "step-weighted",
    "chunk_estimate": "chunk estimate",
}

#: Marks a cell whose concurrency exceeds the conversations it measured, in every table.
UNDER_LOADED = "\u2020"


def under_loaded_note(concurrency: int, conversations: int) -> str:
    """The note for an under-loaded cell, beside its mark (`UNDER_LOADED`)."""
    return (
        f"{UNDER_LOADED} under-loaded: concurrency {concurrency} exceeds the {conversations} "
        f"conversations measured, so at most {conversations} requests were ever in flight: "
        f"its figures are not of a load of {concurrency}."
    )


def marked(concurrency: int, conversations: int | None) -> str:
    """A concurrency as a table prints it: with the mark when the cell was under-loaded."""
    return f"{concurrency}{UNDER_LOADED}" if conversations is not None else str(concurrency)


_DATASET_NAMES = {"mt-bench": "MT-Bench", "mt_bench": "MT-Bench", "mtbench": "MT-Bench"}


def dataset_name(dataset: str, split: str | None = None) -> str:
    """`speed-bench:qualitative` → `SPEED-Bench (qualitative)`; `mt-bench` → `MT-Bench`.

    A workload group or view (`dataset · field=value [selection]`) keeps its qualifiers.
    """
    cut = min((i for i in (dataset.find(" · "), dataset.find(" [")) if i >= 0), default=-1)
    if cut >= 0:
        return _dataset_name(dataset[:cut], split) + dataset[cut:]
    return _dataset_name(dataset, split)


def _dataset_name(dataset: str, split: str | None) -> str:
    head, _, tail = dataset.partition(":")
    if head.lower() in ("speed-bench", "speed_bench", "nvidia/speed-bench"):
        # `speed-bench:qualitative:/local/path` names its config before the path.
        return f"SPEED-Bench ({split or tail.partition(':')[0] or 'all'})"
    if dataset.lower() in _DATASET_NAMES:
        return _DATASET_NAMES[dataset.lower()]
    if split is not None:
        return f"SPEED-Bench ({split})"
    return dataset


def dataset_phrase(dataset: str, split: str | None = None) -> str:
    """`speed-bench:qualitative` → `SPEED-Bench qualitative`, for titles in parentheses."""
    name = dataset_name(dataset, split)
    if name.startswith("SPEED-Bench ("):
        closing = name.index(")")
        return "SPEED-Bench " + name[len("SPEED-Bench (") : closing] + name[closing + 1 :]
    return name


def context_name(context_k: int) -> str:
    """8 → `8K`."""
    return f"{context_k}K"


def _defined(*values: float) -> bool:
    return all(v is not None and math.isfinite(v) and v > 0 for v in values)


def throughput_change(speculative: float, baseline: float) -> str:
    """`1.47×`: speculative throughput over baseline throughput."""
    if not _defined(speculative, baseline):
        return "n/a"
    return f"{speculative / baseline:.2f}{TIMES}"


def latency_change(speculative: float, baseline: float) -> str:
    """`1.36× faster` when the speculative latency is lower, else `1.10× slower`."""
    if not _defined(speculative, baseline):
        return "n/a"
    if speculative <= baseline:
        return f"{baseline / speculative:.2f}{TIMES} faster"
    return f"{speculative / baseline:.2f}{TIMES} slower"


def _percent_change(speculative: float, baseline: float, what: str) -> str:
    if not _defined(speculative, baseline):
        return "n/a"
    percent = round((speculative / baseline - 1.0) * 100.0, 1)
    sign = MINUS if percent < 0 else "+"
    return f"{sign}{abs(percent):.1f}% {what}"


def percent_latency_change(speculative: float, baseline: float) -> str:
    """`+18.5% latency` (speculative slower) or `−5.0% latency` (faster), as for TTFT."""
    return _percent_change(speculative, baseline, "latency")


def percent_energy_change(speculative: float, baseline: float) -> str:
    """`−12.3% energy` (speculation spends less per token) or `+4.0% energy` (more)."""
    return _percent_change(speculative, baseline, "energy")


def speedup(speculative: float, baseline: float) -> float:
    """Unrounded ratio speculative / baseline; NaN when either is missing or zero."""
    if not _defined(speculative, baseline):
        return math.nan
    return speculative / baseline


def with_half_width(value: str, half: str) -> str:
    """`415.2 ± 2.5 tok/s` from `415.2 tok/s` and `2.5 tok/s` (the unit once)."""
    number, _, unit = value.rpartition(" ")
    half_number, _, half_unit = half.rpartition(" ")
    if not number or not half_number or unit != half_unit:
        return f"{value} ± {half}"
    return f"{number} ± {half_number} {unit}"


def ratio_range(low: float, high: float) -> str:
    """`(1.44–1.50)`: a ratio's interval, two decimals."""
    return f"({low:.2f}–{high:.2f})"


def rate(value: float, unit: str) -> str:
    """`415.2 tok/s`: one decimal, thousands grouped, then `unit`."""
    return "—" if not math.isfinite(value) else f"{value:,.1f} {unit}"


def significant(value: float, unit: str) -> str:
    """`0.412 J/token`: three significant digits, then `unit`."""
    return "—" if not math.isfinite(value) else f"{value:.3g} {unit}"


def tok_s(value: float) -> str:
    """`415.2 tok/s`."""
    return rate(value, "tok/s")


def seconds_from_ms(value_ms: float) -> str:
    """`9.68 s` from 9680 ms; three decimals below 0.1 s."""
    if not math.isfinite(value_ms):
        return "—"
    seconds = value_ms / 1000.0
    return f"{seconds:.3f} s" if seconds < 0.1 else f"{seconds:,.2f} s"


def milliseconds(value_ms: float) -> str:
    """`154 ms`; more decimals for small values (`4.2 ms`, `0.83 ms`)."""
    if not math.isfinite(value_ms):
        return "—"
    if value_ms >= 100:
        return f"{value_ms:,.0f} ms"
    return f"{value_ms:.1f} ms" if value_ms >= 10 else f"{value_ms:.2f} ms"
