"""Model-card figures: pure functions of the table frames that return a matplotlib Figure.

Figures are built on `matplotlib.figure.Figure` directly (no pyplot, no global state, the
Agg canvas on save), sized for a model card (about 8×4.5 in at 150 dpi). Saving is
`save_figure`. Labels are rounded; the ratios annotated come from unrounded values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from specbench.advise.pareto import INTERACTIVITY_COLUMN, ON_FRONTIER, throughput_unit
from specbench.analysis import table_data as D
from specbench.analysis import wording as W
from specbench.data.categories import category_name
from specbench.results.columns import (
    ACCEPTANCE_LENGTH,
    CATEGORY,
    CONCURRENCY,
    CONTEXT_K,
    IS_BASELINE,
    LABEL,
    SPLIT,
    VIEW,
    position_columns,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.ticker import Formatter

SIZE_IN = (8.0, 4.5)
DPI = 150
_COLORS = ("#76b900", "#1f77b4", "#d62728", "#9467bd", "#ff7f0e", "#8c564b")  # speculative first
_BASELINE_COLOR = "#7f7f7f"


def _new(size: tuple[float, float] = SIZE_IN) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    axes.grid(True, which="major", alpha=0.3)
    axes.set_axisbelow(True)
    axes.spines[["top", "right"]].set_visible(False)
    return figure, axes


#: Characters per title line: a longer title wraps instead of running off the figure.
TITLE_WIDTH = 64


def _title(axes: Axes, title: str) -> None:
    """The axes' title, wrapped at word boundaries so no line is wider than the figure."""
    import textwrap

    axes.set_title("\n".join(textwrap.wrap(title, TITLE_WIDTH, break_on_hyphens=False)))


def _log2_axis(axes: Axes, ticks: Sequence[int], labels: Sequence[str] | None = None) -> None:
    from matplotlib.ticker import FixedLocator, NullLocator

    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_locator(FixedLocator(list(ticks)))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.set_xticklabels(list(labels) if labels is not None else [str(t) for t in ticks])
    axes.set_xlim(min(ticks) / 1.4, max(ticks) * 1.4)


#: Interval kinds drawn as error bars: those that hold the between-launch variance (a
#: one-launch interval is on hover only, as the serving table keeps it in a footnote).
_ERROR_BAR_KINDS = ("launches", "calibrated")


def _error_bars(axes: Axes, data: pd.DataFrame, side: str, color: str) -> None:
    """The 95% launch-level interval of each point of `side` (`table_data.interval_columns`)."""
    half, kind = side + D.SUFFIX_CI_HALF, side + D.SUFFIX_CI_KIND
    if half not in data or kind not in data:
        return
    shown = data[data[kind].isin(_ERROR_BAR_KINDS) & data[half].notna()]
    if len(shown):
        bars = axes.errorbar(
            [int(c) for c in shown[CONCURRENCY]],
            [float(v) for v in shown[side]],
            yerr=[float(h) for h in shown[half]],
            fmt="none",
            ecolor=color,
            elinewidth=1.2,
            capsize=4,
        )
        # One id per drawn part (the bars, then each cap): ids are unique on the page.
        _, caps, lines = bars.lines
        for index, artist in enumerate([*lines, *caps]):
            artist.set_gid(f"error-bars-{side}" + (f"-{index}" if index else ""))


def _pair_lines(
    axes: Axes, data: pd.DataFrame, speculative: str, baseline: str
) -> tuple[list[int], list[float], list[float]]:
    """Both configs' lines over concurrency (`data` sorted by it), their launch-level error
    bars, and one invisible, larger marker per point named `point-<row>-<side>`: report.html
    shows the table's row <row> when the pointer is over it. Returns x and both sides."""
    x = [int(c) for c in data[CONCURRENCY]]
    spec = [float(v) for v in data[D.SPECULATIVE]]
    base = [float(v) for v in data[D.BASELINE]]
    axes.plot(x, spec, marker="o", color=_COLORS[0], linewidth=2, label=speculative)
    axes.plot(x, base, marker="s", color=_BASELINE_COLOR, linewidth=2, label=baseline)
    for side, color in ((D.SPECULATIVE, _COLORS[0]), (D.BASELINE, _BASELINE_COLOR)):
        _error_bars(axes, data, side, color)
    for row, (c, s, b) in enumerate(zip(x, spec, base, strict=True)):
        for side, value in (("speculative", s), ("baseline", b)):
            if math.isfinite(value):
                axes.plot(
                    [c], [value], marker="o", markersize=14, alpha=0.0, linestyle="none",
                    gid=f"point-{row}-{side}",
                )  # fmt: skip
    return x, spec, base


