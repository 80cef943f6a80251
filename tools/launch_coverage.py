"""Do a campaign's intervals cover what the other campaigns measure? (issue 39's evidence)

Usage: python tools/launch_coverage.py DIR DIR DIR … [--figures F …] [--csv OUT] [--spread]
           [--against REF …]

Each DIR is one complete campaign of the same suite (e.g. ten runs of
`suites/emulator-card-shape.toml --set workloads.0.precision=0.02`, each into its own
folder). For every point (server config × workload × concurrency) and figure, campaign i's
95% interval is tested against the mean of the other campaigns' values of that figure:

- `launches`: the interval `report/summary_mean.csv` gives (`analysis.intervals`: Student t
  over the point's launch values);
- `one-launch`: the same campaign's first launch alone (its within-launch interval, what a
  campaign of one launch states);
- the speedup (speculative over baseline) of each figure, the same way, where the suite has
  one baseline and one speculative config.

A correct 95% interval of the mean covers the mean of the other n − 1 campaigns less often
than 95%: the difference of the two means has the variance of one mean times 1 + 1/(n − 1),
so with normal errors the expected rate is P(|Z| < 1.96 / √(1 + 1/(n − 1))), 93.6% at
n = 10 (lower again with a t interval on 3 launches, whose width itself varies).

Prints, per figure and in all, covered / tested and the Wilson 95% interval of the rate
(the campaigns' tests are not independent across figures of one campaign: read the interval
as a guide); the between-launch standard deviation against a launch's own standard error;
each campaign's GPU-seconds (manifest `runs[].cost`) and its precision-over-launches record.
`--against REF …` tests each campaign against the mean of other runs instead (e.g. two
complete passes of the suite without a target: does the campaign's interval cover what a
complete pass measures?). `--spread` first lists the first campaign's points (one campaign
is enough: the real-vLLM table of `suites/cpu-demo.toml --set launches=3`).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from specbench.analysis import intervals as I
from specbench.results import frame as F
from specbench.stats.launches import Interval, ratio_interval
from specbench.stats.significance import Z95
from specbench.store.manifest import read_manifest

#: The card's table and figure: throughput per GPU, median E2E and TTFT, and AL.
CARD_FIGURES = (
    "output_tok_s_per_gpu",
    "e2e_ms_median",
    "ttft_ms_median",
    "interactivity_tok_s_per_user",
    "official_acceptance_length",
    "acceptance_length",
)
#: A difference MLPerf calls material (2%): misses beyond it are counted apart.
MATERIAL = 0.02
POINT = ("label", "workload", "concurrency")
#: Per kind ('launches', 'one-launch'): point → figure → its interval.
Campaign = dict[str, dict[tuple, dict[str, Interval]]]


def wilson(covered: int, tested: int) -> tuple[float, float]:
    """The Wilson score 95% interval of a binomial rate."""
    if tested == 0:
        return math.nan, math.nan
    p = covered / tested
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * tested)) / (1 + z2 / tested)
    half = Z95 * math.sqrt(p * (1 - p) / tested + z2 / (4 * tested * tested)) / (1 + z2 / tested)
    return centre - half, centre + half


def intervals(directory: Path, figures: tuple[str, ...]) -> Campaign:
    """A campaign's intervals: over all its launches, and of its first launch alone."""
    frame = F.load_results([directory])
    first = frame[frame["launch"] == frame["launch"].min()]
    found: Campaign = {}
    for kind, rows in (("launches", frame), ("one-launch", first)):
        by_point: dict[tuple, dict[str, Interval]] = {}
        for key, group in rows.groupby(list(POINT), sort=True):
            chosen = {}
            for figure in figures:
                interval = I.figure_interval(group, figure)
                if interval is not None and interval.low is not None:
                    chosen[figure] = interval
            by_point[key] = chosen
        found[kind] = by_point
    return found


