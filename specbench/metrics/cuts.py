"""Acceptance cuts along one output: AL by generated-token position, thinking vs answer.

Token/step alignment (vLLM v1, as `--per-request-spec-decode-metrics detailed` reports):
the prefill step emits output token 0 and carries no draft; verify step i then emits
`accepted_i + 1` tokens (accepted drafts plus the bonus token), so with every decode step
carrying drafts, step i's first token sits at output position

    start_i = 1 + Σ_{j<i} (accepted_j + 1).

A step belongs to the position bin, and to the thinking or answer span, of `start_i`
(the first token it emits): a step straddling a boundary is counted once, on the side it
started from. The last step may be cut by `max_tokens`; vLLM records its accepted count
before the cut, and so do these functions when the per-step arrays are the source.

Every AL here is vLLM's step-weighted definition restricted to the steps of a cut:
`AL = 1 + Σ accepted / number of steps` (bonus included; higher is better), pooled over
the requests given. Summed over all the bins of a request it is the request's own
`mean_acceptance_length`.

Sources, best first:
- exact: vLLM's `per_step_accepted` array, whose tokens account for the whole output;
- exact up to the order of one-token steps: the array aligned through the streamed
  chunks, when some decode steps carried no draft (n-gram without a match emits one
  token in a step that is not in the array);
- estimate: the streamed chunks alone, each chunk after the first taken as one step
  emitting `chunk_tokens` tokens (accepted = tokens − 1). Refused when a chunk holds more
  than K + 1 tokens (the server coalesced steps) or the first chunk more than one token.

Pure functions: impossible inputs raise ValueError; what cannot be computed from the
inputs comes back as a `Refusal` naming the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

DEFAULT_BIN_TOKENS = 256


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a cut cannot be computed from the data given (one line)."""

    reason: str


@dataclass(frozen=True, slots=True)
class StepAlignment:
    """The verify steps of one request placed on its generated-token axis."""

    #: Output position of the first token each step emitted.
    start_positions: tuple[int, ...]
    #: Draft tokens each step accepted (bonus excluded).
    accepted: tuple[int, ...]
    #: True when from vLLM's per-step arrays; False for the chunk estimate.
    exact: bool


@dataclass(frozen=True, slots=True)
class StepAcceptance:
    """Pooled steps of one cut: its AL = 1 + num_accepted / num_steps."""

    num_steps: int
    num_accepted: int
    exact: bool

    @property
    def acceptance_length(self) -> float | None:
        """1 + accepted / steps (step-weighted, bonus included); None without steps."""
        if self.num_steps == 0:
            return None
        return 1.0 + self.num_accepted / self.num_steps


@dataclass(frozen=True, slots=True)
class PositionBin:
    """Steps that started at output positions [start, end)."""

    start: int
    end: int
    steps: StepAcceptance


@dataclass(frozen=True, slots=True)
class SpanSplit:
    """AL of the thinking span and of the answer, and how many requests had a span."""

    thinking: StepAcceptance
    answer: StepAcceptance
    num_requests_with_span: int
    num_requests_without_span: int


def _check_counts(values: Sequence[int], name: str) -> None:
    if any(value < 0 for value in values):
        raise ValueError(f"{name} cannot hold negative counts: {list(values)}")


def align_per_step(per_step_accepted: Sequence[int], output_tokens: int) -> StepAlignment | Refusal:
    """Exact alignment from vLLM's `per_step_accepted` when it accounts for every token.

    start_i = 1 + Σ_{j<i}(accepted_j + 1). Valid when the arrays cover the output:
    start_{n−1} < output_tokens ≤ start_{n−1} + accepted_{n−1} + 1 (the last step may be
    cut by max_tokens). Fewer tokens covered means some decode steps carried no draft
    (use `align_per_step_with_chunks`); a step starting past the output is inconsistent.
    """
    _check_counts(per_step_accepted, "per_step_accepted")
    if output_tokens < 0:
        raise ValueError(f"output_tokens {output_tokens} is negative")
    starts: list[int] = []
    position = 1
    for accepted in per_step_accepted:
        starts.append(position)
        position += accepted + 1
    if not starts:
        if output_tokens <= 1:
            return StepAlignment((), (), exact=True)
        return Refusal(
            f"no verify step recorded for {output_tokens} output tokens: "
            "the decode steps carried no drafts"
        )
    if starts[-1] >= output_tokens:
        return Refusal(
            f"per_step_accepted places a step at token {starts[-1]} of a "
            f"{output_tokens}-token output: the arrays do not belong to this output"
        )
    if position < output_tokens:
        return Refusal(
            f"per_step_accepted accounts for {position} of {output_tokens} output tokens: "
            "some decode steps carried no draft; align through the streamed chunks"
        )
    return StepAlignment(tuple(starts), tuple(per_step_accepted), exact=True)


