"""`specbench gate` and `specbench baseline save` as library calls (the CLI only renders).

`run_gate` loads the baseline and the rules, aggregates the results directory, compares,
and writes the JUnit XML, the JSON records (`gate.records`), the markdown summary and the
HTML verdict page (the last two rendered by `render.verdict`). It returns the
report; the caller turns `report.exit_code` into the process exit code. Input that cannot
be compared at all (foreign baseline, other schema, another suite) raises SpecbenchError,
after a one-line note in the job summary so the CI page says why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.gate.baseline import load_baseline, server_summaries, suite_identity
from specbench.gate.compare import GateReport, compare
from specbench.gate.display import verdict
from specbench.gate.junit import write_junit
from specbench.gate.records import write_json
from specbench.gate.rules import load_rules
from specbench.gate.snapshot import snapshot
from specbench.render.verdict import verdict_markdown, verdict_page
from specbench.store.files import write_atomic
from specbench.store.manifest import read_manifest

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


@dataclass(frozen=True)
class GateOptions:
    """Everything `specbench gate` was asked to do."""

    results_dir: Path
    baseline: Path
    rules: Path | None = None
    junit: Path | None = None
    summary: Path | None = None
    strict_suite: bool = False
    html: Path | None = None
    json: Path | None = None


def summary_target(options: GateOptions) -> tuple[Path | None, bool]:
    """(path, append): `--summary` is overwritten; `$GITHUB_STEP_SUMMARY` is appended to."""
    if options.summary is not None:
        return options.summary, False
    env = os.environ.get(STEP_SUMMARY_ENV)
    return (Path(env), True) if env else (None, False)


def gate_report(options: GateOptions) -> GateReport:
    """Compare the results with the baseline (no files written)."""
    rules = load_rules(options.rules)
    baseline = load_baseline(options.baseline)
    manifest = read_manifest(options.results_dir)
    return compare(
        baseline,
        snapshot(options.results_dir),
        rules,
        current_suite=suite_identity(manifest),
        current_servers=server_summaries(manifest),
        strict_suite=options.strict_suite,
    )


def run_gate(options: GateOptions) -> GateReport:
    """Compare, then write `--junit` and the summary; bad input raises SpecbenchError."""
    path, append = summary_target(options)
    try:
        report = gate_report(options)
    except SpecbenchError as error:
        if path is not None:
            _write_summary(path, f"### ⚠️ specbench gate: could not compare\n\n{error}\n", append)
        raise
    if options.junit is not None:
        write_junit(report, options.junit)
    if options.json is not None:
        write_json(report, options.json)
    shown = verdict(report)
    if path is not None:
        _write_summary(path, verdict_markdown(shown) + "\n", append)
    if options.html is not None:
        write_atomic(Path(options.html), verdict_page(shown))
    return report


def _write_summary(path: Path, text: str, append: bool) -> None:
    """Write, or append as GitHub's step summary expects, the markdown summary."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as handle:
        handle.write(text)