def speedups(by_point: dict[tuple, dict[str, Interval]]) -> dict[tuple, dict[str, Interval]]:
    """Speculative over baseline at each (workload, concurrency), per figure."""
    labels = sorted({p[0] for p in by_point})
    baseline = [label for label in labels if "base" in label]
    spec = [label for label in labels if label not in baseline]
    if len(baseline) != 1 or len(spec) != 1:
        return {}
    out: dict[tuple, dict[str, Interval]] = {}
    for (label, workload, concurrency), figures in by_point.items():
        if label != spec[0]:
            continue
        base = by_point.get((baseline[0], workload, concurrency), {})
        ratios = {}
        for figure, interval in figures.items():
            if figure in base:
                ratio = ratio_interval(interval, base[figure])
                if ratio is not None and ratio.low is not None:
                    ratios[figure] = ratio
        out[("speedup", workload, concurrency)] = ratios
    return out


def with_speedups(found: Campaign) -> Campaign:
    return {kind: by_point | speedups(by_point) for kind, by_point in found.items()}


def gpu_seconds(directory: Path) -> float:
    manifest = read_manifest(directory)
    return sum(r.cost.gpu_hours for r in manifest.runs if r.cost) * 3600 if manifest else math.nan


@dataclass(frozen=True)
class Test:
    """Campaign `campaign`'s interval of one figure at one point against the others' mean."""

    campaign: str
    kind: str
    label: str
    workload: str
    concurrency: int
    figure: str
    value: float
    low: float
    high: float
    launches: int
    others_mean: float

    @property
    def covered(self) -> bool:
        return self.low <= self.others_mean <= self.high

    @property
    def material_miss(self) -> bool:
        """Not covered, and the others' mean more than `MATERIAL` away from the value."""
        return not self.covered and abs(self.others_mean / self.value - 1) > MATERIAL


def coverage_rows(
    names: list[str], campaigns: list[Campaign], against: list[Campaign] | None = None
) -> list[Test]:
    """One test per (campaign, kind, point, figure): its bounds against the mean of the
    other campaigns' values, or of the `against` runs' values when given."""
    rows: list[Test] = []
    for i, found in enumerate(campaigns):
        compared = against if against is not None else campaigns[:i] + campaigns[i + 1 :]
        for kind, by_point in found.items():
            for point, by_figure in by_point.items():
                for figure, interval in by_figure.items():
                    others = [
                        c["launches"][point][figure].value
                        for c in compared
                        if figure in c["launches"].get(point, {})
                    ]
                    if not others:
                        continue
                    low, high = interval.low, interval.high
                    if low is None or high is None:
                        continue
                    rows.append(
                        Test(
                            names[i],
                            kind,
                            str(point[0]),
                            str(point[1]),
                            int(point[2]),
                            figure,
                            interval.value,
                            low,
                            high,
                            interval.launches,
                            sum(others) / len(others),
                        )
                    )
    return rows


def print_coverage(rows: list[Test], campaigns: int, against: list[Path] | None) -> None:
    tally: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in rows:
        part = "speedup" if row.label == "speedup" else "value"
        for key in ((row.kind, part, row.figure), (row.kind, part, "all")):
            tally[key][0] += row.covered
            tally[key][1] += 1
            tally[key][2] += row.material_miss
    if against:
        runs = ", ".join(d.name for d in against)
        print(f"{campaigns} campaigns; interval of each against the mean of {runs}")
    else:
        print(f"{campaigns} campaigns; interval of campaign i against the mean of the others")
    print("| kind | figure | covered | rate | Wilson 95% | missed by > 2% |")
    print("|---|---|---|---|---|---|")
    for (kind, part, figure), (covered, tested, material) in sorted(tally.items()):
        low, high = wilson(covered, tested)
        name = f"{figure} ({part})" if part == "speedup" else figure
        print(
            f"| {kind} | {name} | {covered}/{tested} | {covered / tested:.1%} "
            f"| {low:.1%}–{high:.1%} | {material} |"
        )


def print_spread(campaigns: list[Campaign]) -> None:
    print("Between-launch sd against one launch's own standard error (√n · within_launch_se),")
    print("over every point of every campaign (1: launches agree as their own errors say):")
    print("| figure | points | median | p90 | max |")
    print("|---|---|---|---|---|")
    ratios: dict[str, list[float]] = defaultdict(list)
    for found in campaigns:
        for point, by_figure in found["launches"].items():
            for figure, interval in by_figure.items():
                if point[0] == "speedup" or interval.between_launch_sd is None:
                    continue
                if interval.within_launch_se:
                    own = interval.within_launch_se * math.sqrt(interval.launches)
                    ratios[figure].append(interval.between_launch_sd / own)
    for figure, values in sorted(ratios.items()):
        values.sort()
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        print(
            f"| {figure} | {len(values)} | {values[len(values) // 2]:.2f} | {p90:.2f} "
            f"| {values[-1]:.2f} |"
        )