def throughput_vs_concurrency(
    sweep: pd.DataFrame, speculative: str, baseline: str, title: str
) -> Figure:
    """Output tok/s/GPU vs concurrency (log2 axis), both configs, speedup at each point.

    `sweep` is `table_data.sweep_data`'s frame: concurrency, speculative, baseline, ratio.
    """
    figure, axes = _new()
    data = sweep.sort_values(CONCURRENCY)
    x, spec, base = _pair_lines(axes, data, speculative, baseline)
    for c, s, b, ratio in zip(x, spec, base, data[D.RATIO], strict=True):
        # The higher point's label goes above it and the lower one's below, so the two never
        # collide, also where speculation is slower than the baseline and the lines cross.
        spec_on_top = not math.isfinite(b) or s >= b
        if math.isfinite(s):
            extra = f"\n{ratio:.2f}{W.TIMES}" if math.isfinite(ratio) else ""
            axes.annotate(
                f"{s:,.0f}{extra}", (c, s), textcoords="offset points",
                xytext=(0, 7) if spec_on_top else (0, -8),
                ha="center", va="bottom" if spec_on_top else "top", fontsize=8,
                color="#333333", fontweight="bold" if extra else "normal",
            )  # fmt: skip
        if math.isfinite(b):
            axes.annotate(
                f"{b:,.0f}", (c, b), textcoords="offset points",
                xytext=(0, -8) if spec_on_top else (0, 7),
                ha="center", va="top" if spec_on_top else "bottom", fontsize=8,
                color=_BASELINE_COLOR,
            )  # fmt: skip
    ticks = sorted(set(x))
    full = [2**i for i in range(8) if 2**i >= min(ticks) and 2**i <= max(ticks)]
    shown = sorted(set(ticks) | set(full))
    # An under-loaded point (fewer conversations than slots) is marked on its tick and said
    # in the corner, as the tables mark it.
    loads = {}
    if D.UNDER_LOADED_CONVERSATIONS in data:
        loads = {
            int(c): int(n)
            for c, n in zip(data[CONCURRENCY], data[D.UNDER_LOADED_CONVERSATIONS], strict=True)
            if math.isfinite(float(n))
        }
    _log2_axis(axes, shown, [W.marked(t, loads.get(t)) for t in shown])
    if loads:
        axes.text(
            0.99, 0.02, f"{W.UNDER_LOADED} under-loaded: fewer conversations than concurrency",
            transform=axes.transAxes, ha="right", va="bottom", fontsize=7, color="#8a4b00",
        )  # fmt: skip
    top = max(v for v in spec + base if math.isfinite(v))
    # Room below zero keeps low baseline labels off the x axis; ticks stay non-negative.
    axes.set_ylim(-0.08 * top, top * 1.25)
    axes.set_yticks([t for t in axes.get_yticks() if 0 <= t <= top * 1.25])
    axes.set_xlabel("Concurrency (requests in flight, log₂ scale)")
    per_server = D.THROUGHPUT_METRIC in data and (data[D.THROUGHPUT_METRIC] == "output_tok_s").any()
    axes.set_ylabel(f"Output throughput per {'server' if per_server else 'GPU'} (tok/s)")
    _title(axes, title)
    axes.legend(loc="upper left", frameon=False)
    return figure


