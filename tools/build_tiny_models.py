"""Build tiny local models for real-vLLM tests: no download, deterministic, a few seconds.

Run with the vLLM venv's python (it has torch, transformers and tokenizers):

    .venv-vllm/bin/python tools/build_tiny_models.py --out .cache/tiny-models

Writes, under ``--out``:

- ``target/``: a random ``LlamaForCausalLM`` (hidden 256, 2 layers) with a byte-level BPE
  tokenizer (``PreTrainedTokenizerFast``, BOS/EOS/PAD, a chat template).
- ``eagle3/``: an EAGLE3 draft for ``target`` in the public checkpoint layout (``midlayer.*``,
  ``fc``, ``norm``, ``lm_head``, ``d2t``/``t2d`` for a reduced draft vocab) that guesses the
  target repeats its last token: partial acceptance, as with a real draft.
- ``repeat-target/`` and ``parity-eagle3/``: a pair with known acceptance. The target has
  zero ``o_proj``/``down_proj`` and ``lm_head`` equal to its (unit-row) embeddings, so its
  residual stream is the token embedding and it repeats the last prompt token forever. The
  draft passes the target's embedding through (``fc = [I | 0 | 0]``, zero ``o_proj`` and
  ``down_proj``) and its ``lm_head[sigma(t)] = emb[t]``, sigma being the identity on even ids
  and a swap of odd pairs (1<->3, 5<->7, ...). Its drafts are therefore all accepted when the
  prompt's last token id is even and all rejected when it is odd.
- ``models.json``: what each folder is, the tokenizer's special ids, and completions-API
  prompts whose last token id is even or odd.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

SEED = 1234
VOCAB_SIZE = 1024
HIDDEN_SIZE = 256
INTERMEDIATE_SIZE = 512
NUM_LAYERS = 2
NUM_HEADS = 4
NUM_KV_HEADS = 2
MAX_POSITIONS = 8192
# Public EAGLE3 checkpoints carry a reduced draft vocab mapped back through d2t; keep that path
# exercised by the eagle3 draft.
RANDOM_DRAFT_VOCAB_SIZE = 512
# Layer 0 is the embedding output, layer NUM_LAYERS the last decoder layer's output (pre-norm).
AUX_LAYER_IDS = [0, 1, 2]
NUM_SPECULATIVE_TOKENS = 3

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)
# The generation prompt ends with this token; with an even id the known-acceptance pair
# accepts every draft on /v1/chat/completions whatever the messages are.
CHAT_TAIL_TOKEN = ">"

WORDS = (  # noqa: SIM905
    "the a of to and in is it that for on with as was at by be this from or an are not "
    "model token draft target speculative decoding accept reject verify batch cache "
    "layer attention prefill decode length server request stream latency throughput "
    "bench question answer code math story summary reason translate write explain list "
    "compare python function return value loop index array string number prime sum graph "
    "tree river mountain city music garden winter summer light ocean forest planet "
    "history"
).split()
SYLLABLES = "ka lo mi ne su ta ri po ze vu xo qi ba de fi gu".split()  # noqa: SIM905


def training_text(rng: random.Random) -> str:
    """A few tens of KB of word salad: English-ish words, made-up words, digits, punctuation."""
    lines = []
    for _ in range(600):
        words = []
        for _ in range(rng.randint(4, 16)):
            roll = rng.random()
            if roll < 0.7:
                words.append(rng.choice(WORDS))
            elif roll < 0.85:
                words.append("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))))
            else:
                words.append(str(rng.randint(0, 9999)))
        line = " ".join(words)
        lines.append(line[0].upper() + line[1:] + rng.choice([".", "?", "!", ":", ","]))
    return "\n".join(lines) + "\n"


def build_tokenizer(rng: random.Random, out: Path) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer; BOS is prepended by the post-processor like Llama's."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=[PAD, BOS, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(training_text(rng).splitlines(keepends=True), trainer)
    bos_id = tokenizer.token_to_id(BOS)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        model_max_length=MAX_POSITIONS,
        chat_template=CHAT_TEMPLATE,
    )
    fast.save_pretrained(out)
    return fast


def llama_config(tokenizer: PreTrainedTokenizerFast) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=HIDDEN_SIZE,
        intermediate_size=INTERMEDIATE_SIZE,
        num_hidden_layers=NUM_LAYERS,
        num_attention_heads=NUM_HEADS,
        num_key_value_heads=NUM_KV_HEADS,
        max_position_embeddings=MAX_POSITIONS,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        torch_dtype="float32",
    )


def save_target(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, out: Path) -> None:
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)


def unit_embeddings(vocab_size: int) -> torch.Tensor:
    """Random rows scaled to norm sqrt(hidden) so every token's self-logit is the strict max."""
    emb = torch.randn(vocab_size, HIDDEN_SIZE)
    return emb / emb.norm(dim=1, keepdim=True) * HIDDEN_SIZE**0.5