def print_points(campaign: Campaign) -> None:
    """Each point's figures: launch values' spread against a launch's own 95% half-width."""
    print("| point | figure | launches | mean | between-launch sd | one launch's ± (95%) | ratio |")
    print("|---|---|---|---|---|---|---|")
    for point, by_figure in sorted(campaign["launches"].items()):
        for figure, interval in by_figure.items():
            sd, within = interval.between_launch_sd, interval.within_launch_se
            if point[0] == "speedup" or sd is None or not within or not interval.value:
                continue
            own = within * math.sqrt(interval.launches)
            print(
                f"| {point[0]}/c{point[2]} ({point[1]}) | {figure} | {interval.launches} "
                f"| {interval.value:,.4g} | {sd / abs(interval.value):.2%} "
                f"| ±{Z95 * own / abs(interval.value):.2%} | {sd / own:.2f} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", type=Path, nargs="+")
    parser.add_argument("--figures", nargs="+", default=list(CARD_FIGURES))
    parser.add_argument("--csv", type=Path, help="Write one row per test here.")
    parser.add_argument(
        "--spread",
        action="store_true",
        help="Per point and figure: the between-launch sd against a launch's own error.",
    )
    parser.add_argument(
        "--against",
        type=Path,
        nargs="+",
        help="Test each campaign against the mean of these runs (e.g. complete passes).",
    )
    args = parser.parse_args()
    if len(args.dirs) < 2 and not (args.spread or args.against):
        sys.exit("launch_coverage: give at least 2 campaign directories (or --spread, --against)")
    for directory in [*args.dirs, *(args.against or [])]:
        if not (directory / "manifest.json").is_file():
            parser.error(f"{directory}: not a results directory (no manifest.json)")
        if not gpu_seconds(directory) > 0:
            print(
                f"launch_coverage: warning: {directory} has no finished run in its manifest "
                "(still running, or interrupted): its cells so far are used",
                file=sys.stderr,
            )
    figures = tuple(args.figures)
    campaigns = [with_speedups(intervals(d, figures)) for d in args.dirs]
    against = [with_speedups(intervals(d, figures)) for d in args.against or []]
    if args.spread:
        print_points(campaigns[0])
        print()
    rows = coverage_rows([d.name for d in args.dirs], campaigns, against or None)
    if rows:
        print_coverage(rows, len(campaigns), args.against)
        print()
    if args.csv and rows:
        with args.csv.open("w", newline="") as handle:
            extra = ("covered", "material_miss")
            writer = csv.DictWriter(handle, fieldnames=[f.name for f in fields(Test)] + [*extra])
            writer.writeheader()
            writer.writerows(asdict(row) | {k: getattr(row, k) for k in extra} for row in rows)
    print_spread(campaigns)
    print()
    print("| campaign | GPU-s | launches per point | stopped | largest half-width per figure |")
    print("|---|---|---|---|---|")
    for directory in args.dirs:
        print(
            f"| {directory.name} | {gpu_seconds(directory):.1f} | {precision_record(directory)} |"
        )


def precision_record(directory: Path) -> str:
    """The manifest's precision-over-launches record, in three table cells."""
    manifest = read_manifest(directory)
    points = (manifest.precision_launches or []) if manifest else []
    if not points:
        return "– | – | –"
    used = sorted(p.launches_used for p in points)
    stopped: dict[str, int] = defaultdict(int)
    widest: dict[str, float] = defaultdict(float)
    for point in points:
        stopped[point.stopped or "not finished"] += 1
        for figure, width in point.half_widths.items():
            if width is not None:
                widest[figure] = max(widest[figure], width)
    reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(stopped.items()))
    widths = ", ".join(f"{figure} ±{width:.1%}" for figure, width in sorted(widest.items()))
    return f"{used[0]}–{used[-1]} (mean {sum(used) / len(used):.2f}) | {reasons} | {widths}"


if __name__ == "__main__":
    main()