def energy_vs_concurrency(
    energy: pd.DataFrame, speculative: str, baseline: str, title: str
) -> Figure:
    """GPU board energy per output token vs concurrency (log2 axis), both configs, with the
    concurrencies between which speculation crosses the baseline shaded and labelled.

    `energy` is `analysis.energy.energy_data`'s frame: concurrency, speculative, baseline.
    """
    from specbench.analysis.energy import crossover

    figure, axes = _new()
    data = energy.sort_values(CONCURRENCY)
    x, spec, base = _pair_lines(axes, data, speculative, baseline)
    for c, s_value, b_value in zip(x, spec, base, strict=True):
        # The higher point's label above it, the lower one's below: they never collide.
        spec_on_top = not math.isfinite(b_value) or s_value >= b_value
        for value, color, on_top in ((s_value, _COLORS[0], spec_on_top),
                                     (b_value, _BASELINE_COLOR, not spec_on_top)):  # fmt: skip
            if math.isfinite(value):
                axes.annotate(
                    f"{value:.3g}", (c, value), textcoords="offset points",
                    xytext=(0, 6) if on_top else (0, -8), ha="center",
                    va="bottom" if on_top else "top", fontsize=8, color=color,
                )  # fmt: skip
    cross = crossover(data)
    if cross is not None:
        axes.axvspan(cross.below, cross.above, color="#ffdd99", alpha=0.35, gid="crossover")
        axes.text(
            math.sqrt(cross.below * cross.above), 0.97, "crossover",
            transform=axes.get_xaxis_transform(), ha="center", va="top", fontsize=8,
            color="#8a4b00",
        )  # fmt: skip
    ticks = sorted(set(x))
    _log2_axis(axes, ticks)
    finite = [v for v in spec + base if math.isfinite(v)]
    if finite:
        axes.set_ylim(0, max(finite) * 1.2)
    axes.set_xlabel("Concurrency (requests in flight, log₂ scale)")
    axes.set_ylabel("GPU board energy per output token (J)")
    _title(axes, title)
    axes.legend(loc="upper right", frameon=False)
    return figure


def throughput_vs_interactivity(points: pd.DataFrame, title: str, name: str) -> Figure:
    """Output tok/s/GPU against interactivity (tok/s/user), one line per config through its
    concurrencies (each point labelled `c=N`), the Pareto frontier as a dashed step line
    through ringed points.

    `points` is `advise.pareto.pareto_points`' frame for one workload; row i is drawn with an
    invisible, larger marker named `point-<i>-<name>` (`name`: the figure's, so ids stay
    unique on a page of several workloads): report.html shows hover text i.
    """
    figure, axes = _new()
    throughput = str(points[D.THROUGHPUT_METRIC].iloc[0])
    baselines = set(points.loc[points[IS_BASELINE].astype(bool), LABEL])
    speculative = sorted(set(points[LABEL]) - baselines)
    for label, rows in points.groupby(LABEL, sort=True):
        rows = rows.sort_values(CONCURRENCY)
        color = (
            _BASELINE_COLOR
            if label in baselines
            else _COLORS[speculative.index(str(label)) % len(_COLORS)]
        )
        x = [float(v) for v in rows[INTERACTIVITY_COLUMN]]
        y = [float(v) for v in rows[throughput]]
        axes.plot(x, y, marker="o", color=color, linewidth=1.6, markersize=5, label=str(label))
        for c, px, py in zip(rows[CONCURRENCY], x, y, strict=True):
            axes.annotate(
                f"c={int(c)}", (px, py), textcoords="offset points", xytext=(4, 4),
                fontsize=7, color=color,
            )  # fmt: skip
    frontier = points[points[ON_FRONTIER]].sort_values(INTERACTIVITY_COLUMN)
    fx = [float(v) for v in frontier[INTERACTIVITY_COLUMN]]
    fy = [float(v) for v in frontier[throughput]]
    # A step line: from each frontier point, the throughput it guarantees holds until the
    # next point's higher interactivity; what lies under the steps is beaten.
    axes.step(
        fx, fy, where="post", color="#222222", linestyle="--", linewidth=1.2,
        label="Pareto frontier", gid=f"{name}-frontier",
    )  # fmt: skip
    axes.plot(
        fx, fy, marker="o", markersize=11, markerfacecolor="none", markeredgecolor="#222222",
        linestyle="none",
    )  # fmt: skip
    for row, (px, py) in enumerate(
        zip(points[INTERACTIVITY_COLUMN], points[throughput], strict=True)
    ):
        axes.plot(
            [float(px)], [float(py)], marker="o", markersize=14, alpha=0.0, linestyle="none",
            gid=f"point-{row}-{name}",
        )  # fmt: skip
    top = float(points[throughput].max())
    axes.set_ylim(0, top * 1.15 if top > 0 else 1)
    axes.set_xlim(left=0, right=float(points[INTERACTIVITY_COLUMN].max()) * 1.12)
    axes.set_xlabel("Interactivity (tok/s/user = 1000 / median TPOT in ms)")
    unit = throughput_unit(throughput)
    per = "GPU" if unit.endswith("/GPU") else "server"
    axes.set_ylabel(f"Output throughput per {per} ({unit})")
    _title(axes, title)
    axes.legend(loc="best", frameon=False, fontsize=8)
    return figure