def build_repeat_target(config: LlamaConfig) -> LlamaForCausalLM:
    """A Llama whose residual stream is the token embedding: it repeats its last input token."""
    model = LlamaForCausalLM(config).eval()
    emb = unit_embeddings(config.vocab_size)
    with torch.no_grad():
        model.model.embed_tokens.weight.copy_(emb)
        model.lm_head.weight.copy_(emb)
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
    return model


def sigma(token_id: int, vocab_size: int) -> int:
    """Identity on even ids, swaps odd pairs (1<->3, 5<->7, ...); an involution.

    An odd id whose partner would fall outside the vocab stays fixed (never used in prompts).
    """
    if token_id % 2 == 0:
        return token_id
    partner = token_id + 2 if token_id % 4 == 1 else token_id - 2
    return partner if partner < vocab_size else token_id


def eagle3_config(config: LlamaConfig, draft_vocab_size: int) -> dict[str, Any]:
    """Config in the layout of public EAGLE3 checkpoints, aux layers set for a 2-layer target."""
    return {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_act": "silu",
        "hidden_size": config.hidden_size,
        "intermediate_size": config.intermediate_size,
        "num_attention_heads": config.num_attention_heads,
        "num_key_value_heads": config.num_key_value_heads,
        "num_hidden_layers": 1,
        "max_position_embeddings": config.max_position_embeddings,
        "rms_norm_eps": config.rms_norm_eps,
        "rope_theta": 10000.0,
        "vocab_size": config.vocab_size,
        "draft_vocab_size": draft_vocab_size,
        "tie_word_embeddings": False,
        "bos_token_id": config.bos_token_id,
        "eos_token_id": config.eos_token_id,
        "pad_token_id": config.pad_token_id,
        "torch_dtype": "float32",
        "eagle_aux_hidden_state_layer_ids": AUX_LAYER_IDS,
        "eagle_config": {
            "eagle_aux_hidden_state_layer_ids": AUX_LAYER_IDS,
            "use_aux_hidden_state": True,
        },
    }


def eagle3_weights(
    config: LlamaConfig, draft_vocab_size: int, std: float
) -> dict[str, torch.Tensor]:
    """Random midlayer/fc/norm/lm_head tensors named as in public EAGLE3 checkpoints."""
    hidden = config.hidden_size
    head_dim = hidden // config.num_attention_heads
    kv_dim = head_dim * config.num_key_value_heads
    n_aux = len(AUX_LAYER_IDS)

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(*shape) * std

    return {
        "midlayer.input_layernorm.weight": torch.ones(hidden),
        "midlayer.hidden_norm.weight": torch.ones(hidden),
        "midlayer.post_attention_layernorm.weight": torch.ones(hidden),
        # The first (only) layer attends over [embeds | hidden] concatenated: 2 * hidden wide.
        "midlayer.self_attn.q_proj.weight": rand(hidden, 2 * hidden),
        "midlayer.self_attn.k_proj.weight": rand(kv_dim, 2 * hidden),
        "midlayer.self_attn.v_proj.weight": rand(kv_dim, 2 * hidden),
        "midlayer.self_attn.o_proj.weight": rand(hidden, hidden),
        "midlayer.mlp.gate_proj.weight": rand(config.intermediate_size, hidden),
        "midlayer.mlp.up_proj.weight": rand(config.intermediate_size, hidden),
        "midlayer.mlp.down_proj.weight": rand(hidden, config.intermediate_size),
        "fc.weight": rand(hidden, n_aux * hidden),
        "norm.weight": torch.ones(hidden),
        "lm_head.weight": rand(draft_vocab_size, hidden),
    }


