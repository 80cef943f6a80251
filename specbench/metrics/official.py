"""The official SPEED-Bench acceptance length: NVIDIA `specdec_bench`'s formula, from chunks.

Model cards (e.g. AMD's MiniMax-M3-EAGLE3.1) and the SPEED-Bench paper publish AL as
`specdec_bench` (NVIDIA Model-Optimizer `examples/specdec_bench`, main @ a2fbac7b) computes
it. Direction: higher is better; 1.0 means no speculation gain, K + 1 is the ceiling.

What it counts (`models/vllm.py:152-182`, `metrics/specbench.py:45-66` of that commit):

- A **chunk** is one streamed output that added tokens. Every chunk counts, including the
  first one (the prefill token, size 1) and, for n-gram, the 1-token steps where the
  proposer found no match. On the last chunk of a turn a final EOS token is removed, and a
  last chunk that held only the EOS is dropped (`official_chunks`).
- **Per question**: Σ tokens / Σ chunks over all turns of the question pooled (not a mean
  of per-turn ALs).
- **Per category**: the plain mean over the category's questions.
- **Overall**: the plain mean over all questions (equal to the mean of the category ALs
  only when categories have the same number of questions).

The newer branch (`talora/specdec-bench-july-26` @ 4d302e4d) trims instead: per turn a
leading 1-token chunk and always the last chunk are dropped, the EOS is kept
(`trimmed_chunks`); the aggregation is the same.

A chunk equals one engine step only while the client keeps up: when vLLM merges several
steps' outputs into one streamed chunk, every chunk-based figure (this one included)
rises. `coalesced_chunks` and `step_count_floor` detect it (the latter counts steps from vLLM's
per-request object, exactly with `--per-request-spec-decode-metrics detailed` for a draft
model); the figure is then an estimate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

#: Names of the definitions, as written in `summary.json` and printed in reports.
OFFICIAL = "official"
TRIMMED = "official_trimmed"
STEP_WEIGHTED = "step_weighted"
AlDefinition = Literal["official", "step_weighted"]


def official_chunks(chunk_tokens: Sequence[int], ends_with_eos: bool) -> list[int]:
    """A turn's chunk sizes as `specdec_bench` (main) counts them.

    Chunks without tokens are dropped; the prefill chunk is kept; when the turn ended with
    the EOS token, it is removed from the last chunk and a last chunk of only the EOS is
    dropped.
    """
    sizes = [int(n) for n in chunk_tokens if n > 0]
    if ends_with_eos and sizes:
        last = sizes.pop() - 1
        if last > 0:
            sizes.append(last)
    return sizes


def trimmed_chunks(chunk_tokens: Sequence[int]) -> list[int]:
    """A turn's chunk sizes as the newer branch counts them (`Metric.trim_beam_lengths`).

    Drop a leading chunk of size 1 (the prefill token) and always the last chunk, EOS kept;
    a turn left with nothing contributes `[1]`.
    """
    sizes = [int(n) for n in chunk_tokens if n > 0]
    start = 1 if sizes and sizes[0] == 1 else 0
    end = len(sizes) - 1
    return [1] if end <= start else sizes[start:end]


@dataclass(frozen=True, slots=True)
class TurnChunks:
    """One turn (request) of one question: its chunk sizes after the definition's rule."""

    question_id: str
    category: str
    chunks: Sequence[int]
    #: Steps the turn took when known exactly (per-step data); None: count the chunks.
    steps: int | None = None


def question_acceptance_length(turns: Iterable[Sequence[int]]) -> float | None:
    """Σ tokens / Σ chunks over all turns of one question; None when it has no chunk."""
    tokens = chunks = 0
    for sizes in turns:
        tokens += sum(sizes)
        chunks += len(sizes)
    return tokens / chunks if chunks else None


@dataclass(frozen=True, slots=True)
class OfficialAcceptance:
    """The official AL of a set of turns: per question, per category, overall."""

    per_question: dict[str, float]
    per_category: dict[str, float]
    #: Questions averaged per category (the n of each category's mean).
    questions_per_category: dict[str, int]
    overall: float | None
    num_turns: int
    num_chunks: int
    num_tokens: int


def official_acceptance(turns: Iterable[TurnChunks]) -> OfficialAcceptance:
    """Per question Σ tokens / Σ chunks (all turns pooled); category and overall: means.

    Per category: the plain mean over its questions; overall: the plain mean over every
    question (not over categories). A turn with `steps` set divides by its steps instead
    of its chunks (same tokens). A question is keyed by its id: its turns must be given
    with one category.
    """
    tokens: dict[str, int] = defaultdict(int)
    divisor: dict[str, int] = defaultdict(int)
    category_of: dict[str, str] = {}
    num_turns = num_chunks = 0
    for turn in turns:
        num_turns += 1
        num_chunks += len(turn.chunks)
        tokens[turn.question_id] += sum(turn.chunks)
        divisor[turn.question_id] += turn.steps if turn.steps is not None else len(turn.chunks)
        category_of.setdefault(turn.question_id, turn.category)
    per_question = {q: tokens[q] / divisor[q] for q in tokens if divisor[q] > 0}
    by_category: dict[str, list[float]] = defaultdict(list)
    for question, value in per_question.items():
        by_category[category_of[question]].append(value)
    values = list(per_question.values())
    return OfficialAcceptance(
        per_question=per_question,
        per_category={c: sum(v) / len(v) for c, v in sorted(by_category.items())},
        questions_per_category={c: len(v) for c, v in sorted(by_category.items())},
        overall=sum(values) / len(values) if values else None,
        num_turns=num_turns,
        num_chunks=num_chunks,
        num_tokens=sum(tokens.values()),
    )


def coalesced_chunks(chunk_tokens: Sequence[int], num_speculative_tokens: int) -> int:
    """Chunks that carry more than K + 1 tokens: certainly several steps merged into one.

    A lower bound on merging (two 1-token steps merged into a 2-token chunk go unseen).
    """
    return sum(1 for n in chunk_tokens if n > num_speculative_tokens + 1)


def step_count_floor(spec_decode: Mapping[str, Any], output_tokens: int) -> int | None:
    """Fewest engine steps a turn took, from vLLM's per-request spec-decode object.

    1 (prefill) + num_spec_steps (steps that carried drafts) + the steps without drafts
    that the `detailed` per-step arrays imply: output tokens not accounted for by the
    prefill and the drafted steps (each emits accepted + 1 tokens), 1 token each. Exact for
    a draft model (it drafts every step). For a proposer that skips steps (n-gram) it is
    low by at most K when the final step was cut by max_tokens or EOS (vLLM records that
    step's accepted count uncut). With the summary object only: 1 + num_spec_steps.
    None without the object. Fewer streamed chunks than this means merged chunks.
    """
    steps = spec_decode.get("num_spec_steps")
    if steps is None:
        return None
    accepted = spec_decode.get("per_step_accepted")
    if not accepted:
        return 1 + int(steps)
    drafted_tokens = sum(int(a) + 1 for a in accepted)
    return 1 + len(accepted) + max(0, output_tokens - 1 - drafted_tokens)


def drafted_step_share(num_spec_steps: int, decode_steps: int) -> float | None:
    """Share of decode steps (prefill excluded) that carried drafts, in [0, 1].

    num_spec_steps / decode_steps. 1.0 for a draft model that proposes every step; below 1
    for n-gram and other proposers that skip steps, which the official AL counts as 1-token
    steps and vLLM's counters do not count at all. None when no decode step was seen.
    """
    if decode_steps <= 0:
        return None
    return min(1.0, num_spec_steps / decode_steps)
