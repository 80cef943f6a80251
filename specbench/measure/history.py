"""How a later turn replays the target's earlier answers (its history).

- `streamed_text`: the answer's text as streamed (specbench's default so far). Special
  tokens are not in it and a token cut inside a UTF-8 character streams as U+FFFD, so the
  history can differ from the official harness's.
- `decoded`: `tokenizer.decode(output_token_ids)`, special tokens kept: what NVIDIA
  specdec_bench replays (`utils.py` `decode_chat`), so later turns get the official prompts.
  Needs the workload's `tokenizer` and the answer's token ids (vLLM's `return_token_ids`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from specbench.client.record import RequestRecord

History = Literal["streamed_text", "decoded"]
Replay = Callable[[RequestRecord], str]


def streamed_text(record: RequestRecord) -> str:
    """The answer as streamed."""
    return record.output_text or ""


class DecodedHistory:
    """The answer decoded from its token ids, special tokens kept (specdec_bench's replay).

    An answer without token ids (a server that does not return them) falls back to its
    streamed text; `fallbacks` counts them.
    """

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self.fallbacks = 0

    def __call__(self, record: RequestRecord) -> str:
        if not record.output_token_ids:
            self.fallbacks += 1
            return streamed_text(record)
        return str(self._tokenizer.decode(record.output_token_ids, skip_special_tokens=False))


def replay_for(history: History, tokenizer: str | None) -> Replay:
    """The replay a workload asked for; `decoded` loads its tokenizer (one-line error)."""
    if history == "streamed_text":
        return streamed_text
    from specbench.common.errors import SpecbenchError
    from specbench.data.context import load_tokenizer

    if tokenizer is None:
        raise SpecbenchError('history = "decoded" needs the workload\'s tokenizer (a folder)')
    return DecodedHistory(_cached_tokenizer(tokenizer, load_tokenizer))


_TOKENIZERS: dict[str, Any] = {}


def _cached_tokenizer(path: str, load: Callable[[str], Any]) -> Any:
    """One tokenizer load per folder for the whole campaign (a load takes seconds)."""
    if path not in _TOKENIZERS:
        _TOKENIZERS[path] = load(path)
    return _TOKENIZERS[path]


#: How a later turn carries earlier thinking: back as the server gave it (the assistant
#: message's `reasoning` field, or inline `<think>` text in the content; a decoded replay
#: holds it in the ids), so the chat template keeps or drops it by its own rule.
THINKING_REPLAY = "as_streamed_template_decides"
_THINKING_MARK = "specbench-earlier-thinking"


def template_thinking_rule(tokenizer: Any) -> dict[str, str]:
    """Whether the chat template keeps earlier thinking: {"field": …, "inline": …}.

    Renders a two-turn chat whose first answer carries a marked thinking text, once in the
    reasoning field (both `reasoning` and `reasoning_content`, as templates read either)
    and once inline between `<think>` tags, and looks for the mark: "kept" or "dropped".
    """
    rules: dict[str, str] = {}
    forms = {
        "field": {
            "role": "assistant",
            "content": "The answer.",
            "reasoning": _THINKING_MARK,
            "reasoning_content": _THINKING_MARK,
        },
        "inline": {
            "role": "assistant",
            "content": f"<think>\n{_THINKING_MARK}\n</think>\n\nThe answer.",
        },
    }
    for name, answer in forms.items():
        messages = [
            {"role": "user", "content": "First question?"},
            answer,
            {"role": "user", "content": "Second question?"},
        ]
        rendered = tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
        rules[name] = "kept" if _THINKING_MARK in str(rendered) else "dropped"
    return rules


def thinking_replay_record(tokenizer_path: str | None) -> dict[str, str]:
    """The manifest's record of how earlier thinking is replayed (`WorkloadRecord`)."""
    record = {"replay": THINKING_REPLAY}
    if tokenizer_path is None:
        record["template"] = "not checked: the workload names no tokenizer"
        return record
    from specbench.common.errors import SpecbenchError
    from specbench.data.context import load_tokenizer

    try:
        rules = template_thinking_rule(_cached_tokenizer(tokenizer_path, load_tokenizer))
    except SpecbenchError as error:
        record["template"] = f"not checked: {error}"
        return record
    except Exception as error:  # noqa: BLE001 - a template that cannot render is recorded, not fatal
        record["template"] = f"not checked: the chat template did not render ({error})"[:300]
        return record
    record.update({f"template_{name}": rule for name, rule in rules.items()})
    return record