def save_eagle3(out: Path, config: dict[str, Any], weights: dict[str, torch.Tensor]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file({k: v.contiguous() for k, v in weights.items()}, str(out / "model.safetensors"))


def likely_outputs(target: LlamaForCausalLM, count: int) -> torch.Tensor:
    """Sorted ids the target picks most often after a single token, as real draft vocabs
    keep the most frequent tokens; ties and the remainder go by lowest id."""
    vocab = target.config.vocab_size
    bos = torch.full((vocab, 1), target.config.bos_token_id)
    with torch.no_grad():
        picks = target(torch.cat([bos, torch.arange(vocab)[:, None]], dim=1)).logits[:, -1]
    counts = torch.bincount(picks.argmax(-1), minlength=vocab)
    order = sorted(range(vocab), key=lambda t: (-int(counts[t]), t))
    return torch.tensor(sorted(order[:count]))


def build_guess_eagle3(config: LlamaConfig, target: LlamaForCausalLM, out: Path) -> None:
    """A draft that guesses "the target's next token repeats", over a reduced draft vocab.

    ``fc`` picks the target's last-layer output, the layer adds nothing (zero ``o_proj`` and
    ``down_proj``) and ``lm_head`` holds the target's rows for the kept ids, so every draft
    repeats the token the target just produced. The random target often repeats itself, so
    acceptance is partial and depends on the prompt; ids outside the draft vocab
    (draft id i means target id i + d2t[i]) are never drafted.
    """
    hidden = config.hidden_size
    weights = eagle3_weights(config, RANDOM_DRAFT_VOCAB_SIZE, std=0.02)
    kept = likely_outputs(target, RANDOM_DRAFT_VOCAB_SIZE)
    weights["d2t"] = kept - torch.arange(RANDOM_DRAFT_VOCAB_SIZE)
    t2d = torch.zeros(config.vocab_size, dtype=torch.bool)
    t2d[kept] = True
    weights["t2d"] = t2d
    weights["midlayer.self_attn.o_proj.weight"].zero_()
    weights["midlayer.mlp.down_proj.weight"].zero_()
    last = AUX_LAYER_IDS.index(config.num_hidden_layers)
    fc = torch.zeros(hidden, len(AUX_LAYER_IDS) * hidden)
    fc[:, last * hidden : (last + 1) * hidden] = torch.eye(hidden)
    weights["fc.weight"] = fc
    weights["lm_head.weight"] = target.lm_head.weight.detach()[kept].clone()
    save_eagle3(out, eagle3_config(config, RANDOM_DRAFT_VOCAB_SIZE), weights)


def build_parity_eagle3(config: LlamaConfig, target: LlamaForCausalLM, out: Path) -> None:
    """Pass-through draft: its output is norm(emb[t]) and its lm_head maps that to sigma(t)."""
    hidden = config.hidden_size
    weights = eagle3_weights(config, config.vocab_size, std=0.02)
    weights["midlayer.self_attn.o_proj.weight"].zero_()
    weights["midlayer.mlp.down_proj.weight"].zero_()
    fc = torch.zeros(hidden, len(AUX_LAYER_IDS) * hidden)
    fc[:, :hidden] = torch.eye(hidden)
    weights["fc.weight"] = fc
    emb = target.model.embed_tokens.weight.detach().clone()
    perm = torch.tensor([sigma(t, config.vocab_size) for t in range(config.vocab_size)])
    lm_head = torch.empty_like(emb)
    lm_head[perm] = emb
    weights["lm_head.weight"] = lm_head
    save_eagle3(out, eagle3_config(config, config.vocab_size), weights)


def parity_prompts(
    tokenizer: PreTrainedTokenizerFast, rng: random.Random, parity: int, count: int
) -> list[tuple[str, int]]:
    """Raw prompts (BOS is added by the tokenizer) whose last token id has the given parity."""
    special = set(tokenizer.all_special_ids)
    found: list[tuple[str, int]] = []
    seen_last: set[int] = set()
    while len(found) < count:
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 12))]
        text = " ".join(words).capitalize()
        ids = tokenizer(text)["input_ids"]
        last = ids[-1]
        if ids[0] != tokenizer.bos_token_id or last in special or last % 2 != parity:
            continue
        # A sigma partner equal to the token itself would make an odd prompt accept; a last
        # token seen earlier in the prompt would give n-gram drafting a wrong continuation.
        if last in seen_last or (parity == 1 and sigma(last, len(tokenizer)) == last):
            continue
        if ids.count(last) > 1:
            continue
        seen_last.add(last)
        found.append((text, last))
    return found


def chat_tail_token_id(tokenizer: PreTrainedTokenizerFast) -> int:
    """The last prompt token of every chat request (the generation prompt's tail)."""
    ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=True
    )
    if hasattr(ids, "keys"):
        ids = ids["input_ids"]
    last = int(ids[-1])
    if last != tokenizer.convert_tokens_to_ids(CHAT_TAIL_TOKEN) or last % 2:
        raise SystemExit(
            f"chat template tail token {last} is not the even id of {CHAT_TAIL_TOKEN!r}"
        )
    return last


