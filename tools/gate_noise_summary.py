"""Summarise a `gate_noise_experiment.py` output folder per gated figure (docs/ci-gate.md).

    python tools/gate_noise_summary.py OUT

For every pair it re-runs the comparison in-process (the same library call as
`specbench gate`, default rules) and prints, per figure: how many same-seed pairs it
failed, how many lowered candidates it caught, the mean stored SE of the difference and
the standard deviation of z = change / SE_d over the same-seed pairs (about 1 when the
stored errors are right: above 1 means they are too small), and the mean detectable
regression. Gate runs failing overall are counted from outcomes.jsonl.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from specbench.gate.baseline import load_baseline, server_summaries, suite_identity
from specbench.gate.compare import compare
from specbench.gate.rules import GateRules
from specbench.gate.snapshot import snapshot
from specbench.store.manifest import read_manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    outcomes = [json.loads(line) for line in (args.out / "outcomes.jsonl").open()]
    runs = {kind: [o for o in outcomes if o["kind"] == kind] for kind in ("same", "lowered")}
    print(
        f"{args.out}: same-seed gate runs failing {sum(o['exit_code'] == 1 for o in runs['same'])}"
        f"/{len(runs['same'])}; lowered candidates caught "
        f"{sum(o['exit_code'] == 1 for o in runs['lowered'])}/{len(runs['lowered'])}"
    )
    z: dict[str, list[float]] = defaultdict(list)
    se: dict[str, list[float]] = defaultdict(list)
    detectable: dict[str, list[float]] = defaultdict(list)
    failed: dict[str, int] = defaultdict(int)
    caught: dict[str, int] = defaultdict(int)
    change: dict[str, list[float]] = defaultdict(list)
    for outcome in outcomes:
        pair, kind = outcome["pair"], outcome["kind"]
        baseline = load_baseline(args.out / f"p{pair:02d}-baseline.json")
        current = args.out / f"p{pair:02d}-{kind}"
        manifest = read_manifest(current)
        report = compare(
            baseline,
            snapshot(current),
            GateRules(),
            current_suite=suite_identity(manifest),
            current_servers=server_summaries(manifest),
        )
        for row in report.comparisons:
            if row.difference_se is None or row.change is None or row.baseline is None:
                continue
            scale = abs(row.baseline.value) or 1.0
            if kind == "same":
                z[row.metric].append(row.change / row.difference_se)
                se[row.metric].append(row.difference_se / scale)
                if row.detectable is not None:
                    detectable[row.metric].append(row.detectable / scale)
                failed[row.metric] += row.verdict == "regression"
            else:
                caught[row.metric] += row.verdict == "regression"
                change[row.metric].append(row.change / scale)
    header = (
        "| figure | same-seed fails | lowered caught | mean change lowered | "
        "mean SE_d | sd of z (same seed) | mean detectable |"
    )
    print(header)
    print("|---|---:|---:|---:|---:|---:|---:|")
    for metric in z:
        lowered = change.get(metric, [])
        print(
            f"| {metric} | {failed[metric]}/{len(z[metric])} | "
            f"{caught[metric]}/{len(lowered)} | "
            f"{statistics.mean(lowered) * 100:+.1f}% | "
            f"{statistics.mean(se[metric]) * 100:.2f}% | "
            f"{statistics.stdev(z[metric]):.2f} | "
            f"{statistics.mean(detectable[metric]) * 100:.1f}% |"
        )


if __name__ == "__main__":
    main()
