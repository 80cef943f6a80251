"""Per-domain speedup from one mixed run (`metrics.speedup`), with the paper's proxy beside it.

For each speculative config and its baseline, each mixed workload both ran and each
concurrency both ran: per category, the measured speedup (mean per-request decode rate,
speculative / baseline, with a 95% bootstrap interval over conversations, both arms
resampled independently, repeats pooled) and the proxy AL_domain · t_ar / t_sd. The step
times (`metrics.speedup.step_time_ms`) pool the decode time of every request over its
steps: one token per step for the baseline, `max(chunks − 1, num_spec_steps)` verify steps
for the speculative config. (Median chunk gaps would not do: a client that falls behind
reads chunks in bursts, and the gaps shrink while the steps do not.) They come from the
throughput-split cells at that concurrency when the results hold them, as the paper
measures them; otherwise from the mixed cells themselves, and the table says so.

A request's decode time is the server's own when it gave one (vLLM's
`--enable-per-request-metrics` `generation_time_ms`, which the launcher asks for), else the
client's E2E − TTFT (`RequestRecord.decode_ms`). A request with neither (one token, or a
whole answer the client read in one socket read without a server timing) is counted in
the table's "Not timed" column, never dropped silently; the footnote says how many of each
arm the server and the client timed. Reads `summary.json` and `requests.jsonl` only.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean

from specbench import store
from specbench.analysis.table import Table
from specbench.analysis.tables import TableUnavailable
from specbench.analysis.wording import marked, under_loaded_note
from specbench.client.record import RequestRecord
from specbench.common.text import fixed
from specbench.data.categories import category_name
from specbench.metrics.speedup import decode_rate_tok_s, proxy_speedup, step_time_ms
from specbench.results.loading import LoadedCell
from specbench.results.selection import Comparison
from specbench.stats.bootstrap import bootstrap_ratio_of_means

OVERALL = "overall"
#: Who timed a request's decode phase ("server", "client"), or that nobody could.
NOT_TIMED = "not_timed"
_TIMERS = ("server", "client", NOT_TIMED)


def _records(cells: Sequence[LoadedCell]) -> list[tuple[int, RequestRecord]] | str:
    """(repeat, record) of every successful request of the cells; or why not."""
    found: list[tuple[int, RequestRecord]] = []
    for cell in cells:
        path = cell.path.parent / store.REQUESTS
        if not path.is_file():
            return f"{path} is missing (decode rates need per-request records)"
        found += [(cell.summary.repeat, r) for r in store.read_records(path) if r.ok]
    return found


@dataclass(frozen=True)
class _Arm:
    """One config's requests at one concurrency: per category (and overall), the decode
    rates per conversation and how many requests each timer timed (or none did)."""

    rates: dict[str, list[list[float]]]
    timed_by: dict[str, Counter[str]]

    def timed(self, name: str) -> int:
        return sum(len(group) for group in self.rates.get(name, []))

    def counts(self, name: str) -> Counter[str]:
        """Requests of the category per timer ("server", "client", NOT_TIMED)."""
        return self.timed_by.get(name, Counter())


def _arm(records: Sequence[tuple[int, RequestRecord]]) -> _Arm:
    groups: dict[str, dict[tuple[int, str], list[float]]] = defaultdict(lambda: defaultdict(list))
    timed_by: dict[str, Counter[str]] = defaultdict(Counter)
    for repeat, record in records:
        decode = record.decode_ms
        timer = decode[1] if decode else NOT_TIMED
        for name in (record.category, OVERALL):
            timed_by[name][timer] += 1
            if decode:
                rate = decode_rate_tok_s(record.output_tokens or 0, decode[0])
                groups[name][(repeat, record.question_id)].append(rate or 0.0)
    rates = {name: list(by_conversation.values()) for name, by_conversation in groups.items()}
    return _Arm(rates, dict(timed_by))


def _steps(record: RequestRecord, speculative: bool) -> int:
    """Decode steps of one request: tokens − 1 without speculation, else verify steps."""
    if not speculative:
        return max(0, (record.output_tokens or 0) - 1)
    drafted = int((record.spec_decode or {}).get("num_spec_steps") or 0)
    return max(len(record.chunk_tokens) - 1, drafted)


def _step_time(records: Sequence[tuple[int, RequestRecord]], speculative: bool) -> float | None:
    """Σ decode time / Σ decode steps over the timed requests."""
    decode_ms = steps = 0.0
    for _, record in records:
        decode = record.decode_ms
        if decode is None:
            continue
        decode_ms += decode[0]
        steps += _steps(record, speculative)
    return step_time_ms(decode_ms, int(steps))


def _acceptance(cells: Sequence[LoadedCell], category: str) -> tuple[float | None, str]:
    """The domain's AL pooled over cells, and its definition."""
    if category == OVERALL:
        counters = [c.summary.spec_decode for c in cells if c.summary.spec_decode]
        drafts = sum(s.num_drafts for s in counters)
        accepted = sum(s.num_accepted_tokens for s in counters)
        return (1 + accepted / drafts if drafts else None), "step_weighted"
    found = [c.summary.per_category.get(category) for c in cells]
    values = [f for f in found if f is not None and f.acceptance_length is not None]
    if not values:
        return None, "n/a"
    if all(f.num_spec_steps for f in values):
        steps = sum(f.num_spec_steps or 0 for f in values)
        extra = sum(((f.acceptance_length or 1) - 1) * (f.num_spec_steps or 0) for f in values)
        return 1 + extra / steps, "step_weighted"
    return mean(f.acceptance_length or math.nan for f in values), "mean_over_requests"


