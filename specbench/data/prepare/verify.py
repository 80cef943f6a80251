"""`data verify`: a prepared folder holds no placeholder, the expected rows, and the recorded text.

Checks, per config `prepared.json` lists: the data loads through the same path `run` uses;
no turn starts with the placeholder; the row count per category is SPEED-Bench's (880
qualitative rows, 80 per category; 1,536 per throughput config, 512 per tier) or, with
`published=False`, the one recorded; throughput first turns are within 5% of N × 1,000
o200k tokens (published counts only); every row's turns hash as recorded.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.data.categories import ENTROPY_TIERS, QUALITATIVE_CATEGORIES
from specbench.data.prepare import manifest
from specbench.data.prepare.writer import parquet_path
from specbench.data.prepared import load_prepared
from specbench.data.speed_bench import CONFIGS, is_placeholder

#: Rows per category in SPEED-Bench as published: 880 qualitative, 1,536 per throughput config.
PUBLISHED = {
    config: (
        dict.fromkeys(QUALITATIVE_CATEGORIES, 80)
        if config == "qualitative"
        else dict.fromkeys(ENTROPY_TIERS, 512)
    )
    for config in CONFIGS
}
TOKEN_TOLERANCE = 0.05


def verify(folder: Path, published: bool = True) -> list[str]:
    """Every problem found, config by config (empty: the folder is as recorded)."""
    recorded = manifest.read(folder)
    problems: list[str] = []
    for config, entry in recorded["configs"].items():
        if config not in CONFIGS:
            problems.append(f"{config}: not a SPEED-Bench config")
            continue
        try:
            data = load_prepared(config, folder / parquet_path(config))
        except SpecbenchError as error:
            problems.append(f"{config}: {error}")
            continue
        problems += _check_config(config, entry, data.conversations, published)
    return problems


def is_count_problem(problem: str) -> bool:
    """A row count that differs from the expected one (what `--recorded-counts` changes)."""
    return ": category " in problem and " rows, expected " in problem


def _check_config(config: str, entry: dict, conversations: tuple, published: bool) -> list[str]:
    problems = []
    placeholders = [c.question_id for c in conversations if is_placeholder(c)]
    if placeholders:
        problems.append(
            f"{config}: {len(placeholders)} rows are placeholders (first: {placeholders[0]})"
        )
    counts = Counter(c.category for c in conversations)
    expected = PUBLISHED[config] if published else entry["categories"]
    for category in sorted(set(expected) | set(counts)):
        if counts.get(category, 0) != expected.get(category, 0):
            problems.append(
                f"{config}: category {category} has {counts.get(category, 0)} rows, "
                f"expected {expected.get(category, 0)}"
            )
    if published and CONFIGS[config]:
        problems += _check_lengths(config, conversations, CONFIGS[config] or 0)
    hashes = entry["row_sha256"]
    seen = set()
    for conversation in conversations:
        qid = conversation.question_id
        seen.add(qid)
        if qid not in hashes:
            problems.append(f"{config}: row {qid} is not in {manifest.NAME}")
        elif manifest.turns_hash(conversation.turns) != hashes[qid]:
            problems.append(f"{config}: row {qid}: turns differ from the recorded sha256")
    problems += [f"{config}: row {qid} is missing" for qid in hashes if qid not in seen]
    return problems


def _check_lengths(config: str, conversations: tuple, target: int) -> list[str]:
    from specbench.data.prepare.tokens import count

    problems = []
    for conversation in conversations:
        tokens = count(conversation.turns[0])
        if abs(tokens - target) > TOKEN_TOLERANCE * target:
            problems.append(
                f"{config}: row {conversation.question_id} has {tokens} o200k tokens, "
                f"expected about {target}"
            )
    return problems