def al_by_domain(domain: pd.DataFrame, labels: Sequence[str], title: str) -> Figure:
    """Horizontal AL bars per domain (highest on top), each label's Overall as a line.

    `domain` is `table_data.domain_data`'s frame.
    """
    import numpy as np

    present = [lb for lb in labels if lb in set(domain[LABEL])]
    value = domain.set_index([LABEL, CATEGORY])[ACCEPTANCE_LENGTH]
    names = sorted(set(domain[CATEGORY]) - {D.OVERALL})
    names.sort(key=lambda c: value.get((present[0], c), -math.inf))  # lowest first: bottom
    figure, axes = _new((8.0, max(4.0, 0.32 * len(names) * max(1, len(present)) + 1.6)))
    height = 0.8 / len(present)
    y = np.arange(len(names))
    for index, label in enumerate(present):
        color = _COLORS[index % len(_COLORS)]
        values = [float(value.get((label, c), math.nan)) for c in names]
        # Labels sit inside the bar ends and the Overall line behind the bars: no crossing.
        offset = ((len(present) - 1) / 2 - index) * height  # first label on top
        axes.barh(y + offset, values, height=height * 0.9, color=color, label=label)
        for bar_y, bar_value in zip(y + offset, values, strict=True):
            if math.isfinite(bar_value):
                axes.annotate(
                    f"{bar_value:.2f}", (bar_value, bar_y), textcoords="offset points",
                    xytext=(-4, 0), ha="right", va="center", fontsize=8, color="white",
                    fontweight="bold", zorder=4,
                )  # fmt: skip
        overall = float(value.get((label, D.OVERALL), math.nan))
        if math.isfinite(overall):
            axes.axvline(
                overall, color="#222222" if len(present) == 1 else color, linestyle="--",
                linewidth=1.4, zorder=0.5,
                label=f"{'Overall' if len(present) == 1 else label + ' overall'} {overall:.2f}",
            )  # fmt: skip
    axes.set_yticks(y, [category_name(c) for c in names])
    axes.grid(False, axis="y")
    finite = [v for v in value if math.isfinite(v)]
    axes.set_xlim(0, max(finite) * 1.12 if finite else 1)
    axes.set_xlabel("Acceptance length (tokens per verification step)")
    _title(axes, title)
    # Below the axes, outside the bars: inside, it covered the last bars' value labels.
    handles, labels = axes.get_legend_handles_labels()
    figure.legend(
        handles, labels, loc="outside lower center", ncol=min(len(labels), 4), frameon=False,
        fontsize=8,
    )  # fmt: skip
    return figure