def _of(
    cells: Sequence[LoadedCell],
    label: str,
    workload: str,
    concurrency: int | None = None,
    throughput: bool = False,
) -> list[LoadedCell]:
    """The label's whole-dataset cells of the workload (or of a throughput split)."""
    return [
        c
        for c in cells
        if c.label == label
        and c.summary.category is None
        and (concurrency is None or c.summary.concurrency == concurrency)
        and ("throughput" in c.summary.dataset if throughput else c.summary.workload == workload)
    ]


@dataclass(frozen=True)
class _Point:
    """What one concurrency contributes: the speculative cells, both arms' decode rates
    and timers, and the step times with where they came from."""

    concurrency: int
    spec_cells: list[LoadedCell]
    spec: _Arm
    base: _Arm
    t_ar: float | None
    t_sd: float | None
    timing_source: str
    #: The fewest conversations a cell of this point measured, when below its concurrency.
    under_loaded: int | None = None


def _point(
    cells: Sequence[LoadedCell], comparison: Comparison, workload: str, concurrency: int
) -> _Point:
    """Rates and step times at one concurrency; TableUnavailable when records are missing."""
    spec_label, base_label = comparison.speculative, comparison.baseline
    spec_cells = _of(cells, spec_label, workload, concurrency)
    base_cells = _of(cells, base_label, workload, concurrency)
    spec_records, base_records = _records(spec_cells), _records(base_cells)
    split_spec = _of(cells, spec_label, workload, concurrency, throughput=True)
    split_base = _of(cells, base_label, workload, concurrency, throughput=True)
    if split_spec and split_base:
        timing = (_records(split_base), _records(split_spec))
        timing_source = "the throughput split"
    else:
        timing = (base_records, spec_records)
        timing_source = "this mixed run (no throughput-split cells at this concurrency)"
    for found in (spec_records, base_records, *timing):
        if isinstance(found, str):
            raise TableUnavailable(f"per-domain speedup on {workload}: n/a, {found}")
    assert not isinstance(spec_records, str) and not isinstance(base_records, str)
    assert not isinstance(timing[0], str) and not isinstance(timing[1], str)
    spec, base = _arm(spec_records), _arm(base_records)
    if not spec.timed(OVERALL) or not base.timed(OVERALL):
        raise TableUnavailable(
            f"per-domain speedup on {workload} at c={concurrency}: n/a, no request with a "
            "decode time (the server's generation time, or E2E > TTFT) in both configs "
            f"(not timed: {comparison.speculative} {spec.counts(OVERALL)[NOT_TIMED]}, "
            f"{comparison.baseline} {base.counts(OVERALL)[NOT_TIMED]})"
        )
    measured = [c.summary.num_conversations for c in (*spec_cells, *base_cells)]
    short = [n for n in measured if 0 < n < concurrency]
    return _Point(
        concurrency=concurrency,
        under_loaded=min(short) if short else None,
        spec_cells=spec_cells,
        spec=spec,
        base=base,
        t_ar=_step_time(timing[0], False),
        t_sd=_step_time(timing[1], True),
        timing_source=timing_source,
    )


def _domain(
    point: _Point, name: str, comparison: Comparison, workload: str
) -> tuple[dict[str, object], tuple[str, ...]]:
    """One domain at one concurrency: its data record and its rendered row."""
    spec_rates, base_rates = point.spec.rates.get(name, []), point.base.rates.get(name, [])
    t_ar, t_sd = point.t_ar, point.t_sd
    interval = bootstrap_ratio_of_means(spec_rates, base_rates, seed=0)
    al, definition = _acceptance(point.spec_cells, name)
    proxy = proxy_speedup(al, t_ar, t_sd) if al is not None and t_ar and t_sd and al >= 1 else None
    measured = interval.value if interval else None
    difference = proxy - measured if proxy is not None and measured is not None else None
    spec_mean = mean(v for g in spec_rates for v in g) if spec_rates else None
    base_mean = mean(v for g in base_rates for v in g) if base_rates else None
    spec_by, base_by = point.spec.counts(name), point.base.counts(name)
    record: dict[str, object] = {
        "speculative": comparison.speculative,
        "baseline": comparison.baseline,
        "workload": workload,
        "concurrency": point.concurrency,
        "category": name,
        "baseline_decode_tok_s": base_mean,
        "speculative_decode_tok_s": spec_mean,
        "speedup": measured,
        "speedup_ci_low": interval.low if interval else None,
        "speedup_ci_high": interval.high if interval else None,
        "acceptance_length": al,
        "acceptance_definition": definition,
        "t_ar_ms": t_ar,
        "t_sd_ms": t_sd,
        "step_time_source": point.timing_source,
        "proxy_speedup": proxy,
        "proxy_minus_measured": difference,
        "speculative_requests": point.spec.timed(name),
        "baseline_requests": point.base.timed(name),
        **{f"speculative_{timer}": spec_by[timer] for timer in _TIMERS},
        **{f"baseline_{timer}": base_by[timer] for timer in _TIMERS},
    }
    ci = (
        f"{interval.value:.2f}\u00d7 [{interval.low:.2f}, {interval.high:.2f}]"
        if interval
        else "n/a"
    )
    row = (
        "Overall" if name == OVERALL else category_name(name),
        marked(point.concurrency, point.under_loaded),
        fixed(base_mean, 1),
        fixed(spec_mean, 1),
        ci,
        fixed(al, 2),
        f"{proxy:.2f}\u00d7" if proxy is not None else "n/a",
        f"{difference:+.2f}" if difference is not None else "n/a",
        f"{spec_by[NOT_TIMED]}/{base_by[NOT_TIMED]}",
    )
    return record, row


