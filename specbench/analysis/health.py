"""The cell-health table: the side figures that decide whether a cell's numbers can be trusted.

One row per measured cell: requests and failures (turns skipped after a failed turn
included), preemptions, the load the window really carried (achieved concurrency against
the nominal one), whether the prefix cache was verifiably reset and the window's hit rate,
and the client's output-token count checked against the server's. Results written before
specbench recorded a figure show `n/a` and a footnote says why; a figure the server could
not give (no counter) says so too. Read only from the tidy frame (`results.frame`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specbench.analysis import wording as W
from specbench.analysis.table import Table
from specbench.common.defaults import TOKEN_MISMATCH_TOLERANCE
from specbench.results.columns import (
    CONCURRENCY,
    LABEL,
    NUM_CONVERSATIONS,
    NUM_FAILED,
    NUM_REQUESTS,
    REPEAT,
    VIEW,
)

if TYPE_CHECKING:
    import pandas as pd

#: Summary fields this table reads beyond the schema-2 core (absent from older results).
NUM_SKIPPED_TURNS = "num_skipped_turns"
ACHIEVED_CONCURRENCY = "achieved_concurrency"
PREFIX_CACHE_RESET = "prefix_cache_reset"
PREFIX_CACHE_HIT_RATE = "prefix_cache_hit_rate"
GENERATION_TOKENS_MISMATCH = "generation_tokens_mismatch"
SERVER_PREEMPTIONS = "server_preemptions"
SERVER_GENERATION_TOKENS = "server_generation_tokens"
SERVER_PREFIX_CACHE_QUERIES = "server_prefix_cache_queries"

OLDER = "n/a¹"
NO_COUNTER = "n/a²"
OLDER_NOTE = (
    "¹ n/a: not recorded: these cells were written by a specbench from before this figure "
    "existed (their summary.json has no such field); measure them again to get it."
)
NO_COUNTER_NOTE = "² n/a: the server exposes no such counter on /metrics (not vLLM V1?)."


def _value(row: dict[str, Any], column: str) -> Any:
    """The row's value, None for a missing one (None, NaN or pandas' NA)."""
    import pandas as pd

    value = row.get(column)
    return None if value is None or pd.isna(value) else value


def _reset_text(row: dict[str, Any], older: bool) -> str:
    reset = _value(row, PREFIX_CACHE_RESET)
    if reset is None:
        return OLDER if older else "not attempted"
    return "yes" if bool(reset) else "**NO**"


def _hit_rate_text(row: dict[str, Any], older: bool) -> str:
    rate = _value(row, PREFIX_CACHE_HIT_RATE)
    if rate is not None:
        return W.percent(float(rate), 1)
    if older:
        return OLDER
    return NO_COUNTER if _value(row, SERVER_PREFIX_CACHE_QUERIES) is None else "—"


def _tokens_text(row: dict[str, Any], older: bool) -> str:
    mismatch = _value(row, GENERATION_TOKENS_MISMATCH)
    if mismatch is not None:
        text = f"{float(mismatch) * 100:+.2f}%"
        return f"**{text}**" if abs(float(mismatch)) > TOKEN_MISMATCH_TOLERANCE else text
    if _value(row, SERVER_GENERATION_TOKENS) is None:
        return NO_COUNTER
    return OLDER if older else "—"


def _under_loaded(row: dict[str, Any]) -> int | None:
    """The conversations of a cell that measured fewer than its concurrency, else None."""
    conversations = _value(row, NUM_CONVERSATIONS)
    if conversations is None or not 0 < int(conversations) < int(row[CONCURRENCY]):
        return None
    return int(conversations)


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    """One cell's display row."""
    # Every new summary has num_skipped_turns (0 or more): its absence marks older results.
    older = _value(row, NUM_SKIPPED_TURNS) is None
    failed = int(row[NUM_FAILED])
    skipped = _value(row, NUM_SKIPPED_TURNS)
    failed_text = str(failed) + (f" ({int(skipped)} skipped)" if skipped else "")
    preemptions = _value(row, SERVER_PREEMPTIONS)
    achieved = _value(row, ACHIEVED_CONCURRENCY)
    return (
        str(row[LABEL]),
        str(row[VIEW]),
        W.marked(int(row[CONCURRENCY]), _under_loaded(row)),
        str(int(row[REPEAT])),
        str(int(row[NUM_REQUESTS])),
        f"**{failed_text}**" if failed else failed_text,
        str(int(preemptions)) if preemptions is not None else (OLDER if older else NO_COUNTER),
        W.number(float(achieved), 1) if achieved is not None else OLDER,
        _reset_text(row, older),
        _hit_rate_text(row, older),
        _tokens_text(row, older),
    )


def _notes(shown: set[str]) -> tuple[str, ...]:
    """The table's footnotes; the n/a notes only when a cell shows that n/a."""
    notes = [
        "Failed: requests that ended with an error, turns never sent because an earlier "
        "turn of their conversation failed included (skipped). Preemptions: Δ "
        "vllm:num_preemptions_total (non-zero: KV cache ran short). In flight: achieved "
        "concurrency, Σ request time / window time, against the nominal concurrency c.",
        "Cache reset: the server confirmed the prefix-cache reset before the window; **NO** "
        "means it refused (the cell may have measured a warm cache). Hit rate: Δ "
        "prefix_cache_hits / Δ prefix_cache_queries over the window (prompt tokens).",
        "Tokens vs server: (client Σ output tokens − Δ vllm:generation_tokens_total) / "
        f"server; bold beyond ±{TOKEN_MISMATCH_TOLERANCE:.0%}.",
    ]
    if OLDER in shown:
        notes.append(OLDER_NOTE)
    if NO_COUNTER in shown:
        notes.append(NO_COUNTER_NOTE)
    return tuple(notes)


def cell_health(frame: pd.DataFrame) -> Table:
    """One row per cell: failures, preemptions, achieved load, cache reset, token check."""
    columns = [
        LABEL,
        VIEW,
        CONCURRENCY,
        REPEAT,
        NUM_REQUESTS,
        NUM_FAILED,
        NUM_SKIPPED_TURNS,
        SERVER_PREEMPTIONS,
        ACHIEVED_CONCURRENCY,
        NUM_CONVERSATIONS,
        PREFIX_CACHE_RESET,
        PREFIX_CACHE_HIT_RATE,
        GENERATION_TOKENS_MISMATCH,
        SERVER_GENERATION_TOKENS,
        SERVER_PREFIX_CACHE_QUERIES,
    ]
    data = frame.reindex(columns=columns).sort_values([LABEL, VIEW, CONCURRENCY, REPEAT])
    data = data.reset_index(drop=True)
    rows = [_cells({str(key): value for key, value in r.items()}) for r in data.to_dict("records")]
    records = data.to_dict("records")
    loads = {
        (int(r[CONCURRENCY]), n)
        for r in records
        if (n := _under_loaded({str(k): v for k, v in r.items()})) is not None
    }
    return Table(
        name="cell_health",
        title="Cell health: failures, preemptions, load, prefix cache, token check",
        columns=(
            "Config",
            "Dataset",
            "c",
            "Repeat",
            "Requests",
            "Failed",
            "Preemptions",
            "In flight",
            "Cache reset",
            "Hit rate",
            "Tokens vs server",
        ),
        rows=tuple(rows),
        data=data,
        align=("left", "left", *(("right",) * 9)),
        footnotes=_notes({cell for row in rows for cell in row})
        + tuple(W.under_loaded_note(c, n) for c, n in sorted(loads)),
    )
