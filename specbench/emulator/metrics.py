"""The emulator's `/metrics`: the series vLLM 0.32 exposes, built with `prometheus_client`.

Names, help texts, label names (`model_name`, `engine`, then `position` or
`finished_reason`) and the `_total`/`_created` samples are those of vLLM's
`v1/metrics/loggers.py` and `v1/spec_decode/metrics.py`, so a client cannot tell the
exposition apart. One private registry per server: two emulators in one process never
share counters. Spec-decode series exist only when speculation is on, as in vLLM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from specbench.emulator.config import EmulatorConfig

ENGINE_INDEX = "0"
# What vLLM (prometheus_client 0.26 content negotiation) answers a plain scrape.
EXPOSITION_CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
# vLLM's FinishReason strings, in its enum order.
FINISH_REASONS = ("stop", "length", "abort", "error", "repetition")
# Bucket bounds of vLLM 0.32's default histograms (v1/metrics/buckets.py).
# fmt: off
TTFT_BUCKETS_S = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)
E2E_BUCKETS_S = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
    240.0, 480.0, 960.0, 1920.0, 7680.0,
)
ITL_BUCKETS_S = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0,
)
# fmt: on
ITERATION_TOKENS_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)


def request_tokens_buckets(max_model_len: int) -> list[float]:
    """vLLM's 1-2-5 series capped at the context length."""
    bounds: list[float] = []
    exponent = 0
    while True:
        for mantissa in (1, 2, 5):
            value = mantissa * 10**exponent
            if value > max_model_len:
                return bounds
            bounds.append(float(value))
        exponent += 1


@dataclass(frozen=True)
class _Series:
    """Makes series on one registry, labelled with the served model and the engine index."""

    registry: CollectorRegistry
    labels: tuple[str, str]
    labelnames: tuple[str, ...] = ("model_name", "engine")

    def gauge(self, name: str, doc: str) -> Gauge:
        return Gauge(name, doc, self.labelnames, registry=self.registry).labels(*self.labels)

    def counter(self, name: str, doc: str) -> Counter:
        return Counter(name, doc, self.labelnames, registry=self.registry).labels(*self.labels)

    def histogram(self, name: str, doc: str, buckets: Sequence[float]) -> Histogram:
        return Histogram(
            name, doc, self.labelnames, registry=self.registry, buckets=buckets
        ).labels(*self.labels)

    def counters_by(self, name: str, doc: str, label: str, values: Sequence[str]) -> list[Counter]:
        """One counter per value of one more label, in the order of `values`."""
        family = Counter(name, doc, [*self.labelnames, label], registry=self.registry)
        return [family.labels(*self.labels, value) for value in values]


def _total(counter: Counter) -> float:
    """A labelled counter's `_total` sample, read through the collector API."""
    for family in counter.collect():
        for sample in family.samples:
            if sample.name.endswith("_total"):
                return float(sample.value)
    raise ValueError(f"counter {counter!r} has no _total sample")


class EmulatorMetrics:
    """Counters and gauges of one emulated engine, with a text exposition."""

    def __init__(self, config: EmulatorConfig) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        # vLLM serves the default registry, which opens with these process series.
        for collector in (GC_COLLECTOR, PLATFORM_COLLECTOR, PROCESS_COLLECTOR):
            self.registry.register(collector)
        series = _Series(self.registry, (config.model, ENGINE_INDEX))
        self._engine_series(series)
        self._request_histograms(series, config.max_model_len)
        self.speculative = config.speculative
        if config.speculative:
            self._spec_decode_series(series, config.num_speculative_tokens)

    def _engine_series(self, series: _Series) -> None:
        self.num_requests_running = series.gauge(
            "vllm:num_requests_running", "Number of requests in model execution batches."
        )
        self.num_requests_waiting = series.gauge(
            "vllm:num_requests_waiting", "Number of requests waiting to be processed."
        )
        self.kv_cache_usage_perc = series.gauge(
            "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."
        )
        self.num_preemptions = series.counter(
            "vllm:num_preemptions", "Cumulative number of preemption from the engine."
        )
        self.prompt_tokens = series.counter(
            "vllm:prompt_tokens", "Number of prefill tokens processed."
        )
        self.generation_tokens = series.counter(
            "vllm:generation_tokens", "Number of generation tokens processed."
        )
        self.prefix_cache_queries = series.counter(
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
        )
        self.prefix_cache_hits = series.counter(
            "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens."
        )
        success = series.counters_by(
            "vllm:request_success",
            "Count of successfully processed requests.",
            "finished_reason",
            FINISH_REASONS,
        )
        self.request_success = dict(zip(FINISH_REASONS, success, strict=True))

    def _request_histograms(self, series: _Series, max_model_len: int) -> None:
        token_buckets = request_tokens_buckets(max_model_len)
        self.request_prompt_tokens = series.histogram(
            "vllm:request_prompt_tokens", "Number of prefill tokens processed.", token_buckets
        )
        self.request_generation_tokens = series.histogram(
            "vllm:request_generation_tokens",
            "Number of generation tokens processed.",
            token_buckets,
        )
        self.iteration_tokens = series.histogram(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            ITERATION_TOKENS_BUCKETS,
        )
        self.time_to_first_token = series.histogram(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            TTFT_BUCKETS_S,
        )
        self.inter_token_latency = series.histogram(
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            ITL_BUCKETS_S,
        )
        self.e2e_request_latency = series.histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            E2E_BUCKETS_S,
        )

    def _spec_decode_series(self, series: _Series, num_speculative_tokens: int) -> None:
        self.spec_decode_num_drafts = series.counter(
            "vllm:spec_decode_num_drafts", "Number of spec decoding drafts."
        )
        self.spec_decode_num_draft_tokens = series.counter(
            "vllm:spec_decode_num_draft_tokens", "Number of draft tokens."
        )
        self.spec_decode_num_accepted_tokens = series.counter(
            "vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens."
        )
        self.spec_decode_num_accepted_tokens_per_pos = series.counters_by(
            "vllm:spec_decode_num_accepted_tokens_per_pos",
            "Accepted tokens per draft position.",
            "position",
            [str(position) for position in range(num_speculative_tokens)],
        )

    def observe_spec_step(
        self, num_drafts: int, num_draft_tokens: int, accepted_per_position: list[int]
    ) -> None:
        """Add one engine step's verification results (`accepted_per_position[i]`: drafts
        in the step that accepted at least i + 1 tokens)."""
        if not self.speculative:
            return
        self.spec_decode_num_drafts.inc(num_drafts)
        self.spec_decode_num_draft_tokens.inc(num_draft_tokens)
        self.spec_decode_num_accepted_tokens.inc(sum(accepted_per_position))
        for counter, count in zip(
            self.spec_decode_num_accepted_tokens_per_pos, accepted_per_position, strict=True
        ):
            counter.inc(count)

    def token_totals(self) -> tuple[float, float]:
        """Generated and drafted tokens so far: the values behind
        `vllm:generation_tokens_total` and `vllm:spec_decode_num_draft_tokens_total`
        (drafted 0 without speculation), which the GPU exporter's power model reads."""
        generated = _total(self.generation_tokens)
        drafted = _total(self.spec_decode_num_draft_tokens) if self.speculative else 0.0
        return generated, drafted

    def exposition(self) -> bytes:
        """The Prometheus text format of every series."""
        return generate_latest(self.registry)
