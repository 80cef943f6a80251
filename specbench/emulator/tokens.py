"""The emulator's fake tokenizer and fake model: cheap, deterministic, documented rules.

Prompt tokens (what `usage.prompt_tokens` and `prompt_token_ids` report):
- one token per whitespace-separated word of the prompt text, plus one BOS token (id 1);
  a completions prompt given as token ids counts as exactly those ids;
- a chat request is first rendered as, per message, `<|role|>` followed by its text, then
  `<|assistant|>` as the generation prompt; each marker counts as one word.

Output tokens (the fake model):
- ids lie in [3, 32000): 0 is PAD, 1 BOS, 2 EOS, and EOS is never produced, so every
  request runs to `max_tokens` (capped by the context left) and finishes with `length`;
- at temperature 0 the id at output position j is a pure hash of (prompt text, j): the
  same prompt gives the same ids with or without speculation, on any seed, which is what
  a lossless check compares; at temperature > 0 a per-request random salt (the request's
  `seed`, or a draw from the server's seeded stream) is mixed in;
- the text of a token is `" tok<id>"`.

Reasoning mode (`--reasoning-tokens N`): output position 0 is the `<think>` marker
(id 32000) and position N-1 the `</think>` marker (id 32001), added tokens outside the
ordinary range as a real reasoning model's are; positions 1..N-2 are thinking text and
N onward the answer. Corruption never touches the markers.

Corruption (`--corrupt-rate R`): a prompt is corrupted when a hash of (seed, prompt)
falls below R; its ids from a hashed position on are shifted by one, so they differ from
the clean ids exactly from that position.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence

VOCAB_SIZE = 32000
PAD_TOKEN_ID = 0
BOS_TOKEN_ID = 1
EOS_TOKEN_ID = 2
THINK_START_TOKEN_ID = 32000
THINK_END_TOKEN_ID = 32001
THINK_START_TEXT = "<think>"
THINK_END_TEXT = "</think>"
_FIRST_ORDINARY_ID = 3
_ORDINARY_SPAN = VOCAB_SIZE - _FIRST_ORDINARY_ID
_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_CORRUPT_SALT = 0xC0FFEE1234567
_CORRUPT_POSITION_SALT = 0x5EED5EED5EED


def splitmix64(value: int) -> int:
    """A 64-bit mixing function: adjacent inputs give unrelated outputs."""
    z = (value + _GOLDEN) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def render_chat(messages: Sequence[dict[str, object]]) -> str:
    """Render chat messages as the fake chat template does (see module docstring)."""
    parts: list[str] = []
    for message in messages:
        parts.append(f"<|{message.get('role', 'user')}|>")
        parts.append(_message_text(message.get("content")))
    parts.append("<|assistant|>")
    return "\n".join(parts)


def _message_text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        ]
        return " ".join(texts)
    return str(content)


def count_prompt_tokens(text: str) -> int:
    """Number of fake tokens of a prompt text: words plus BOS."""
    return len(text.split()) + 1


def encode(text: str) -> list[int]:
    """Fake token ids of a prompt text: BOS, then a hash of each word."""
    return [BOS_TOKEN_ID] + [
        _FIRST_ORDINARY_ID + zlib.crc32(word.encode()) % _ORDINARY_SPAN for word in text.split()
    ]


def prompt_digest_of_text(text: str) -> int:
    """A 64-bit digest identifying a prompt text."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def prompt_digest_of_ids(token_ids: Sequence[int]) -> int:
    """A 64-bit digest identifying a prompt given as token ids."""
    data = b"ids:" + ",".join(str(token_id) for token_id in token_ids).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def output_token_id(stream_key: int, position: int) -> int:
    """The fake model's token at output position `position` of the stream `stream_key`."""
    mixed = splitmix64(stream_key ^ ((position + 1) * _GOLDEN & _MASK64))
    return _FIRST_ORDINARY_ID + mixed % _ORDINARY_SPAN


def corrupted_token_id(token_id: int) -> int:
    """A different ordinary id: the next one, wrapping inside the ordinary range."""
    return _FIRST_ORDINARY_ID + (token_id - _FIRST_ORDINARY_ID + 1) % _ORDINARY_SPAN


def corruption_start(prompt_digest: int, seed: int, rate: float, max_tokens: int) -> int | None:
    """First corrupted output position for this prompt, or None when it stays clean."""
    if rate <= 0.0 or max_tokens <= 0:
        return None
    draw = splitmix64(prompt_digest ^ splitmix64(seed ^ _CORRUPT_SALT))
    if draw / 2**64 >= rate:
        return None
    return splitmix64(draw ^ _CORRUPT_POSITION_SALT) % max_tokens


def marker_at(position: int, reasoning_tokens: int) -> int | None:
    """The reasoning marker id at an output position, or None for an ordinary token."""
    if reasoning_tokens <= 0:
        return None
    if position == 0:
        return THINK_START_TOKEN_ID
    if position == reasoning_tokens - 1:
        return THINK_END_TOKEN_ID
    return None


def token_text(token_id: int) -> str:
    """Detokenized text of one fake token."""
    if token_id == THINK_START_TOKEN_ID:
        return THINK_START_TEXT
    if token_id == THINK_END_TOKEN_ID:
        return THINK_END_TEXT
    return f" tok{token_id}"
