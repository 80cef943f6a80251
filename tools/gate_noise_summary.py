"""Summarise a `gate_noise_experiment.py` output folder per gated figure (docs/ci-gate.md).

    python tools/gate_noise_summary.py OUT

For every pair it re-runs the comparison in-process (the same library call as
`specbench gate`, default rules) and prints, per figure: how many same-seed pairs it
failed, how many lowered candidates it caught, the mean stored SE of the difference and
the standard deviation of z = change / SE_d over the same-seed pairs (about 1 when the
stored errors are right: above 1 means they are too small), and the mean detectable
regression. Each figure names the rule that judged it (`launches` where both sides have
≥ 3 launches: no test, so those columns read –). Gate runs failing overall are counted
twice: as they ran (outcomes.jsonl) and judged again by this checkout's rules.
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
    tested: dict[str, int] = defaultdict(int)
    rule: dict[str, set[str]] = defaultdict(set)
    caught: dict[str, int] = defaultdict(int)
    change: dict[str, list[float]] = defaultdict(list)
    rejudged: dict[str, int] = defaultdict(int)
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
        rejudged[kind] += report.exit_code == 1
        for row in report.comparisons:
            if row.change is None or row.baseline is None or not row.decided_by:
                continue
            scale = abs(row.baseline.value) or 1.0
            rule[row.metric].add(row.decided_by)
            if kind == "same":
                tested[row.metric] += 1
                failed[row.metric] += row.verdict == "regression"
                if row.difference_se is not None:
                    z[row.metric].append(row.change / row.difference_se)
                    se[row.metric].append(row.difference_se / scale)
                if row.detectable is not None:
                    detectable[row.metric].append(row.detectable / scale)
            else:
                caught[row.metric] += row.verdict == "regression"
                change[row.metric].append(row.change / scale)
    print(
        f"judged again by this checkout: same-seed gate runs failing {rejudged['same']}"
        f"/{len(runs['same'])}; lowered candidates caught {rejudged['lowered']}"
        f"/{len(runs['lowered'])}"
    )
    header = (
        "| figure | rule | same-seed fails | lowered caught | mean change lowered | "
        "mean SE_d | sd of z (same seed) | mean detectable |"
    )
    print(header)
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for metric in tested:
        lowered = change.get(metric, [])
        sd_z = f"{statistics.stdev(z[metric]):.2f}" if len(z[metric]) > 1 else "–"
        cells = (
            metric,
            ", ".join(sorted(rule[metric])),
            f"{failed[metric]}/{tested[metric]}",
            f"{caught[metric]}/{len(lowered)}",
            percent(mean_or_none(lowered), "+.1f"),
            percent(mean_or_none(se[metric]), ".2f"),
            sd_z,
            percent(mean_or_none(detectable[metric]), ".1f"),
        )
        print("| " + " | ".join(cells) + " |")


def mean_or_none(values: list[float]) -> float | None:
    return statistics.mean(values) if values else None


def percent(value: float | None, spec: str) -> str:
    """A fraction as a percentage (`spec` its format), or – when there is none."""
    return "–" if value is None else f"{value * 100:{spec}}%"


if __name__ == "__main__":
    main()
