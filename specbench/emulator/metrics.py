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
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from specbench.emulator.config import EmulatorConfig

ENGINE_INDEX = "0"
# What vLLM (prometheus_client 0.26 content negotiation) answers a plain scrape.
EXPOSITION_CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
# vLLM's FinishReason strings, in its enum order.
FINISH_REASONS = ("stop", "length", "abort", "error", "repetition")


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

        self.num_requests_running = Gauge(
            "vllm:num_requests_running",
            "Number of requests in model execution batches.",
            labelnames,
            registry=registry,
        ).labels(*labels)
        self.num_requests_waiting = Gauge(
            "vllm:num_requests_waiting",
            "Number of requests waiting to be processed.",
            labelnames,
            registry=registry,
        ).labels(*labels)
        self.kv_cache_usage_perc = Gauge(
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            labelnames,
            registry=registry,
        ).labels(*labels)
        self.num_preemptions = Counter(
            "vllm:num_preemptions",
            "Cumulative number of preemption from the engine.",
            labelnames,
            registry=registry,
        ).labels(*labels)
        self.prompt_tokens = Counter(
            "vllm:prompt_tokens",
            "Number of prefill tokens processed.",
            labelnames,
            registry=registry,
        ).labels(*labels)
        self.generation_tokens = Counter(
            "vllm:generation_tokens",
            "Number of generation tokens processed.",
            labelnames,
            registry=registry,
        ).labels(*labels)
        success = Counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            [*labelnames, "finished_reason"],
            registry=registry,
        )
        self.request_success = {
            reason: success.labels(*labels, reason) for reason in FINISH_REASONS
        }

        self.speculative = config.speculative
        if config.speculative:
            self.spec_decode_num_drafts = Counter(
                "vllm:spec_decode_num_drafts",
                "Number of spec decoding drafts.",
                labelnames,
                registry=registry,
            ).labels(*labels)
            self.spec_decode_num_draft_tokens = Counter(
                "vllm:spec_decode_num_draft_tokens",
                "Number of draft tokens.",
                labelnames,
                registry=registry,
            ).labels(*labels)
            self.spec_decode_num_accepted_tokens = Counter(
                "vllm:spec_decode_num_accepted_tokens",
                "Number of accepted tokens.",
                labelnames,
                registry=registry,
            ).labels(*labels)
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
