"""Lossless check and acceptance-length reconciliation (`specbench lossless`).

At temperature 0 speculative decoding must not change the target's output. This package
pairs each speculative cell with the baseline cell run on the same prompts, compares the
saved outputs request by request (`compare`), summarises match rates and how deep
divergences start (`check`), computes the three acceptance-length definitions side by
side (`acceptance`), and writes `lossless.json` and `lossless.md` (`render`). It reads only
the results directory.

Exit codes of the command: 0 when every compared cell reached `--min-match-rate`, 1 when
some cell did not, 2 on bad input or when no pair of outputs could be compared.
"""

from __future__ import annotations

from pathlib import Path

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.lossless.check import LOSSLESS_JSON, LOSSLESS_MD, check_lossless
from specbench.lossless.model import LosslessReport
from specbench.lossless.render import acceptance_section, lossless_markdown, lossless_section

__all__ = [
    "LOSSLESS_JSON",
    "LOSSLESS_MD",
    "LosslessReport",
    "check_lossless",
    "report_section",
    "write_lossless",
]


def write_lossless(
    results_dir: Path,
    *,
    out: Path | None = None,
    baseline: str | None = None,
    speculative: str | None = None,
    min_match_rate: float = 1.0,
) -> tuple[LosslessReport, list[Path]]:
    """Check, then write `lossless.json` and `lossless.md` into `out` (default: results_dir)."""
    report = check_lossless(
        results_dir, baseline=baseline, speculative=speculative, min_match_rate=min_match_rate
    )
    folder = out or results_dir
    paths = [folder / LOSSLESS_JSON, folder / LOSSLESS_MD]
    store.write_atomic(paths[0], report.model_dump_json(indent=2) + "\n")
    store.write_atomic(paths[1], lossless_markdown(report))
    return report, paths


def report_section(
    results_dir: Path, baseline: str | None = None, speculative: str | None = None
) -> str | None:
    """Markdown for `report.md`: the lossless check and the three ALs; None when empty.

    Never raises for a directory the check cannot use: the reason becomes the section.
    A directory without any `requests.jsonl` (summaries only) has no section.
    """
    if not any(results_dir.rglob(store.REQUESTS)):
        return None
    try:
        report = check_lossless(results_dir, baseline=baseline, speculative=speculative)
    except SpecbenchError as error:
        return f"## Lossless check (temperature 0)\n\nNot run on `{results_dir}`: {error}\n"
    if not report.acceptance and not report.cells:
        return None
    return lossless_section(report) + "\n" + acceptance_section(report)