def _first_chunk_refusal(chunk_tokens: Sequence[int]) -> Refusal | None:
    if not chunk_tokens:
        return Refusal("no streamed chunk recorded")
    if chunk_tokens[0] != 1:
        return Refusal(
            f"the first chunk carries {chunk_tokens[0]} tokens where the prefill emits 1: "
            "the server coalesced steps"
        )
    return None


def _coalesced_refusal(chunk_tokens: Sequence[int], num_spec_tokens: int) -> Refusal | None:
    limit = num_spec_tokens + 1
    position = 0
    for index, tokens in enumerate(chunk_tokens):
        if tokens > limit:
            return Refusal(
                f"chunk {index} (from token {position}) carries {tokens} tokens, more than "
                f"K + 1 = {limit} one step can emit: the server coalesced steps"
            )
        position += tokens
    return None


def align_per_step_with_chunks(
    per_step_accepted: Sequence[int], chunk_tokens: Sequence[int], num_spec_tokens: int
) -> StepAlignment | Refusal:
    """Place vLLM's per-step array on the output through the streamed chunk sizes.

    For proposers that skip drafting on some steps (n-gram without a match): chunk 0 is
    the prefill token; walking the later chunks in order, a chunk of `accepted_i + 1`
    tokens (or fewer, for the last chunk: max_tokens cut) is step i, and any other chunk
    of one token is a step without drafts. A one-token chunk is taken as step i whenever
    accepted_i = 0, so inside a run of one-token chunks the order of the drafted and
    undrafted steps is a guess; every token's position is still exact. Refused when a
    chunk matches neither (coalesced or mismatched stream) or steps are left over.
    """
    _check_counts(per_step_accepted, "per_step_accepted")
    _check_counts(chunk_tokens, "chunk_tokens")
    refusal = _first_chunk_refusal(chunk_tokens) or _coalesced_refusal(
        chunk_tokens, num_spec_tokens
    )
    if refusal is not None:
        return refusal
    starts: list[int] = []
    step = 0
    position = chunk_tokens[0]
    last = len(chunk_tokens) - 1
    for index in range(1, len(chunk_tokens)):
        tokens = chunk_tokens[index]
        if step < len(per_step_accepted) and (
            tokens == per_step_accepted[step] + 1
            or (index == last and tokens < per_step_accepted[step] + 1)
        ):
            starts.append(position)
            step += 1
        elif tokens != 1:
            expected = (
                f"{per_step_accepted[step] + 1}"
                if step < len(per_step_accepted)
                else "1 (no step left)"
            )
            return Refusal(
                f"chunk {index} (from token {position}) carries {tokens} tokens where the "
                f"next recorded step emits {expected}: "
                "the stream and the per-step arrays disagree"
            )
        position += tokens
    if step != len(per_step_accepted):
        return Refusal(
            f"{len(per_step_accepted) - step} recorded steps have no streamed chunk: "
            "the stream and the per-step arrays disagree"
        )
    return StepAlignment(tuple(starts), tuple(per_step_accepted), exact=True)


def align_chunks_estimate(
    chunk_tokens: Sequence[int], num_spec_tokens: int
) -> StepAlignment | Refusal:
    """Estimate from streamed chunk sizes alone: chunk c ≥ 1 is one step, accepted = tokens − 1.

    An estimate because a step without drafts (n-gram) counts as a step that accepted 0,
    a coalesced pair of small steps cannot be told from one step, and a last chunk cut by
    max_tokens under-counts its step. Refused when any chunk carries more than K + 1
    tokens, or the first more than one: the server coalesced steps.
    """
    _check_counts(chunk_tokens, "chunk_tokens")
    if num_spec_tokens < 1:
        raise ValueError(f"num_spec_tokens {num_spec_tokens} must be at least 1")
    refusal = _first_chunk_refusal(chunk_tokens) or _coalesced_refusal(
        chunk_tokens, num_spec_tokens
    )
    if refusal is not None:
        return refusal
    starts: list[int] = []
    accepted: list[int] = []
    position = chunk_tokens[0]
    for tokens in chunk_tokens[1:]:
        if tokens == 0:
            continue
        starts.append(position)
        accepted.append(tokens - 1)
        position += tokens
    return StepAlignment(tuple(starts), tuple(accepted), exact=False)


