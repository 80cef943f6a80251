"""Compare a precision-targeted run with a full run of the same suite (issue 19's evidence).

Usage: python tools/compare_precision_runs.py FULL_DIR TARGETED_DIR

Per cell and figure (output tok/s/GPU on the steady-state window, median E2E, median TTFT,
AL): the targeted value against the full run's, the relative difference, and whether it
lies inside the targeted cell's stated precision (its achieved 95% half-width; AL: the
target). Then the GPU-seconds each run spent (manifest `runs[].cost`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from specbench import store
from specbench.store.manifest import read_manifest
from specbench.store.summary import CellSummary


def cells(root: Path) -> dict[tuple[str, str, int], CellSummary]:
    found = {}
    for path in root.glob("*/*/c*/r*/summary.json"):
        s = store.read_summary(path.parent)
        found[(s.label, s.workload, s.concurrency)] = s
    return found


def gpu_seconds(root: Path) -> tuple[float, float, float, float]:
    manifest = read_manifest(root)
    costs = [r.cost for r in manifest.runs if r.cost] if manifest else []
    return (
        sum(c.gpu_hours for c in costs) * 3600,
        sum(c.gpu_hours_measuring for c in costs) * 3600,
        sum(c.gpu_hours_starting for c in costs) * 3600,
        sum(c.gpu_hours_other for c in costs) * 3600,
    )


def main(full_dir: Path, targeted_dir: Path) -> None:
    full, targeted = cells(full_dir), cells(targeted_dir)
    inside = total = inside_target = 0
    print("| cell | used | figure | full | targeted | diff | stated ± | inside |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted(targeted):
        t, f = targeted[key], full.get(key)
        if f is None or t.precision is None:
            continue
        target = t.precision.target or 0.02
        widths = {k: v.relative_half_width for k, v in t.precision.figures.items()}
        figures = [
            (
                "tok/s/GPU",
                t.output_tok_s_per_gpu,
                f.steady_state_output_tok_s_per_gpu,
                widths.get("output_tok_s_per_gpu"),
            ),
            ("E2E p50", t.e2e_ms.median, f.e2e_ms.median, widths.get("e2e_ms_median")),
            ("TTFT p50", t.ttft_ms.median, f.ttft_ms.median, widths.get("ttft_ms_median")),
        ]
        if t.spec_decode and f.spec_decode:
            figures.append(
                ("AL", t.spec_decode.acceptance_length, f.spec_decode.acceptance_length, target)
            )
        for name, value, reference, stated in figures:
            if value is None or not reference or stated is None:
                continue
            diff = value / reference - 1
            ok = abs(diff) <= stated
            total += 1
            inside += ok
            inside_target += abs(diff) <= target
            used = f"{t.precision.conversations_used}/{t.precision.conversations_available}"
            print(
                f"| {key[0]} c={key[2]} | {used} | {name} | {reference:,.2f} | {value:,.2f} | "
                f"{diff:+.2%} | ±{stated:.2%} | {'yes' if ok else 'NO'} |"
            )
    print()
    print(f"inside the stated precision: {inside}/{total} ({inside / max(total, 1):.1%})")
    print(f"inside the target: {inside_target}/{total} ({inside_target / max(total, 1):.1%})")
    for name, root in (("full", full_dir), ("targeted", targeted_dir)):
        all_s, measuring, starting, other = gpu_seconds(root)
        print(
            f"{name}: {all_s:.1f} GPU-s = {measuring:.1f} measuring + {starting:.1f} starting "
            f"+ {other:.1f} other"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
