"""The acceptance lengths a user meets, computed side by side for one speculative cell.

1. `server_counters` (step-weighted): 1 + Δaccepted / Δdrafts from vLLM's `/metrics`
   counters over the measured window (`summary.json` → `spec_decode`). vLLM's own number.
2. `per_request_pooled` (step-weighted): vLLM's per-request `metrics.speculative_decoding`
   objects summed over the cell's successful requests, 1 + Σaccepted / Σsteps
   (`specbench.metrics.per_request.pool_request_metrics`). The same steps as the
   counters, so the two agree when every request in the window reported its object;
   they differ only by failed requests (in the counters, not in the records) or
   requests without the object.
3. `tokens_per_chunk` (mean over requests): each request's Σ tokens of chunks 2..n /
   (n − 1), the prefill chunk dropped and the last chunk kept, then the plain mean over
   requests (turns) (`specbench.metrics.per_request.mean_chunk_acceptance_length`). An
   older estimate, NOT the official figure: per turn instead of per question, prefill
   chunk dropped, EOS kept.
4. `official` (SPEED-Bench, NVIDIA specdec_bench's definition, the one model cards
   publish): per question Σ tokens / Σ chunks over all its turns (prefill chunk counted,
   a final EOS removed), then the plain mean over questions (`specbench.metrics.official`).
   It counts engine steps without drafts (an n-gram miss) as 1-token steps, weights every
   question equally, and is an estimate when a server merges steps into one chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from specbench.client.record import RequestRecord
from specbench.measure.official_al import cell_official
from specbench.metrics.per_request import mean_chunk_acceptance_length, pool_request_metrics
from specbench.store.summary import SpecDecodeSummary


def pooled_vs_counters(pooled: float | None, counters: float | None) -> float | None:
    """per_request_pooled / server_counters − 1 (0 when the two definitions agree)."""
    if pooled is None or not counters:
        return None
    return pooled / counters - 1.0


def acceptance_lengths(
    spec_decode: SpecDecodeSummary | None, records: Sequence[RequestRecord]
) -> dict[str, Any]:
    """Every definition over one cell (records: its `requests.jsonl`), with what each was
    computed from: the figures of `lossless.model.AcceptanceRow`, by its field names."""
    ok = [r for r in records if r.ok]
    objects = [r.spec_decode for r in ok if r.spec_decode]
    pooled = pool_request_metrics(objects) if objects else None
    with_chunks = [r.chunk_tokens for r in ok if len(r.chunk_tokens) >= 2]
    official = cell_official(records)
    server_counters = spec_decode.acceptance_length if spec_decode else None
    per_request_pooled = pooled.acceptance_length if pooled else None
    return {
        "server_counters_al": server_counters,
        "num_drafts": spec_decode.num_drafts if spec_decode else None,
        "per_request_pooled_al": per_request_pooled,
        "num_spec_steps": pooled.num_spec_steps if pooled else 0,
        "per_request_coverage": len(objects) / len(ok) if ok else None,
        "pooled_vs_counters": pooled_vs_counters(per_request_pooled, server_counters),
        "tokens_per_chunk_al": mean_chunk_acceptance_length(with_chunks),
        "official_al": official.official.overall if official else None,
        "official_merged_chunks": official.merged_chunks if official else None,
        "num_chunk_requests": len(with_chunks),
        "chunk_token_sources": sorted({r.token_count_source for r in ok}),
        "num_requests": len(ok),
    }