def per_position_acceptance(summary: pd.DataFrame, title: str) -> Figure:
    """Acceptance rate at each draft position, one line per config × dataset.

    `summary` is `table_data.acceptance_summary_data`'s frame.
    """
    figure, axes = _new()
    positions = position_columns(summary)
    xs = list(range(1, len(positions) + 1))
    several_labels = summary[LABEL].nunique() > 1
    several_datasets = summary[VIEW].nunique() > 1
    for index, row in enumerate(summary.to_dict(orient="records")):
        parts = [str(row[LABEL])] if several_labels or not several_datasets else []
        if several_datasets:
            split = row.get(SPLIT)
            parts.append(W.dataset_name(str(row[VIEW]), split if isinstance(split, str) else None))
        axes.plot(
            xs, [float(row[p]) for p in positions], marker="o", linewidth=2,
            color=_COLORS[index % len(_COLORS)], label=" · ".join(parts),
        )  # fmt: skip
    axes.set_xticks(xs, [str(x) for x in xs])
    axes.set_xlim(0.7, len(xs) + 0.3)
    axes.set_ylim(0, 1.02)
    axes.yaxis.set_major_formatter(_percent_formatter())
    axes.set_xlabel("Draft position")
    axes.set_ylabel("Acceptance rate (steps accepting ≥ this many drafts)")
    _title(axes, title)
    axes.legend(loc="best", frameon=False, fontsize=8)
    return figure


def al_vs_context(context: pd.DataFrame, labels: Sequence[str], title: str) -> Figure:
    """AL per throughput split, context length on a log2 axis (1K … 32K).

    `context` is `table_data.context_data`'s frame.
    """
    figure, axes = _new()
    present = [lb for lb in labels if lb in set(context[LABEL])]
    for index, label in enumerate(present):
        rows = context[context[LABEL] == label].sort_values(CONTEXT_K)
        ks = [int(k) for k in rows[CONTEXT_K]]
        als = [float(v) for v in rows[ACCEPTANCE_LENGTH]]
        color = _COLORS[index % len(_COLORS)]
        axes.plot(ks, als, marker="o", linewidth=2, color=color, label=label)
        for k, al in zip(ks, als, strict=True):
            axes.annotate(
                f"{al:.2f}", (k, al), textcoords="offset points", xytext=(0, 7),
                ha="center", fontsize=8, color="#333333",
            )  # fmt: skip
    ticks = sorted({int(k) for k in context[CONTEXT_K]})
    _log2_axis(axes, ticks, [W.context_name(k) for k in ticks])
    top = float(context[ACCEPTANCE_LENGTH].max())
    upper = max(top * 1.15, 1.5)
    # AL is at least 1 (no draft accepted); a margin keeps points at exactly 1 unclipped.
    axes.set_ylim(1.0 - 0.04 * (upper - 1.0), upper)
    axes.set_xlabel("Prompt length (thousands of tokens, log₂ scale)")
    axes.set_ylabel("Acceptance length (tokens per step)")
    _title(axes, title)
    axes.legend(loc="best", frameon=False)
    return figure


def al_by_position(data: pd.DataFrame, title: str) -> Figure:
    """AL against output position (bin midpoints), one line per config × workload.

    `data` is `cuts_tables.al_by_position`'s frame (label, workload, start_token,
    end_token, acceptance_length); bins without steps are gaps. With a single bin a line
    has no slope to show: one bar per config × workload instead, the bin in the x label.
    """
    figure, axes = _new()
    groups = list(data.groupby(["label", "workload"], sort=True))
    names = [
        str(label)
        if len(groups) == 1 or data["workload"].nunique() == 1
        else f"{label} ({workload})"
        for label, workload in (key for key, _ in groups)
    ]
    if data["start_token"].nunique() == 1:
        values = [float(rows["acceptance_length"].astype(float).iloc[0]) for _, rows in groups]
        colors = [_COLORS[i % len(_COLORS)] for i in range(len(groups))]
        bars = axes.bar(names, values, color=colors, width=0.6)
        axes.bar_label(bars, labels=[W.fixed(v, 2) for v in values], padding=3, fontsize=8)
        first = data.iloc[0]
        axes.set_xlabel(
            f"One output-position bin (tokens {int(first['start_token'])}–"
            f"{int(first['end_token'])}): too short an output for a trend"
        )
    else:
        for index, (name, (_, rows)) in enumerate(zip(names, groups, strict=True)):
            rows = rows.sort_values("start_token")
            middle = (rows["start_token"] + rows["end_token"]) / 2
            axes.plot(
                middle, rows["acceptance_length"].astype(float), marker="o",
                color=_COLORS[index % len(_COLORS)], label=name,
            )  # fmt: skip
        axes.set_xlabel("Output position (tokens; bin midpoints)")
        axes.legend(frameon=False, fontsize=8)
    axes.set_ylabel("Acceptance length (tokens per verification step)")
    axes.set_ylim(bottom=1.0)
    _title(axes, title)
    return figure


