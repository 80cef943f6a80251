"""The gate's report as JSON (`specbench gate --json FILE`): one record per cell × metric.

For tools that read the verdict rather than show it: every check with its verdict, the
rule that judged it (`rule`: `launches (3 vs 3, median/MAD, material 2%)`, `within-launch`,
…), the values it compared (the medians of launch values on launch-level rows), the
change, the threshold and noise, the test's p and level, and on launch-level rows both
sides' launch values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from specbench.gate.compare import GateReport, MetricComparison
from specbench.gate.display import headline
from specbench.store.files import write_atomic

#: Version of the JSON verdict's format; bump on any incompatible change.
GATE_JSON_VERSION = 1


def _compared(row: MetricComparison, side: str) -> float | None:
    """The value the rule compared: the median launch value on launch-level rows."""
    if row.launches is not None:
        return row.launches.baseline_median if side == "baseline" else row.launches.current_median
    stats = row.baseline if side == "baseline" else row.current
    return stats.value if stats is not None else None


def check_record(row: MetricComparison) -> dict[str, Any]:
    """One check as JSON: what was compared, by which rule, and the verdict."""
    launches = row.launches
    return {
        "cell": row.cell,
        "metric": row.metric,
        "verdict": row.verdict,
        "rule": row.rule or None,
        "decided_by": row.decided_by or None,
        "direction": row.direction or None,
        "tolerance": row.tolerance or None,
        "baseline": _compared(row, "baseline"),
        "current": _compared(row, "current"),
        "change": row.change,
        "relative_change": row.relative_change,
        "allowed": row.allowed,
        "noise": row.noise,
        "p_value": row.p_value,
        "level": row.level,
        "detectable": row.detectable,
        "note": row.note or None,
        "launches": None
        if launches is None
        else {
            "baseline": list(launches.baseline),
            "current": list(launches.current),
            "baseline_sigma": launches.baseline_sigma,
            "current_sigma": launches.current_sigma,
            "sigmas": launches.sigmas,
            "baseline_launch_se": launches.baseline_launch_se,
            "current_launch_se": launches.current_launch_se,
            "sampling_z": launches.sampling_z,
            "material": launches.material,
        },
    }


def report_record(report: GateReport) -> dict[str, Any]:
    """The whole report: headline, exit code, notes, then every check."""
    return {
        "kind": "specbench-gate",
        "schema_version": GATE_JSON_VERSION,
        "suite": report.suite_name,
        "exit_code": report.exit_code,
        "headline": headline(report),
        "notes": list(report.notes),
        "checks": [check_record(row) for row in report.comparisons],
    }


def write_json(report: GateReport, path: Path) -> None:
    data = orjson.dumps(report_record(report), option=orjson.OPT_INDENT_2) + b"\n"
    write_atomic(Path(path), data)
