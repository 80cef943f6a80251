"""One entry point from a `--dataset` spec to a ready-to-send `Workload`.

Spec forms (see `load_workload`):

- `speed-bench:CONFIG` — `nvidia/SPEED-Bench` from the hub, at a pinned revision.
- `speed-bench:CONFIG:PATH` — locally prepared SPEED-Bench data for CONFIG.
- `mt-bench` / `mt-bench:PATH` — FastChat's MT-Bench `question.jsonl`.
- `custom:PATH` or a bare `PATH` — custom JSONL `{"category": str, "turns": [str, ...]}`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from specbench.data.conversation import Conversation
from specbench.data.custom import load_custom
from specbench.data.selection import filter_categories, stratified_sample
from specbench.errors import SpecbenchError


@dataclass(frozen=True)
class Workload:
    """A selected, validated set of conversations plus where they came from."""

    spec: str
    name: str
    conversations: tuple[Conversation, ...]
    config: str | None = None
    nominal_context_tokens: int | None = None
    revision: str | None = None
    source: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def categories(self) -> tuple[str, ...]:
        """Categories present, in first-seen order."""
        return tuple(dict.fromkeys(conversation.category for conversation in self.conversations))


def slugify(text: str) -> str:
    """A filesystem-safe name: lowercase letters, digits, dots and dashes."""
    slug = re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.")
    return slug or "dataset"


def load_workload(
    spec: str,
    *,
    revision: str | None = None,
    categories: Sequence[str] = (),
    entropy_tiers: Sequence[str] = (),
    num_prompts: int | None = None,
    seed: int = 0,
    strict: bool = False,
) -> Workload:
    """Load, validate and select the conversations named by `spec`.

    `categories` keeps only those categories (unknown ones are an error); `entropy_tiers`
    does the same for the tiers of a SPEED-Bench throughput config; `num_prompts` takes a
    seeded stratified sample (see `selection.stratified_sample`). Placeholder SPEED-Bench
    rows are refused. Every bad input raises SpecbenchError with a one-line message.
    """
    if not spec or not spec.strip():
        raise SpecbenchError("--dataset is empty; give speed-bench:CONFIG, mt-bench or a path")
    spec = spec.strip()
    if spec.startswith("custom:"):
        path = Path(spec.removeprefix("custom:")).expanduser()
    else:
        path = Path(spec).expanduser()
    if entropy_tiers:
        raise SpecbenchError(
            f"--entropy-tier applies only to SPEED-Bench throughput configs, not {spec!r}"
        )
    conversations = load_custom(path)
    chosen = filter_categories(conversations, categories, where=str(path))
    selection = stratified_sample(chosen, num_prompts, seed=seed, strict=strict, where=str(path))
    return Workload(
        spec=spec,
        name=slugify(path.stem),
        conversations=selection.conversations,
        source=str(path.resolve()),
        warnings=selection.warnings,
    )
