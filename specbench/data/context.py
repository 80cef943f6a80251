"""Will each conversation fit the server's context window? Exact with a tokenizer, else estimated.

A conversation of n user turns is replayed with the target's own answers as history, so its
worst case is the last turn: every user turn, n-1 earlier answers of up to `max_tokens`
each, the chat template, and `max_tokens` more to generate. `check_context_fit` checks that
worst case against `max_model_len`.

Without a tokenizer the prompt length is estimated:
- natural-text rows: ceil(characters / 3.5) plus 8 template tokens per message. English
  text runs about 4 characters per token in common BPE vocabularies; 3.5 errs toward
  warning, because a false warning costs less than a run that fails mid-way;
- SPEED-Bench throughput rows: the config's nominal length (exactly N×1000 tiktoken
  `o200k_base` tokens by construction) plus the same template allowance. The target's own
  tokenizer may count differently; pass `tokenizer` for an exact answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specbench.common.errors import SpecbenchError
from specbench.data._hf import first_line
from specbench.data.conversation import Conversation

if TYPE_CHECKING:
    from specbench.data.loader import Workload

ESTIMATED_CHARS_PER_TOKEN = 3.5
TEMPLATE_TOKENS_PER_MESSAGE = 8
#: Example question ids quoted in a warning.
MAX_EXAMPLES = 3


def load_tokenizer(tokenizer: str) -> Any:
    """A Hugging Face tokenizer from a local folder (or hub id), via `transformers`.

    `transformers` is not a specbench dependency: install it to count tokens exactly.
    """
    try:
        from transformers import AutoTokenizer
    except ImportError as error:
        raise SpecbenchError(
            f"--tokenizer {tokenizer}: counting tokens needs the 'transformers' package, "
            "which specbench does not install (pip install transformers)"
        ) from error
    try:
        return AutoTokenizer.from_pretrained(tokenizer)
    except Exception as error:  # transformers raises OSError, ValueError, ... for a bad path
        raise SpecbenchError(
            f"--tokenizer {tokenizer}: cannot load: {first_line(error)}"
        ) from error


class TokenCounter:
    """Counts the prompt tokens of a conversation's last turn, exactly or by estimate."""

    def __init__(self, tokenizer: str | None = None, nominal_tokens: int | None = None) -> None:
        self.tokenizer_name = tokenizer
        self.nominal_tokens = nominal_tokens
        self._tokenizer = load_tokenizer(tokenizer) if tokenizer else None

    @property
    def exact(self) -> bool:
        """True when a real tokenizer counts; False for the documented estimate."""
        return self._tokenizer is not None

    def describe(self) -> str:
        """How counts are made, for messages and reports."""
        if self.exact:
            return f"counted with tokenizer {self.tokenizer_name}"
        if self.nominal_tokens:
            return f"estimated from the config's nominal {self.nominal_tokens:,} o200k tokens"
        return f"estimated at {ESTIMATED_CHARS_PER_TOKEN} characters per token"

    def prompt_tokens(self, conversation: Conversation) -> int:
        """Tokens of the last turn's prompt, earlier answers not included.

        Earlier answers are stood in for by empty assistant messages so that the chat
        template's own tokens for them are counted.
        """
        turns = conversation.turns
        if self._tokenizer is None:
            if self.nominal_tokens:
                text_tokens = self.nominal_tokens * len(turns)
            else:
                text_tokens = math.ceil(sum(map(len, turns)) / ESTIMATED_CHARS_PER_TOKEN)
            return text_tokens + TEMPLATE_TOKENS_PER_MESSAGE * (2 * len(turns) - 1)
        messages: list[dict[str, str]] = []
        for index, turn in enumerate(turns):
            if index:
                messages.append({"role": "assistant", "content": ""})
            messages.append({"role": "user", "content": turn})
        if getattr(self._tokenizer, "chat_template", None):
            encoded = self._tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True
            )
            # transformers 5 returns a BatchEncoding; 4.x a plain list of ids.
            ids = encoded["input_ids"] if hasattr(encoded, "keys") else encoded
            return len(ids)
        return sum(len(self._tokenizer.encode(turn)) for turn in turns)


@dataclass(frozen=True)
class ContextNeed:
    """One conversation's worst-case need: last-turn prompt plus every answer's budget."""

    conversation: Conversation
    prompt_tokens: int
    needed_tokens: int


def context_needs(
    conversations: Sequence[Conversation], counter: TokenCounter, max_tokens: int
) -> list[ContextNeed]:
    """Worst-case context need of each conversation (see the module docstring)."""
    needs = []
    for conversation in conversations:
        prompt = counter.prompt_tokens(conversation)
        answers = max_tokens * len(conversation.turns)
        needs.append(ContextNeed(conversation, prompt, prompt + answers))
    return needs


def check_context_fit(
    workload: Workload, *, max_model_len: int, max_tokens: int, tokenizer: str | None = None
) -> list[str]:
    """Warnings for conversations whose worst case would exceed `max_model_len` (empty: all fit).

    Exact when `tokenizer` (a Hugging Face tokenizer folder or id) is given and
    `transformers` is importable; otherwise the estimate in the module docstring.
    """
    if max_model_len < 1:
        raise SpecbenchError(f"max_model_len must be at least 1, got {max_model_len}")
    if max_tokens < 1:
        raise SpecbenchError(f"max_tokens must be at least 1, got {max_tokens}")
    warnings: list[str] = []
    if max_tokens >= max_model_len:
        warnings.append(
            f"max_tokens {max_tokens:,} leaves no room for prompts in max_model_len "
            f"{max_model_len:,}"
        )
    counter = TokenCounter(tokenizer, workload.nominal_context_tokens)
    needs = context_needs(workload.conversations, counter, max_tokens)
    too_long = sorted(
        (need for need in needs if need.needed_tokens > max_model_len),
        key=lambda need: need.needed_tokens,
        reverse=True,
    )
    if not too_long:
        return warnings
    longest = too_long[0]
    examples = ", ".join(need.conversation.question_id for need in too_long[:MAX_EXAMPLES])
    multi = sum(len(need.conversation.turns) > 1 for need in too_long)
    history = f" ({multi} multi-turn, earlier answers counted at max_tokens)" if multi else ""
    approx = "" if counter.exact else "~"
    warnings.append(
        f"{workload.name}: {len(too_long)} of {len(needs)} conversations{history} may exceed "
        f"max_model_len {max_model_len:,} with max_tokens {max_tokens:,} "
        f"(prompt tokens {counter.describe()}); the longest needs {approx}"
        f"{longest.needed_tokens:,} tokens (question_id {longest.conversation.question_id}, "
        f"category {longest.conversation.category}); e.g. {examples}"
    )
    return warnings
