"""The emulator's `/metrics`: the series vLLM 0.32 exposes, built with `prometheus_client`.

Names, help texts, label names (`model_name`, `engine`, then `position` or
`finished_reason`) and the `_total`/`_created` samples are those of vLLM's
`v1/metrics/loggers.py` and `v1/spec_decode/metrics.py`, so a client cannot tell the
exposition apart. One private registry per server: two emulators in one process never
share counters. Spec-decode series exist only when speculation is on, as in vLLM.
"""

from __future__ import annotations

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


class EmulatorMetrics:
    """Counters and gauges of one emulated engine, with a text exposition."""

    def __init__(self, config: EmulatorConfig) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        # vLLM serves the default registry, which opens with these process series.
        for collector in (GC_COLLECTOR, PLATFORM_COLLECTOR, PROCESS_COLLECTOR):
            self.registry.register(collector)
        labelnames = ["model_name", "engine"]
        labels = (config.model, ENGINE_INDEX)
        registry = self.registry

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(name, doc, labelnames, registry=registry).labels(*labels)

        def counter(name: str, doc: str) -> Counter:
            return Counter(name, doc, labelnames, registry=registry).labels(*labels)

        def histogram(name: str, doc: str, buckets: tuple[float, ...] | list[float]) -> Histogram:
            return Histogram(name, doc, labelnames, registry=registry, buckets=buckets).labels(
                *labels
            )

        self.num_requests_running = gauge(
            "vllm:num_requests_running", "Number of requests in model execution batches."
        )
        self.num_requests_waiting = gauge(
            "vllm:num_requests_waiting", "Number of requests waiting to be processed."
        )
        self.kv_cache_usage_perc = gauge(
            "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."
        )
        self.num_preemptions = counter(
            "vllm:num_preemptions", "Cumulative number of preemption from the engine."
        )
        self.prompt_tokens = counter("vllm:prompt_tokens", "Number of prefill tokens processed.")
        self.generation_tokens = counter(
            "vllm:generation_tokens", "Number of generation tokens processed."
        )
        self.prefix_cache_queries = counter(
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
        )
        self.prefix_cache_hits = counter(
            "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens."
        )
        success = Counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            [*labelnames, "finished_reason"],
            registry=registry,
        )
        self.request_success = {
            reason: success.labels(*labels, reason) for reason in FINISH_REASONS
        }

        token_buckets = request_tokens_buckets(config.max_model_len)
        self.request_prompt_tokens = histogram(
            "vllm:request_prompt_tokens", "Number of prefill tokens processed.", token_buckets
        )
        self.request_generation_tokens = histogram(
            "vllm:request_generation_tokens",
            "Number of generation tokens processed.",
            token_buckets,
        )
        self.iteration_tokens = histogram(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            ITERATION_TOKENS_BUCKETS,
        )
        self.time_to_first_token = histogram(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            TTFT_BUCKETS_S,
        )
        self.inter_token_latency = histogram(
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            ITL_BUCKETS_S,
        )
        self.e2e_request_latency = histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            E2E_BUCKETS_S,
        )

        self.speculative = config.speculative
        if config.speculative:
            self.spec_decode_num_drafts = counter(
                "vllm:spec_decode_num_drafts", "Number of spec decoding drafts."
            )
            self.spec_decode_num_draft_tokens = counter(
                "vllm:spec_decode_num_draft_tokens", "Number of draft tokens."
            )
            self.spec_decode_num_accepted_tokens = counter(
                "vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens."
            )
            per_position = Counter(
                "vllm:spec_decode_num_accepted_tokens_per_pos",
                "Accepted tokens per draft position.",
                [*labelnames, "position"],
                registry=registry,
            )
            self.spec_decode_num_accepted_tokens_per_pos = [
                per_position.labels(*labels, str(position))
                for position in range(config.num_speculative_tokens)
            ]

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

    def exposition(self) -> bytes:
        """The Prometheus text format of every series."""
        return generate_latest(self.registry)