def _timing_note(point: _Point, comparison: Comparison) -> str:
    """Who timed the requests of each arm at one concurrency."""
    parts = []
    for label, arm in ((comparison.speculative, point.spec), (comparison.baseline, point.base)):
        by = arm.counts(OVERALL)
        parts.append(
            f"{label} {by['server']} by the server, {by['client']} by the client, "
            f"{by[NOT_TIMED]} not timed"
        )
    return f"c={point.concurrency}: decode times of " + "; ".join(parts) + "."


_DEFINITIONS = (
    "Decode rate = output tokens / decode time per request, mean over requests; the decode "
    "time is the server's own (vLLM --enable-per-request-metrics generation_time_ms, first "
    "to last token) when it gave one, else the client's E2E \u2212 TTFT; a request with "
    "neither is counted under Not timed (speculative / baseline) and left out of the rates "
    "and step times. "
    "measured speedup = speculative / baseline mean, 95% percentile bootstrap over "
    "conversations (arms resampled independently, repeats pooled). Proxy (SPEED-Bench "
    "paper, Appendix H) = AL_domain \u00b7 t_ar / t_sd, AL step-weighted (per-request "
    "metrics per domain, counters overall)."
)


def domain_speedup(cells: Sequence[LoadedCell], comparison: Comparison, workload: str) -> Table:
    """The per-domain speedup table of one comparison on one mixed workload."""
    import pandas as pd

    spec_label, base_label = comparison.speculative, comparison.baseline
    concurrencies = sorted(
        {c.summary.concurrency for c in _of(cells, spec_label, workload)}
        & {c.summary.concurrency for c in _of(cells, base_label, workload)}
    )
    if not concurrencies:
        raise TableUnavailable(
            f"per-domain speedup {spec_label} vs {base_label} on {workload}: n/a, not run "
            "mixed by both"
        )
    records: list[dict[str, object]] = []
    rows: list[tuple[str, ...]] = []
    notes = [_DEFINITIONS]
    for concurrency in concurrencies:
        point = _point(cells, comparison, workload, concurrency)
        notes.append(
            f"c={concurrency}: t_ar {fixed(point.t_ar, 3)} ms per baseline step, t_sd "
            f"{fixed(point.t_sd, 3)} ms per speculative verify step, from {point.timing_source}."
        )
        notes.append(_timing_note(point, comparison))
        if point.under_loaded is not None:
            notes.append(under_loaded_note(concurrency, point.under_loaded))
        names = [*sorted(set(point.spec.timed_by) & set(point.base.timed_by) - {OVERALL}), OVERALL]
        for name in names:
            record, row = _domain(point, name, comparison, workload)
            records.append(record)
            rows.append(row)
    return Table(
        name=f"domain_speedup_{spec_label}_vs_{base_label}_{workload}".replace("/", "_"),
        title=f"Per-domain speedup, {spec_label} vs {base_label} ({workload})",
        columns=(
            "Domain",
            "Concurrency",
            f"{base_label} decode tok/s",
            f"{spec_label} decode tok/s",
            "Speedup [95% CI]",
            "AL",
            "Proxy",
            "Proxy \u2212 measured",
            # The timed counts are in each concurrency's footnote: one more column would not
            # fit an A4 print of report.html.
            "Not timed (spec/base)",
        ),
        rows=tuple(rows),
        data=pd.DataFrame.from_records(records),
        bold_rows=frozenset(i for i, row in enumerate(rows) if row[0] == "Overall"),
        footnotes=tuple(notes),
    )


def mixed_workloads(cells: Sequence[LoadedCell], comparison: Comparison) -> list[str]:
    """Workloads both labels ran mixed (all categories in one cell)."""
    found: dict[str, set[str]] = defaultdict(set)
    for cell in cells:
        if cell.summary.category is None and "throughput" not in cell.summary.dataset:
            found[cell.summary.workload].add(cell.label)
    pair = {comparison.speculative, comparison.baseline}
    return sorted(w for w, labels in found.items() if pair <= labels)
