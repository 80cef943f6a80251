"""Gate rules: per metric, which direction is better and how much worse is tolerated.

A rules file (`gate.toml`) holds `[metrics.<name>]` tables; each one replaces the default
rule of that metric (or adds one), unless `replace_defaults = true` drops the defaults:

    noise_sigmas = 2.0
    [metrics.acceptance_length]
    direction = "higher"
    relative = 0.02

Exactly one tolerance per rule: `relative` (fraction of the baseline value), `absolute`
(metric units), `spread` (k × the baseline's std over repeats), or `max` (a ceiling on the
worst repeat of the current run, regardless of the baseline: failed requests).

With ≥ 3 server launches on both sides the launch-level rule (`gate.launches`) replaces the
tolerance by the rule's `material` threshold (a fraction of the baseline's median launch
value; default the figure's declared one, 2%) and the noise by the larger of
`launch_sigmas` × the launches' spread and one launch's own standard error at the
significance test's bar:

    launch_sigmas = 2.0
    [metrics.output_tok_s_per_gpu]
    direction = "higher"
    relative = 0.05
    material = 0.01
Rule names are metric names of the baseline (`output_tok_s_per_gpu`, `ttft_ms_median`,
`per_position_acceptance_2`, …) or a family: `per_position_acceptance` (every position),
`category_acceptance_length` (AL of each category of a mixed run).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from specbench.common.errors import SpecbenchError
from specbench.common.model import Frozen
from specbench.common.validation import describe_validation_error
from specbench.metrics.declarations import (
    CATEGORY_ACCEPTANCE_LENGTH,
    PER_POSITION_ACCEPTANCE,
    Direction,
    Figure,
    GateDefault,
    figure_of,
    gated,
    stored,
)
from specbench.results.columns import PER_POSITION_PREFIX

#: The launch-level rule's material threshold when a figure declares none (MLPerf's 2%).
DEFAULT_MATERIAL = GateDefault().material

#: Families of metrics a single rule can cover.
PER_POSITION_FAMILY = PER_POSITION_ACCEPTANCE.name
CATEGORY_FAMILY = CATEGORY_ACCEPTANCE_LENGTH.name


class MetricRule(Frozen):
    """How one metric is judged."""

    direction: Direction = Field(description="Which way is better: higher or lower.")
    relative: float | None = Field(
        default=None, ge=0, description="Tolerated worsening as a fraction of the baseline."
    )
    absolute: float | None = Field(
        default=None, ge=0, description="Tolerated worsening in the metric's own units."
    )
    spread: float | None = Field(
        default=None, ge=0, description="Tolerated worsening as k × the baseline's std."
    )
    max: float | None = Field(
        default=None, description="Ceiling on the current run's worst repeat (no baseline)."
    )
    noise: bool = Field(
        default=True,
        description="Also require the change to be significant (or, for results without "
        "stored errors, beyond the repeats' noise band); False: tolerance only.",
    )
    material: float | None = Field(
        default=None,
        ge=0,
        lt=1,
        description="Launch-level rule (≥ 3 launches on both sides): the smallest worsening "
        "of the median launch value that is material, as a fraction of the baseline's; "
        "None: the figure's declared default (2%).",
    )
    enabled: bool = Field(default=True, description="False switches the rule off.")

    @model_validator(mode="after")
    def _one_tolerance(self) -> MetricRule:
        given = [
            name
            for name in ("relative", "absolute", "spread", "max")
            if getattr(self, name) is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of relative, absolute, spread, max"
                + (f" (got {', '.join(given)})" if given else "")
            )
        if self.max is not None and self.direction != "lower":
            raise ValueError('max is a ceiling: use it with direction = "lower"')
        if self.max is not None and self.material is not None:
            raise ValueError("material is for comparisons with the baseline, not a max ceiling")
        return self

    def describe(self) -> str:
        """Short text for tables: `-2%`, `+10%`, `-0.05`, `3σ`, `max 0`."""
        sign = "-" if self.direction == "higher" else "+"
        if self.relative is not None:
            return f"{sign}{self.relative * 100:g}%"
        if self.absolute is not None:
            return f"{sign}{self.absolute:g}"
        if self.spread is not None:
            return f"{sign}{self.spread:g}σ(base)"
        return f"max {self.max:g}"


def _default_rule(figure: Figure) -> MetricRule:
    """The rule declared with the figure (metrics/declarations.py), its direction included."""
    assert figure.gate is not None and figure.direction is not None
    tolerance: dict[str, object] = {}
    if figure.gate.relative is not None:
        tolerance["relative"] = figure.gate.relative
    if figure.gate.max is not None:
        tolerance["max"] = figure.gate.max
    if not figure.gate.noise:
        tolerance["noise"] = False
    return MetricRule(direction=figure.direction, **tolerance)  # type: ignore[arg-type]


def _with_material(name: str, rule: MetricRule) -> MetricRule:
    """`rule` with its material threshold: its own, else its figure's declared default."""
    if rule.material is not None or rule.max is not None:
        return rule
    figure = figure_of(name)
    declared = figure.gate.material if figure is not None and figure.gate is not None else None
    return rule.model_copy(update={"material": DEFAULT_MATERIAL if declared is None else declared})


