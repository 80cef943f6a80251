"""SPEED-Bench (`nvidia/SPEED-Bench`): configs, schema checks, placeholder detection, loading.

Rows come from the hub (or a local folder laid out like the hub repo, named by the
`SPECBENCH_SPEED_BENCH_REPO` environment variable) or from data prepared locally by NVIDIA's
scripts. Every path goes through `datasets.load_dataset`. The hub ships many rows as
placeholders whose text must be rebuilt from upstream sources; `check_no_placeholders`
refuses to benchmark them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data._hf import load_repo_dataset
from specbench.data.categories import ENTROPY_TIERS, QUALITATIVE_CATEGORIES
from specbench.data.conversation import Conversation, check_turns

HUB_REPO = "nvidia/SPEED-Bench"
#: A verified commit of the hub repo ("Update README.md", 487aa71). Override per run with
#: `--dataset-revision`; newer commits (v1.1 changed the throughput `src_id`s) exist.
DEFAULT_REVISION = "487aa718444e816458d1a0a52bfce7a454285cf4"
#: Replaces the hub repo id: a local folder laid out like the hub repo, or another repo id.
REPO_ENV = "SPECBENCH_SPEED_BENCH_REPO"

#: Config name → nominal prompt length in o200k tokens (None: natural-length prompts).
CONFIGS: dict[str, int | None] = {
    "qualitative": None,
    "throughput_1k": 1_000,
    "throughput_2k": 2_000,
    "throughput_8k": 8_000,
    "throughput_16k": 16_000,
    "throughput_32k": 32_000,
}
COLUMNS = (
    "question_id",
    "category",
    "sub_category",
    "turns",
    "source",
    "src_id",
    "difficulty",
    "multiturn",
)
PLACEHOLDER = "FULL BENCHMARK DATA SHOULD BE FETCHED FROM THE SOURCE USING SPECDEC_BENCH"
PREPARE_HINT = (
    "fill them with `specbench data prepare {config} --output DIR` (offline: add --mirror "
    "MIRROR, see --list-sources), then pass `--data-dir DIR` to run (or set data_dir in the "
    "suite)"
)


def check_config(config: str) -> int | None:
    """Validate a config name; return its nominal prompt length in tokens."""
    if config not in CONFIGS:
        allowed = ", ".join(CONFIGS)
        raise SpecbenchError(f"unknown SPEED-Bench config {config!r}; allowed: {allowed}")
    return CONFIGS[config]


def known_categories(config: str) -> tuple[str, ...]:
    """The categories a config may hold: the 11 domains, or the 3 entropy tiers."""
    check_config(config)
    return QUALITATIVE_CATEGORIES if config == "qualitative" else ENTROPY_TIERS


def check_categories(config: str, categories: Sequence[str]) -> None:
    """Refuse a `--category` that is not one of `config`'s categories."""
    allowed = known_categories(config)
    for category in categories:
        if category not in allowed:
            raise SpecbenchError(
                f"--category {category!r} is not a {config} category; allowed: {', '.join(allowed)}"
            )


def is_placeholder(conversation: Conversation) -> bool:
    """True when any turn still holds the hub's placeholder instead of real text."""
    return any(turn.startswith(PLACEHOLDER) for turn in conversation.turns)


@dataclass(frozen=True)
class SpeedBenchData:
    """Every validated row of one config, placeholders included, and where it came from."""

    config: str
    conversations: tuple[Conversation, ...]
    source: str
    revision: str | None = None

    @property
    def placeholder_count(self) -> int:
        """Rows whose text must still be fetched from upstream sources."""
        return sum(is_placeholder(conversation) for conversation in self.conversations)


def check_no_placeholders(
    conversations: tuple[Conversation, ...] | list[Conversation], config: str, where: str
) -> None:
    """Refuse placeholder rows with one line giving the count and how to prepare the data."""
    count = sum(is_placeholder(conversation) for conversation in conversations)
    if count:
        hint = PREPARE_HINT.format(config=config)
        raise SpecbenchError(
            f"{where}: {count} of {len(conversations)} rows are placeholders (field 'turns' "
            f'starts with "{PLACEHOLDER[:36]}..."); {hint}'
        )


