"""Checks of a measured cell that the run states out loud: figures that may mislead.

Pure functions of a `CellSummary` (or a workload's size), returning one line per problem,
so the orchestrator warns during the run and a report can say the same from saved data.
"""

from __future__ import annotations

from collections.abc import Sequence

from specbench.common.defaults import TOKEN_MISMATCH_TOLERANCE
from specbench.store.summary import CellSummary


def invalid_cell(summary: CellSummary) -> str | None:
    """Why a cell's figures are not of this window's requests on this server, or None.

    The client's Σ output tokens must match the server's Δ vllm:generation_tokens_total
    (within `TOKEN_MISMATCH_TOLERANCE`): more tokens received than generated means the
    counters are not this window's (a restart, another server); more generated than
    received with no failed request means other traffic reached the server in the window.
    Failed requests explain a server ahead of the client, which stays a warning.
    """
    mismatch = summary.generation_tokens_mismatch
    if mismatch is None or abs(mismatch) <= TOKEN_MISMATCH_TOLERANCE:
        return None
    if mismatch < 0 and summary.num_failed:
        return None
    why = (
        "the server's counters are not this window's (restarted, or another server answered)"
        if mismatch > 0
        else "other traffic reached the server during the window"
    )
    return (
        f"client output tokens ({summary.output_tokens}) differ from the server's "
        f"Δ vllm:generation_tokens_total ({summary.server_generation_tokens}) by "
        f"{mismatch:+.1%} (tolerance ±{TOKEN_MISMATCH_TOLERANCE:.0%}): {why}; the cell is invalid"
    )


def cell_warnings(summary: CellSummary) -> list[str]:
    """What a user must know before trusting this cell's figures (empty when nothing)."""
    warnings: list[str] = []
    if summary.prefix_cache_reset is False:
        warnings.append(
            "PREFIX CACHE NOT RESET before the window: TTFT, E2E and tok/s may include "
            f"cache hits from earlier cells ({summary.prefix_cache_reset_detail}); "
            "summary.json prefix_cache_reset = false" + _hit_rate(summary)
        )
    mismatch = summary.generation_tokens_mismatch
    if mismatch is not None and abs(mismatch) > TOKEN_MISMATCH_TOLERANCE:
        warnings.append(
            f"client output tokens ({summary.output_tokens}) differ from the server's "
            f"Δ vllm:generation_tokens_total ({summary.server_generation_tokens}) by "
            f"{mismatch:+.1%} (tolerance ±{TOKEN_MISMATCH_TOLERANCE:.0%}): failed requests "
            "generated tokens the client did not count, or other traffic reached the server"
        )
    if summary.num_failed:
        skipped = summary.num_skipped_turns or 0
        lost = f", {skipped} of them turns skipped after a failed turn" if skipped else ""
        warnings.append(
            f"{summary.num_failed} of {summary.num_requests} requests failed{lost}; "
            "figures cover the successful ones only"
        )
    if summary.server_preemptions:
        warnings.append(
            f"{summary.server_preemptions} preemptions in the window: the server ran short "
            "of KV cache, so latencies include recomputation"
        )
    return warnings


def _hit_rate(summary: CellSummary) -> str:
    rate = summary.prefix_cache_hit_rate
    return "" if rate is None else f"; window prefix-cache hit rate {rate:.1%}"


def concurrency_warning(concurrencies: Sequence[int], num_conversations: int) -> str | None:
    """A line when some concurrency exceeds the conversations: those slots stay idle."""
    over = sorted({c for c in concurrencies if c > num_conversations})
    if not over:
        return None
    levels = ", ".join(map(str, over))
    return (
        f"concurrency {levels} exceeds the {num_conversations} conversations of the workload: "
        f"at most {num_conversations} requests are ever in flight (see achieved_concurrency)"
    )