#: The declared defaults. Order is the order of rows in every report.
DEFAULT_RULES: dict[str, MetricRule] = {figure.name: _default_rule(figure) for figure in gated()}


class GateRules(Frozen):
    """The rules file (`gate.toml`)."""

    significance: float = Field(
        default=0.05,
        ge=0,
        lt=1,
        description="Family-wise false-alarm rate α: each figure × cell with stored errors "
        "on both sides is tested one-sided at α / m (Bonferroni, m = figures tested); "
        "0 switches the test off (tolerance only, or the noise band for older files).",
    )
    power: float = Field(
        default=0.8,
        gt=0,
        lt=1,
        description="Probability at which the printed minimum detectable regression is caught.",
    )
    noise_sigmas: float = Field(
        default=2.0,
        ge=0,
        description="For figures without stored errors (older baselines or results): noise "
        "band = this × the standard error of the difference of the means from the std over "
        "repeats; 0 disables it.",
    )
    launch_sigmas: float = Field(
        default=2.0,
        ge=0,
        description="Launch-level rule (≥ 3 launches on both sides): a worsening is beyond "
        "the noise when it exceeds this × √(σ_b² + σ_c²), σ = 1.4826 × MAD of each side's "
        "launch values, and the launches' own sampling error at the significance test's "
        "bar; 0: the material threshold alone decides.",
    )
    replace_defaults: bool = Field(
        default=False, description="True: only the rules in this file apply."
    )
    metrics: dict[str, MetricRule] = Field(
        default_factory=dict, description="Metric name → rule (replaces that default)."
    )

    @model_validator(mode="after")
    def _known_metrics(self) -> GateRules:
        for name in self.metrics:
            if not is_known_metric(name):
                raise ValueError(
                    f"unknown metric {name!r}; use a summary metric such as "
                    "acceptance_length, output_tok_s_per_gpu, ttft_ms_median, num_failed, "
                    f"{PER_POSITION_PREFIX}<i>, or a family: {PER_POSITION_FAMILY}, "
                    f"{CATEGORY_FAMILY}"
                )
        return self

    def effective(self) -> dict[str, MetricRule]:
        """Enabled rules in report order: defaults first (unless replaced), then the file's;
        each with its material threshold (its own, else its figure's declared default)."""
        merged = {} if self.replace_defaults else dict(DEFAULT_RULES)
        merged.update(self.metrics)
        return {name: _with_material(name, rule) for name, rule in merged.items() if rule.enabled}


def is_known_metric(name: str) -> bool:
    if name in (PER_POSITION_FAMILY, CATEGORY_FAMILY, *stored()):
        return True
    if name.startswith(PER_POSITION_PREFIX):
        return name[len(PER_POSITION_PREFIX) :].isdigit()
    return False


def rules_from_mapping(data: Mapping[str, object], source: str) -> GateRules:
    """Validate a parsed rules table; errors name `source` and the field path."""
    try:
        return GateRules.model_validate(data)
    except ValidationError as error:
        raise SpecbenchError(describe_validation_error(error, GateRules, "", source)) from None


def load_rules(path: Path | None) -> GateRules:
    """The rules of `path`, or the defaults when None."""
    if path is None:
        return GateRules()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecbenchError(f"--rules {path}: no such file") from None
    except tomllib.TOMLDecodeError as error:
        raise SpecbenchError(f"{path}: not valid TOML ({error})") from None
    return rules_from_mapping(data, str(path))