def check_repeat_target(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast) -> None:
    """Fail the build if the repeat target does not repeat (a cheap guard on the construction)."""
    ids = tokenizer("Model draft target", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=8, do_sample=False)
    new = out[0, ids.shape[1] :].tolist()
    if new != [ids[0, -1].item()] * 8:
        raise SystemExit(f"repeat-target does not repeat its last token: {new}")


def describe(config: LlamaConfig, **extra: Any) -> dict[str, Any]:
    return {
        "architecture": "LlamaForCausalLM",
        "hidden_size": config.hidden_size,
        "num_hidden_layers": config.num_hidden_layers,
        "vocab_size": config.vocab_size,
        "max_position_embeddings": config.max_position_embeddings,
        **extra,
    }


def build(out: Path) -> dict[str, Any]:
    rng = random.Random(SEED)
    torch.manual_seed(SEED)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)

    tokenizer = build_tokenizer(rng, out / "target")
    config = llama_config(tokenizer)
    target = LlamaForCausalLM(config).eval()
    save_target(target, tokenizer, out / "target")
    build_guess_eagle3(config, target, out / "eagle3")

    repeat = build_repeat_target(config)
    check_repeat_target(repeat, tokenizer)
    save_target(repeat, tokenizer, out / "repeat-target")
    build_parity_eagle3(config, repeat, out / "parity-eagle3")

    chat_tail = chat_tail_token_id(tokenizer)
    even = parity_prompts(tokenizer, rng, parity=0, count=8)
    odd = parity_prompts(tokenizer, rng, parity=1, count=8)
    eagle_desc = {
        "architecture": "LlamaForCausalLMEagle3",
        "num_hidden_layers": 1,
        "hidden_size": config.hidden_size,
        "vocab_size": config.vocab_size,
        "eagle_aux_hidden_state_layer_ids": AUX_LAYER_IDS,
    }
    manifest = {
        "format_version": 1,
        "paths_relative_to": "this file's folder",
        "tokenizer": {
            "kind": "byte-level BPE (PreTrainedTokenizerFast), same in every target folder",
            "vocab_size": len(tokenizer),
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
            "adds_bos": True,
            "has_chat_template": True,
        },
        "models": {
            "target": describe(config, path="target", role="target", weights="random"),
            "eagle3": {
                **eagle_desc,
                "path": "eagle3",
                "role": "eagle3 draft",
                "for_target": "target",
                "draft_vocab_size": RANDOM_DRAFT_VOCAB_SIZE,
                "weights": "guesses that the target repeats its last token: partial, "
                "prompt-dependent acceptance",
            },
            "repeat-target": describe(
                config,
                path="repeat-target",
                role="target",
                weights="repeats the last prompt token forever",
            ),
            "parity-eagle3": {
                **eagle_desc,
                "path": "parity-eagle3",
                "role": "eagle3 draft",
                "for_target": "repeat-target",
                "draft_vocab_size": config.vocab_size,
                "weights": "accepts all drafts after an even last token, none after an odd one",
            },
        },
        "known_acceptance": {
            "target": "repeat-target",
            "draft": "parity-eagle3",
            "api": "/v1/completions with a raw string prompt (a chat template fixes the last "
            "token); temperature 0",
            "num_speculative_tokens": NUM_SPECULATIVE_TOKENS,
            "even_prompts": [text for text, _ in even],
            "even_last_token_ids": [last for _, last in even],
            "odd_prompts": [text for text, _ in odd],
            "odd_last_token_ids": [last for _, last in odd],
            "expected_acceptance_length": {"even": 1.0 + NUM_SPECULATIVE_TOKENS, "odd": 1.0},
            "chat_last_token_id": chat_tail,
            "chat_expected_acceptance_length": 1.0 + NUM_SPECULATIVE_TOKENS,
            "expected_draft_acceptance_rate": {"even": 1.0, "odd": 0.0},
            "ngram_on_repeat_target_draft_acceptance_rate": 1.0,
            "ngram_note": "holds for these prompts (their last token occurs once); steps before "
            "the output repeats enough carry fewer than num_speculative_tokens drafts, so the "
            "n-gram AL is below 1 + num_speculative_tokens",
        },
    }
    (out / "models.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to (re)create")
    args = parser.parse_args()
    manifest = build(args.out)
    names = ", ".join(manifest["models"])
    print(f"wrote {names} and models.json to {args.out}")


if __name__ == "__main__":
    main()