def acceptance_length_by_position(
    alignments: Iterable[StepAlignment],
    max_tokens: int,
    bin_tokens: int = DEFAULT_BIN_TOKENS,
) -> list[PositionBin]:
    """AL per bin of output position: bin b holds steps with start in [b·w, (b+1)·w).

    AL_b = 1 + Σ accepted / Σ steps over the steps of all requests that started in bin b
    (step-weighted; higher is better). Bins cover [0, max_tokens) (the output cap); the
    last may be shorter. A bin without steps has AL None. `exact` is False when any
    request's alignment was a chunk estimate.
    """
    if bin_tokens < 1:
        raise ValueError(f"bin_tokens {bin_tokens} must be at least 1")
    if max_tokens < 1:
        raise ValueError(f"max_tokens {max_tokens} must be at least 1")
    num_bins = -(-max_tokens // bin_tokens)
    steps = [0] * num_bins
    accepted = [0] * num_bins
    exact = True
    for alignment in alignments:
        exact = exact and alignment.exact
        for start, count in zip(alignment.start_positions, alignment.accepted, strict=True):
            if start >= max_tokens:
                raise ValueError(f"a step starts at token {start}, past max_tokens {max_tokens}")
            index = start // bin_tokens
            steps[index] += 1
            accepted[index] += count
    return [
        PositionBin(
            start=index * bin_tokens,
            end=min((index + 1) * bin_tokens, max_tokens),
            steps=StepAcceptance(steps[index], accepted[index], exact),
        )
        for index in range(num_bins)
    ]


def acceptance_length_by_span(
    requests: Iterable[tuple[StepAlignment, int | None]],
) -> SpanSplit | Refusal:
    """AL of thinking vs answer, given each request's answer-start token index.

    For a request whose answer starts at output token `boundary` (the number of thinking
    tokens, markers included), a step is thinking when its start < boundary, else answer.
    AL_span = 1 + Σ accepted / Σ steps over those steps, pooled over the requests
    (step-weighted; higher is better). A boundary of 0 means an answer without thinking;
    None means no thinking span was found: that request stays out of the split (its
    steps are not invented into either side). Refused when no request had a span.
    """
    thinking_steps = thinking_accepted = answer_steps = answer_accepted = 0
    with_span = without_span = 0
    exact = True
    for alignment, boundary in requests:
        if boundary is None:
            without_span += 1
            continue
        if boundary < 0:
            raise ValueError(f"answer-start token {boundary} is negative")
        with_span += 1
        exact = exact and alignment.exact
        for start, count in zip(alignment.start_positions, alignment.accepted, strict=True):
            if start < boundary:
                thinking_steps += 1
                thinking_accepted += count
            else:
                answer_steps += 1
                answer_accepted += count
    if with_span == 0:
        return Refusal(
            f"no thinking span found in any of {without_span} requests: "
            "the server sent no reasoning text and no <think> tags"
        )
    return SpanSplit(
        thinking=StepAcceptance(thinking_steps, thinking_accepted, exact),
        answer=StepAcceptance(answer_steps, answer_accepted, exact),
        num_requests_with_span=with_span,
        num_requests_without_span=without_span,
    )


def align_request(
    per_step_accepted: Sequence[int] | None,
    chunk_tokens: Sequence[int],
    output_tokens: int,
    num_spec_tokens: int,
) -> StepAlignment | Refusal:
    """The best alignment one request's data allows (see the module docstring's order).

    With `per_step_accepted` (vLLM `detailed`): `align_per_step`, else through the chunks
    with `align_per_step_with_chunks`; without it: `align_chunks_estimate` (exact=False).
    """
    if per_step_accepted is None:
        return align_chunks_estimate(chunk_tokens, num_spec_tokens)
    direct = align_per_step(per_step_accepted, output_tokens)
    if isinstance(direct, StepAlignment):
        return direct
    through_chunks = align_per_step_with_chunks(per_step_accepted, chunk_tokens, num_spec_tokens)
    if isinstance(through_chunks, StepAlignment):
        return through_chunks
    return Refusal(f"{direct.reason}; and {through_chunks.reason}")
