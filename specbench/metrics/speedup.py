"""Speedups: speculative throughput over the baseline's, and per domain from one mixed run.

- throughput speedup (higher is better): speculative output tok/s / baseline output tok/s of
  the matching cells, per GPU when every side knows its GPU count, else per server on every
  side (`compare_per_gpu`: a comparison never divides one side by a guessed GPU count).
  The run's closing table and the report's sweep table both follow this rule.
- decode rate of one request (higher is better): output tokens / decode time, tokens per
  second of its decode phase (the first token is in the numerator and its time is not, the
  same for both arms, so the bias cancels in the ratio). The decode time is the server's
  own (vLLM's `generation_time_ms`, first to last token) when it gives one, else the
  client's E2E − TTFT (`RequestRecord.decode_ms`); a request with neither is not timed.
- measured speedup of a domain (higher is better): mean decode rate of its speculative
  requests / mean decode rate of its baseline requests, at one concurrency.
- proxy (SPEED-Bench paper, Appendix H; higher is better): speedup ≈ AL_domain · t_ar / t_sd,
  where t_ar is the time of one autoregressive step (one token) and t_sd the time of one
  speculative verify step, both measured on the throughput split at the same concurrency;
  AL_domain is the domain's step-weighted acceptance length.
- step time (lower is better): Σ decode time / Σ decode steps over the timed requests, the
  mean time one request waits per engine step of its decode phase.
"""

from __future__ import annotations

import math


def compare_per_gpu(*per_gpu_known: bool) -> bool:
    """True when every side of a comparison knows its GPU count (compare tok/s per GPU);
    False: compare per server on every side."""
    return all(per_gpu_known)


def throughput_speedup(speculative: float | None, baseline: float | None) -> float | None:
    """speculative / baseline throughput; None when either is unknown (None, NaN) or the
    baseline is 0."""
    if speculative is None or baseline is None or math.isnan(speculative):
        return None
    if math.isnan(baseline) or baseline == 0:
        return None
    return speculative / baseline


def decode_rate_tok_s(output_tokens: int, decode_ms: float) -> float | None:
    """output_tokens / decode time in tokens per second; None when the decode took no time."""
    if output_tokens < 0:
        raise ValueError(f"output_tokens {output_tokens} is negative")
    if decode_ms <= 0:
        return None
    return output_tokens / (decode_ms / 1000.0)


def proxy_speedup(acceptance_length: float, t_ar_ms: float, t_sd_ms: float) -> float:
    """AL · t_ar / t_sd (paper's Appendix H proxy); step times in the same unit."""
    if acceptance_length < 1:
        raise ValueError(f"acceptance length {acceptance_length} is below 1")
    if t_ar_ms <= 0 or t_sd_ms <= 0:
        raise ValueError(f"step times must be positive (t_ar {t_ar_ms}, t_sd {t_sd_ms})")
    return acceptance_length * t_ar_ms / t_sd_ms


def step_time_ms(decode_ms: float, steps: int) -> float | None:
    """Σ decode time / Σ decode steps (ms per step); None without steps."""
    if decode_ms < 0 or steps < 0:
        raise ValueError(f"negative decode time {decode_ms} or steps {steps}")
    return decode_ms / steps if steps else None
