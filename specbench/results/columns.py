"""Column names of the analysis frames, as constants, and parsing of split names.

A figure's column is its declared name (`metrics/declarations.py`); the rest are identity,
counters and bookkeeping.

Every frame built by `specbench.results.frame` uses these names; code that reads a frame
(tables, plots, the regression gate) refers to them through these constants.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from specbench.metrics import declarations as figures

if TYPE_CHECKING:
    import pandas as pd

# -- identity columns --
RESULTS_DIR = "results_dir"
LABEL = "label"
SERVER_LABEL = "server_label"
IS_BASELINE = "is_baseline"
DATASET = "dataset"
#: The workload key: the results folder of the cell (`store.layout`).
WORKLOAD = "workload"
#: The dataset selection (dataset + categories or tiers) and whether it is the whole dataset.
SELECTION = "selection"
FULL_SELECTION = "full_selection"
#: Comparable workload: the dataset and every measured field, whatever the selection. Shown
#: as the dataset spec, with the differing fields appended when several share a dataset.
GROUP = "group"
#: One selection of a group (the unit of serving and per-dataset tables).
VIEW = "view"
SPLIT = "split"
CONTEXT_K = "context_k"
CATEGORY = "category"
CONCURRENCY = "concurrency"
REPEAT = "repeat"
#: The server launch (fresh start) that measured the cell, 0-based; 0 before launches.
LAUNCH = "launch"
CELL_DIR = "cell_dir"
SCHEMA = "schema_version"

# -- serving metrics (summary field names, declared in metrics/declarations.py) --
GPUS = "gpus"
NUM_REQUESTS = figures.NUM_REQUESTS.name
NUM_FAILED = figures.NUM_FAILED.name
NUM_SUCCEEDED = "num_succeeded"
DURATION_S = figures.DURATION_S.name
INPUT_TOKENS = figures.INPUT_TOKENS.name
OUTPUT_TOKENS = figures.OUTPUT_TOKENS.name
OUTPUT_TOK_S = figures.OUTPUT_TOK_S.name
OUTPUT_TOK_S_PER_GPU = figures.OUTPUT_TOK_S_PER_GPU.name
REQUEST_PER_S = figures.REQUEST_PER_S.name
SERVER_GENERATION_TOKENS = "server_generation_tokens"
#: Time-weighted mean of vllm:num_requests_running over the window (summary field).
RUNNING_BATCH_MEAN = "running_batch_mean"
RUNNING_BATCH_SAMPLES = "running_batch_samples"
#: K → verify steps, as JSON text (`detailed` per-request metrics only).
PER_STEP_DRAFTED_COUNTS = "per_step_drafted_counts"
# -- GPU board energy (summary `energy`, flattened; NaN/None where not measured) --
ENERGY_JOULES = figures.ENERGY_JOULES.name
JOULES_PER_OUTPUT_TOKEN = figures.JOULES_PER_OUTPUT_TOKEN.name
OUTPUT_TOKENS_PER_JOULE = figures.OUTPUT_TOKENS_PER_JOULE.name
MEAN_POWER_W_PER_GPU = figures.MEAN_POWER_W_PER_GPU.name
ENERGY_VALID = "energy_valid"
ENERGY_REASON = "energy_reason"
ENERGY_SOURCE = "energy_source"
ENERGY_DETAIL = "energy_detail"
DISTRIBUTIONS = figures.distributions()
DISTRIBUTION_STATS = (*figures.STATISTICS, "count")
TTFT_MS_MEDIAN = figures.TTFT_MS_MEDIAN.name
TTFT_MS_MEAN = f"{figures.TTFT_MS.name}_mean"
TTFT_MS_P99 = f"{figures.TTFT_MS.name}_p99"
TPOT_MS_MEDIAN = figures.TPOT_MS_MEDIAN.name
E2E_MS_MEDIAN = figures.E2E_MS_MEDIAN.name

# -- spec decode (server counters over the window) --
ACCEPTANCE_LENGTH = figures.ACCEPTANCE_LENGTH.name
DRAFT_ACCEPTANCE_RATE = figures.DRAFT_ACCEPTANCE_RATE.name
EFFECTIVE_K = figures.EFFECTIVE_K.name
NUM_DRAFTS = "num_drafts"
NUM_DRAFT_TOKENS = "num_draft_tokens"
NUM_ACCEPTED_TOKENS = "num_accepted_tokens"
ACCEPTANCE_SOURCE = "acceptance_source"
ACCEPTANCE_DEFINITION = "acceptance_definition"
PER_POSITION_PREFIX = f"{figures.PER_POSITION_ACCEPTANCE.name}_"
CONDITIONAL_PREFIX = "conditional_acceptance_"
ACCEPTED_PER_POSITION_PREFIX = "num_accepted_tokens_per_position_"

# -- official SPEED-Bench AL (specdec_bench's formula; `specbench.metrics.official`) --
OFFICIAL_ACCEPTANCE_LENGTH = figures.OFFICIAL_ACCEPTANCE_LENGTH.name
OFFICIAL_TRIMMED_ACCEPTANCE_LENGTH = "official_trimmed_acceptance_length"
NUM_QUESTIONS = "num_questions"
NUM_TURNS = "num_turns"
MERGED_CHUNKS = "merged_chunks"
OFFICIAL_IS_ESTIMATE = "official_is_estimate"
DRAFTED_STEP_SHARE = "drafted_step_share"
#: "summary", "recomputed from requests.jsonl", or why the official AL is n/a.
OFFICIAL_NOTE = "official_note"
NUM_CONVERSATIONS = "num_conversations"
#: What the merged-chunk check could use (per_step_metrics, num_spec_steps, chunk_size, none).
COALESCING_CHECK = "coalescing_check"
#: The step-weighted AL beside the official one in card tables.
STEP_WEIGHTED_ACCEPTANCE_LENGTH = "step_weighted_acceptance_length"

# -- per-category frame only --
NUM_SPEC_STEPS = "num_spec_steps"

#: Columns that identify a cell; `aggregate_repeats` groups by these minus `repeat` and
#: `launch` (the passes of one point, on one server launch or several).
IDENTITY_COLUMNS = (
    RESULTS_DIR,
    LABEL,
    SERVER_LABEL,
    IS_BASELINE,
    DATASET,
    WORKLOAD,
    SELECTION,
    FULL_SELECTION,
    GROUP,
    VIEW,
    SPLIT,
    CONTEXT_K,
    CATEGORY,
    CONCURRENCY,
    LAUNCH,
    REPEAT,
)

#: Throughput splits of SPEED-Bench, by prompt length in thousands of o200k tokens.
CONTEXT_SPLITS_K = (1, 2, 8, 16, 32)
_THROUGHPUT_RE = re.compile(r"throughput[_\-]?(\d+)k", re.IGNORECASE)
_QUALITATIVE_RE = re.compile(r"qualitative", re.IGNORECASE)


def per_position_column(position: int) -> str:
    """Column of the acceptance rate at draft position `position` (1-based)."""
    return f"{PER_POSITION_PREFIX}{position}"


def position_columns(frame: pd.DataFrame, prefix: str = PER_POSITION_PREFIX) -> list[str]:
    """The `prefix<i>` columns present in `frame`, position 1 first."""
    found = [c for c in frame.columns if c.startswith(prefix) and c[len(prefix) :].isdigit()]
    return sorted(found, key=lambda c: int(c[len(prefix) :]))


def parse_split(*texts: str) -> tuple[str | None, int | None]:
    """SPEED-Bench split and context length (thousands of tokens) named in any of `texts`.

    Tolerant of local paths: `speed-bench:throughput_8k`, `data/speed/throughput_8k/test.parquet`
    and a slug `speed-bench-throughput-8k` all give `("throughput_8k", 8)`.
    """
    for text in texts:
        match = _THROUGHPUT_RE.search(text)
        if match:
            k = int(match.group(1))
            return f"throughput_{k}k", k
    for text in texts:
        if _QUALITATIVE_RE.search(text):
            return "qualitative", None
    return None, None