def thinking_vs_answer(data: pd.DataFrame, title: str) -> Figure:
    """Paired bars per domain: thinking AL (solid) and answer AL (hatched), per config.

    `data` is `cuts_tables.thinking_vs_answer`'s frame; Overall is the last group.
    """
    import numpy as np

    names = [*sorted(set(data["category"]) - {"overall"}), "overall"]
    groups = list(data.groupby(["label", "workload"], sort=True))
    figure, axes = _new((max(8.0, 0.7 * len(names) * max(1, len(groups)) + 2), 4.5))
    x = np.arange(len(names))
    width = 0.8 / (2 * len(groups))
    for index, ((label, workload), rows) in enumerate(groups):
        by_name = rows.set_index("category")
        color = _COLORS[index % len(_COLORS)]
        prefix = str(label) if len(groups) == 1 else f"{label} ({workload})"
        for side, hatch in (("thinking", None), ("answer", "//")):
            offset = (2 * index + (side == "answer") - (2 * len(groups) - 1) / 2) * width
            values = [
                float(by_name[f"{side}_acceptance_length"].get(name, math.nan) or math.nan)
                for name in names
            ]
            axes.bar(
                x + offset, values, width=width * 0.92, color=color if hatch is None else "white",
                edgecolor=color, hatch=hatch, label=f"{prefix} {side}",
            )  # fmt: skip
    axes.set_xticks(x, ["Overall" if n == "overall" else category_name(n) for n in names])
    axes.tick_params(axis="x", labelrotation=30)
    axes.set_ylabel("Acceptance length (tokens per verification step)")
    axes.set_ylim(bottom=1.0)
    _title(axes, title)
    axes.legend(frameon=False, fontsize=8, ncol=2)
    return figure


def _percent_formatter() -> Formatter:
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(xmax=1.0, decimals=0)


def svg_text(figure: Figure, salt: str) -> str:
    """The figure as an inline `<svg>` element: text kept as text, ids salted per figure.

    Text stays text (`svg.fonttype: none`): searchable, read by screen readers and copied
    into a PDF print. The salt keeps two figures' clip-path ids apart on one page; width and
    height become CSS so the figure scales with the page.
    """
    import io
    import re

    from matplotlib import rc_context

    buffer = io.StringIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        figure.savefig(buffer, format="svg", dpi=DPI)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    # Its RDF metadata only names namespaces by URL and the time of drawing: left out.
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.DOTALL)
    # matplotlib's own group ids (figure_1, patch_3, text_12 …) repeat in every figure: on a
    # page of several they are duplicate ids. Nothing refers to them; ours (point-…) stay.
    text = re.sub(
        r' id="(?:figure|axes|patch|line2d|text|xtick|ytick|legend|matplotlib\.axis|'
        r'PolyCollection|LineCollection|PathCollection|QuadMesh|image)_\d+"',
        "",
        text,
    )
    # Ours (hover targets, error bars, the crossover's span) repeat across figures one
    # function draws: a K sweep's report, a throughput figure per pair, had 48 duplicate
    # ids. Each gets the figure's salt unless its name already carries it.
    text = re.sub(
        r' id="((?:point-\d+|error-bars)-[^"]*|crossover)"',
        lambda m: m.group(0) if m.group(1).endswith(salt) else f' id="{m.group(1)}--{salt}"',
        text,
    )
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 role="img"', text, count=1)


def save_figure(figure: Figure, stem: Path, formats: Sequence[str]) -> list[Path]:
    """Write `figure` as `<stem>.<format>` for each of `formats` (png, svg); the paths."""
    written = []
    for fmt in formats:
        path = stem.with_suffix(f".{fmt}")
        # A temporary name, then rename: a full disk leaves no truncated figure behind.
        partial = path.with_name(f".{path.name}.partial")
        try:
            figure.savefig(partial, format=fmt, dpi=DPI)
            partial.replace(path)
        finally:
            partial.unlink(missing_ok=True)
        written.append(path)
    return written
