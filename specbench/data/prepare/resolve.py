"""The resolver loop: every row of one SPEED-Bench config, in upstream row order.

Whole configs are resolved, one `Context` (so one HLE generator) per config, before any
category is selected: the HLE throughput text of a row depends on every HLE row before it.
A row is a placeholder when its first turn starts with the marker (only `turns[0]` is
checked, as upstream); a placeholder whose source no family matches is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data.prepare.context import Context
from specbench.data.prepare.registry import DEFAULT_FLAVOUR, source_for
from specbench.data.prepare.upstream import Upstream
from specbench.data.speed_bench import DEFAULT_REVISION, HUB_REPO, PLACEHOLDER, check_config


@dataclass
class ResolvedConfig:
    config: str
    rows: list[dict[str, Any]]
    features: Any
    #: question_id → why it was left out (gated source skipped).
    missing: dict[str, str]


def load_speed_bench(upstream: Upstream, config: str, revision: str) -> Any:
    check_config(config)
    return upstream.hub(HUB_REPO, config, revision)


def resolve_rows(
    rows: Iterable[dict[str, Any]],
    ctx: Context,
    skip: frozenset[str] = frozenset(),
    progress: Callable[[int], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Rows with their placeholders filled, in the order given; and the rows left out, why."""
    resolved: list[dict[str, Any]] = []
    missing: dict[str, str] = {}
    for number, original in enumerate(rows, start=1):
        row = dict(original)
        if row["turns"] and str(row["turns"][0]).startswith(PLACEHOLDER):
            family = source_for(row.get("source"))
            if family is None:
                raise SpecbenchError(
                    f"{HUB_REPO} config {ctx.config!r} row {number} (question_id "
                    f"{row['question_id']}): source {row.get('source')!r} is not a known "
                    "SPEED-Bench source; refusing to leave a placeholder in place"
                )
            if family.match in skip:
                missing[row["question_id"]] = f"{family.match}: gated source skipped"
                continue
            row["turns"] = family.resolve(row, ctx)
        resolved.append(row)
        if progress:
            progress(number)
    return resolved, missing


def resolve_config(
    upstream: Upstream,
    config: str,
    revision: str = DEFAULT_REVISION,
    skip: frozenset[str] = frozenset(),
    progress: Callable[[int, int], None] | None = None,
    flavour: str = DEFAULT_FLAVOUR,
    shared_rng: list[Any] | None = None,
) -> ResolvedConfig:
    """Every row of `config` with its placeholders filled; sources in `skip` left out."""
    dataset = load_speed_bench(upstream, config, revision)
    total = len(dataset)
    step = (lambda done: progress(done, total)) if progress else None
    ctx = Context(config=config, upstream=upstream, flavour=flavour, shared_rng=shared_rng)
    rows, missing = resolve_rows(dataset, ctx, skip, step)
    return ResolvedConfig(config=config, rows=rows, features=dataset.features, missing=missing)
