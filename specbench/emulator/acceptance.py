"""The emulator's acceptance schedule along an output, and the truth any cut of it has.

Schedule: a verify step whose first emitted token sits at output position `s` (the
request's tokens so far; the prefill emitted position 0) draws its accepted drafts from
the conditional acceptance

    p_i(s) = base_i(s) · decay^(s // decay_tokens),    i = 1..K,

where `base = reasoning_acceptance` while s < reasoning_tokens (the step starts inside
the thinking span, `</think>` marker included) and `acceptance` otherwise. So the
schedule is piecewise constant, with pieces cut at every multiple of
`acceptance_decay_tokens` and at `reasoning_tokens`.

Truth: a step drawn from p emits on average AL(p) = 1 + Σ_i Π_{j≤i} p_j tokens (bonus
included). Over steps that all start in one piece this expectation is exact, whatever the
outputs' lengths: the step-weighted AL of a cut whose steps share one piece converges to
it. A cut spanning several pieces mixes them in proportion to their step counts; a piece
of L tokens holds about L / AL steps (renewal), so the cut's AL is about
Σ L_k / Σ (L_k / AL_k), exact up to the steps straddling piece edges.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from specbench.emulator.config import EmulatorConfig


def acceptance_length_of(conditional: Sequence[float]) -> float:
    """AL = 1 + Σ_i Π_{j≤i} p_j: expected tokens per step of this conditional acceptance."""
    total, survive = 1.0, 1.0
    for probability in conditional:
        survive *= probability
        total += survive
    return total


def step_acceptance(config: EmulatorConfig, start_position: int) -> tuple[float, ...]:
    """Conditional acceptance of a step whose first token is at `start_position`."""
    base = (
        config.thinking_acceptance
        if start_position < config.reasoning_tokens
        else config.conditional_acceptance
    )
    factor = config.acceptance_decay ** (start_position // config.acceptance_decay_tokens)
    return tuple(probability * factor for probability in base)


def expected_step_acceptance_length(config: EmulatorConfig, start_position: int) -> float:
    """Expected AL of a step starting at `start_position` (exact)."""
    return acceptance_length_of(step_acceptance(config, start_position))


def schedule_pieces(config: EmulatorConfig, start: int, end: int) -> list[tuple[int, int]]:
    """The constant pieces [a, b) of the schedule that cover [start, end)."""
    if not 0 <= start < end:
        raise ValueError(f"positions [{start}, {end}) are not a non-empty range from 0")
    edges = {start, end}
    every = config.acceptance_decay_tokens
    if config.acceptance_decay != 1.0:
        edges.update(range((start // every + 1) * every, end, every))
    if start < config.reasoning_tokens < end:
        edges.add(config.reasoning_tokens)
    ordered = sorted(edges)
    return list(itertools.pairwise(ordered))


def expected_acceptance_length_between(config: EmulatorConfig, start: int, end: int) -> float:
    """Truth of the step-weighted AL of steps starting in [start, end).

    Exact when [start, end) lies in one piece of the schedule (see `schedule_pieces`);
    otherwise Σ L_k / Σ (L_k / AL_k) over its pieces (renewal, see the module docstring).
    """
    pieces = schedule_pieces(config, start, end)
    tokens = sum(b - a for a, b in pieces)
    steps = sum((b - a) / expected_step_acceptance_length(config, a) for a, b in pieces)
    return tokens / steps


def is_exact_between(config: EmulatorConfig, start: int, end: int) -> bool:
    """Whether `expected_acceptance_length_between` is exact for [start, end)."""
    return len(schedule_pieces(config, start, end)) == 1
