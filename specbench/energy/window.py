"""The cell's `energy` object from its `energy.jsonl` records: a pure function.

Definitions (GPU board energy only; CPU, memory, network and cooling are not in it):

- `joules` = Σ over the counted GPUs of (counter after − counter before);
- `window_s` = after.t_s − before.t_s, the two reads made with the window's `/metrics` scrapes;
- `joules_per_output_token` = joules / output_tokens, `output_tokens_per_joule` its inverse,
  with output_tokens = Δ `vllm:generation_tokens_total` over the same window;
- `mean_power_w_per_gpu` = joules / window_s / number of GPUs;
- `sampled_joules` = Σ over the GPUs of ∫ power dt by the trapezoid rule over every
  reading with power (before, the samples inside the window, after), in time order;
- `counter_power_agree` = |joules − sampled_joules| ≤ 5% of sampled_joules.

The edges decide validity: a failed before or after read gives its reason; a failed sample
between them only lowers the sampling rate (`sample_errors` counts them). A figure that
cannot be given is null with a reason code and a `detail` in words, never 0.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from specbench.energy.log import LogError, LogHeader, LogReading, LogRecord
from specbench.energy.reading import ReasonCode
from specbench.store.summary import EnergySummary

#: |joules − sampled_joules| within this fraction of sampled_joules: the two agree.
AGREEMENT = 0.05
#: A counter that falls below this fraction of its previous value was reset (a driver
#: reload, a GPU reset); a smaller fall is a counter running backwards.
RESET_BELOW = 0.1
#: A window at least this long in which a counter did not move: the counter is frozen.
FROZEN_AFTER_S = 1.0
OFF_DETAIL = "GPU telemetry is off"


def energy_summary(records: Sequence[LogRecord], output_tokens: int | None) -> EnergySummary:
    """The `energy` object of one cell from its log's records and Δ generation tokens.

    Raises ValueError for records no writer produces (no header, an after read at or
    before the before read, a negative token count).
    """
    headers = [r for r in records if isinstance(r, LogHeader)]
    if not headers:
        raise ValueError("energy.jsonl has no header line")
    if output_tokens is not None and output_tokens < 0:
        raise ValueError(f"output_tokens is {output_tokens}; a token count is never negative")
    header = headers[0]
    base: dict[str, Any] = {
        "source": header.source,
        "source_detail": header.source_detail,
        "gpus": header.gpus,
        "output_tokens": output_tokens,
    }
    if header.source == "off":
        return invalid(base, "off", header.source_detail or OFF_DETAIL)
    if not header.gpus:
        return invalid(base, "no_device", "no GPU was counted for this server")
    edges = {r.kind: r for r in records if isinstance(r, LogReading) and r.kind != "sample"}
    for edge in ("before", "after"):
        failed = [r for r in records if isinstance(r, LogError) and r.edge == edge]
        if failed:
            return invalid(base, failed[0].reason, f"the {edge} read failed: {failed[0].message}")
        if edge not in edges:
            return invalid(base, "unavailable", f"energy.jsonl holds no {edge} reading")
    before, after = edges["before"], edges["after"]
    window_s = after.t_s - before.t_s
    if window_s <= 0:
        raise ValueError(f"the after read (t = {after.t_s} s) is not after the before read")
    samples = [r for r in records if isinstance(r, LogReading) and r.kind == "sample"]
    inside = sorted((r for r in samples if before.t_s <= r.t_s <= after.t_s), key=lambda r: r.t_s)
    series = [before, *inside, after]
    sampled = sampled_joules(series, header.gpus)
    base |= {
        "window_s": window_s,
        "samples": len(inside),
        "sample_errors": sum(
            isinstance(r, LogError) and r.edge == "sample" and before.t_s <= r.t_s <= after.t_s
            for r in records
        ),
        "sampled_joules": sampled,
    }
    problem = counter_problem(series, header.gpus, window_s)
    if problem is not None:
        return invalid(base, *problem)
    # counter_problem found every counted GPU's counter in both edges
    per_gpu = {
        gpu: energy(after, gpu) - energy(before, gpu)  # type: ignore[operator]
        for gpu in header.gpus
    }
    joules = sum(per_gpu.values())
    if joules == 0:
        # Under FROZEN_AFTER_S a still counter may just be slow to update; either way there
        # are no joules to give, and 0 is never written for a figure that cannot be given.
        return invalid(
            base, "counter_frozen", f"no counted GPU's energy counter moved over {window_s:.3f} s"
        )
    base |= {
        "joules": joules,
        "per_gpu_joules": per_gpu,
        "mean_power_w_per_gpu": joules / window_s / len(header.gpus),
        "counter_power_agree": (
            None if sampled is None else abs(joules - sampled) <= AGREEMENT * sampled
        ),
    }
    if not output_tokens:
        counted = "absent" if output_tokens is None else "0"
        return invalid(
            base,
            "no_output_tokens",
            f"Δ vllm:generation_tokens_total over the window is {counted}: nothing to divide "
            "the joules by",
        )
    return EnergySummary(
        **base,
        valid=True,
        reason=None,
        joules_per_output_token=joules / output_tokens,
        output_tokens_per_joule=output_tokens / joules,
    )


def invalid(base: dict[str, Any], reason: ReasonCode, detail: str) -> EnergySummary:
    """Not valid: every figure not already in `base` is null."""
    figures = {
        "window_s": None,
        "joules": None,
        "joules_per_output_token": None,
        "output_tokens_per_joule": None,
        "mean_power_w_per_gpu": None,
    }
    return EnergySummary(**(figures | base), valid=False, reason=reason, detail=detail)


def energy(reading: LogReading, gpu: str) -> float | None:
    """The counter of `gpu` in `reading`, J; None when absent or not given."""
    found = reading.gpus.get(gpu)
    return None if found is None else found.energy_j


def counter_problem(
    series: Sequence[LogReading], gpus: Sequence[str], window_s: float
) -> tuple[ReasonCode, str] | None:
    """Why the counters cannot give joules, in order of the checks; None when they can.

    `series` is before, the samples inside the window, after, in time order.
    """
    before, after = series[0], series[-1]
    for gpu in gpus:
        for edge in (before, after):
            if gpu not in edge.gpus:
                listed = ", ".join(sorted(edge.gpus)) or "no GPU"
                return "gpu_missing", f"GPU {gpu} is absent from the {edge.kind} reading " + (
                    f"(it lists {listed})"
                )
    for gpu in gpus:
        for edge in (before, after):
            if energy(edge, gpu) is None:
                return "no_energy_counter", (
                    f"the source gives no energy counter for GPU {gpu} (its {edge.kind} reading)"
                )
    for gpu in gpus:
        values = [(r.t_s, e) for r in series if (e := energy(r, gpu)) is not None]
        for (_, previous), (t_s, value) in itertools.pairwise(values):
            if value < previous:
                reason: ReasonCode = (
                    "counter_reset" if value < RESET_BELOW * previous else "counter_backwards"
                )
                return reason, (
                    f"GPU {gpu}'s energy counter fell from {previous:.3f} J to {value:.3f} J "
                    f"at t = {t_s:.3f} s"
                )
    for gpu in gpus:
        still = _still_span(series, gpu)
        if still is not None:
            start, end, value = still
            return "counter_frozen", (
                f"GPU {gpu}'s energy counter stayed at {value:.3f} J from t = {start:.3f} s to "
                f"{end:.3f} s (window {window_s:.3f} s)"
            )
    return None


def _still_span(series: Sequence[LogReading], gpu: str) -> tuple[float, float, float] | None:
    """The first span of at least FROZEN_AFTER_S over which `gpu`'s counter did not move
    (a counter that stopped mid-window counts, not only one still from edge to edge):
    (start, end, value), or None."""
    values = [(r.t_s, e) for r in series if (e := energy(r, gpu)) is not None]
    start = 0
    for index in range(1, len(values)):
        if values[index][1] != values[start][1]:
            start = index
        elif values[index][0] - values[start][0] >= FROZEN_AFTER_S:
            return values[start][0], values[index][0], values[start][1]
    return None


def sampled_joules(series: Sequence[LogReading], gpus: Sequence[str]) -> float | None:
    """Σ over `gpus` of the trapezoid integral of power over the readings that give it, J;
    None when a GPU has fewer than two readings with power."""
    total = 0.0
    for gpu in gpus:
        points = [
            (r.t_s, found.power_w)
            for r in series
            if (found := r.gpus.get(gpu)) is not None and found.power_w is not None
        ]
        if len(points) < 2:
            return None
        total += sum((t1 - t0) * (p0 + p1) / 2 for (t0, p0), (t1, p1) in itertools.pairwise(points))
    return total
