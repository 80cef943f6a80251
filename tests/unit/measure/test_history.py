"""Later turns replay earlier answers as streamed text, or decoded as specdec_bench does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import ValidationError

from specbench.client.record import RequestRecord
from specbench.client.sender import Prompt
from specbench.common.errors import SpecbenchError
from specbench.data.conversation import Conversation
from specbench.measure.history import DecodedHistory, replay_for, streamed_text
from specbench.measure.loop import run_closed_loop
from specbench.suite.model import MEASURED_FIELDS, WorkloadSpec


class SpecialTokenTokenizer:
    """A stand-in for a Hugging Face tokenizer: ids 0..9 are digits, 1 is also `<s>`."""

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(
            "" if i == 1 and skip_special_tokens else ("<s>" if i == 1 else str(i)) for i in ids
        )


#: Every turn's answer: ids [7, 1, 8], whose streamed text drops the special token.
PLAIN = {"output_token_ids": [7, 1, 8], "output_text": "78"}
#: A reasoning server's: thinking sent apart (`delta.reasoning`), then the answer.
THINKING = {
    "output_token_ids": [7, 8],
    "output_text": "answer",
    "reasoning_text": "thought",
    "reasoning_source": "reasoning",
}


class AnsweringSender:
    """Answers every turn in two chunks with the same record fields (`answer`)."""

    def __init__(self, answer: dict[str, object]) -> None:
        self.answer = answer
        self.prompts: list[Prompt] = []

    async def send(self, prompt: Prompt, record: RequestRecord) -> None:
        self.prompts.append(prompt)
        record.chunk_tokens = [1, 2]
        for name, value in self.answer.items():
            setattr(record, name, value)


def _run(replay, answer: dict[str, object] = PLAIN) -> list[Prompt]:  # type: ignore[no-untyped-def]
    sender = AnsweringSender(answer)
    conversation = Conversation(question_id="q", category="c", turns=("first", "second"))
    kept: list[RequestRecord] = []

    def drop_outputs(record: RequestRecord) -> None:
        # like a cell that does not keep outputs: history must be taken before this
        record.output_text = record.reasoning_text = None
        record.output_token_ids = None
        kept.append(record)

    asyncio.run(
        run_closed_loop(
            [conversation], 1, sender, "chat", drop_outputs, window_start_ns=0, replay=replay
        )
    )
    assert len(kept) == 2
    return sender.prompts


def test_streamed_text_history() -> None:
    prompts = _run(streamed_text)
    assert prompts[1][1] == {"role": "assistant", "content": "78"}  # type: ignore[index]


def test_decoded_history_keeps_special_tokens() -> None:
    replay = DecodedHistory(SpecialTokenTokenizer())
    prompts = _run(replay)
    assert prompts[1][1] == {"role": "assistant", "content": "7<s>8"}  # type: ignore[index]
    assert replay.fallbacks == 0
    no_ids = RequestRecord(question_id="q", turn=0, num_turns=1, category="c", output_text="x")
    assert replay(no_ids) == "x" and replay.fallbacks == 1


def test_decoded_history_needs_a_tokenizer(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="needs tokenizer"):
        WorkloadSpec(dataset="d.jsonl", concurrency=[1], max_tokens=8, history="decoded")
    spec = WorkloadSpec(
        dataset="d.jsonl", concurrency=[1], max_tokens=8, history="decoded", tokenizer="t"
    )
    assert spec.history == "decoded"
    assert "history" in MEASURED_FIELDS  # a different history is a different workload
    with pytest.raises(SpecbenchError, match="needs the workload's tokenizer"):
        replay_for("decoded", None)
    assert replay_for("streamed_text", None) is streamed_text


def test_earlier_thinking_goes_back_in_the_reasoning_field_for_the_template() -> None:
    second = _run(streamed_text, THINKING)[1]
    assert second == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "answer", "reasoning": "thought"},
        {"role": "user", "content": "second"},
    ]
    # A decoded replay already holds the thinking in its ids: no field added.
    decoded = _run(DecodedHistory(SpecialTokenTokenizer()), THINKING)[1]
    assert isinstance(decoded, list)
    assert decoded[1] == {"role": "assistant", "content": "78"}


class ThinkingTemplateTokenizer:
    """A stand-in whose chat template renders like Qwen3's: earlier thinking dropped from
    history (inline or in `reasoning_content`), unless `keep` (templates that keep it)."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True):  # type: ignore[no-untyped-def]
        parts = []
        for message in messages:
            content = message["content"]
            if message["role"] == "assistant" and not self.keep:
                content = content.split("</think>")[-1].strip()
            elif message["role"] == "assistant" and message.get("reasoning_content"):
                content = f"<think>{message['reasoning_content']}</think>{content}"
            parts.append(f"<|{message['role']}|>{content}")
        return "".join(parts) + ("<|assistant|>" if add_generation_prompt else "")


def test_the_template_rule_is_found_by_rendering() -> None:
    from specbench.measure.history import template_thinking_rule, thinking_replay_record

    assert template_thinking_rule(ThinkingTemplateTokenizer(keep=False)) == {
        "field": "dropped",
        "inline": "dropped",
    }
    assert template_thinking_rule(ThinkingTemplateTokenizer(keep=True)) == {
        "field": "kept",
        "inline": "kept",
    }
    assert thinking_replay_record(None) == {
        "replay": "as_streamed_template_decides",
        "template": "not checked: the workload names no tokenizer",
    }