def _turns_from_messages(messages: Any, where: str) -> list[str]:
    if not isinstance(messages, list) or not messages:
        raise SpecbenchError(f"{where}: field 'messages' must be a non-empty list")
    turns = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "user":
            raise SpecbenchError(f"{where}: field 'messages' may hold only user messages")
        content = message.get("content")
        if not isinstance(content, str) or not content:
            raise SpecbenchError(f"{where}: field 'messages' has a message without text")
        turns.append(content)
    return turns


def _conversation(row: dict[str, Any], config: str, where: str) -> Conversation:
    qid = row.get("question_id")
    if not isinstance(qid, str) or len(qid) != 32:
        raise SpecbenchError(
            f"{where}: field 'question_id' must be a 32-character string, got {qid!r}"
        )
    where = f"{where} (question_id {qid})"
    category = row.get("category")
    allowed = known_categories(config)
    if category not in allowed:
        raise SpecbenchError(
            f"{where}: field 'category' is {category!r}, not a {config} category; "
            f"allowed: {', '.join(allowed)}"
        )
    turns = row["turns"] if "turns" in row else _turns_from_messages(row.get("messages"), where)
    check_turns(turns, where)
    multiturn = row.get("multiturn")
    if not isinstance(multiturn, bool):
        raise SpecbenchError(f"{where}: field 'multiturn' must be a boolean, got {multiturn!r}")
    for key in ("sub_category", "source", "src_id", "difficulty"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise SpecbenchError(f"{where}: field {key!r} must be a string or null")
    extra = {"multiturn": json.dumps(multiturn)}
    extra.update({key: row[key] for key in ("src_id", "difficulty") if row.get(key) is not None})
    return Conversation(
        question_id=qid,
        category=category,
        turns=tuple(turns),
        sub_category=row.get("sub_category"),
        source=row.get("source"),
        extra=extra,
    )


def conversations_from_dataset(dataset: Any, config: str, where: str) -> tuple[Conversation, ...]:
    """Check the columns and every row of a SPEED-Bench `datasets.Dataset`."""
    columns = set(dataset.column_names)
    # NeMo-Skills' prepare.py replaces `turns` with a `messages` list of user messages.
    expected = [c for c in COLUMNS if c != "turns"] + [
        "turns" if "turns" in columns else "messages"
    ]
    missing = [column for column in expected if column not in columns]
    if missing:
        raise SpecbenchError(
            f"{where}: missing column {missing[0]!r}; SPEED-Bench data needs {', '.join(COLUMNS)} "
            "(or 'messages' in place of 'turns')"
        )
    if len(dataset) == 0:
        raise SpecbenchError(f"{where}: dataset is empty (no rows)")
    conversations = tuple(
        _conversation(row, config, f"{where} row {index + 1}") for index, row in enumerate(dataset)
    )
    seen: set[str] = set()
    for conversation in conversations:
        if conversation.question_id in seen:
            raise SpecbenchError(f"{where}: duplicate question_id {conversation.question_id!r}")
        seen.add(conversation.question_id)
    return conversations


def load_hub(config: str, revision: str | None = None) -> SpeedBenchData:
    """One config from the hub at `revision` (default: the pinned one), or from `$REPO_ENV`.

    When `$SPECBENCH_SPEED_BENCH_REPO` names a local folder the revision does not apply and
    is recorded as None; when it names another repo id, only an explicit revision is used.
    """
    check_config(config)
    repo = os.environ.get(REPO_ENV, "").strip() or HUB_REPO
    local = Path(repo).expanduser()
    if local.is_dir():
        dataset = load_repo_dataset(str(local), config, None)
        source, used_revision = str(local.resolve()), None
    else:
        # The pinned commit belongs to nvidia/SPEED-Bench; a mirror gets only what was asked.
        used_revision = revision or (DEFAULT_REVISION if repo == HUB_REPO else None)
        dataset = load_repo_dataset(repo, config, used_revision)
        source = repo
    where = f"{source} config {config!r}"
    return SpeedBenchData(
        config=config,
        conversations=conversations_from_dataset(dataset, config, where),
        source=source,
        revision=used_revision,
    )
