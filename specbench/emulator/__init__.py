"""`specbench emulate`: a deterministic stand-in for a vLLM 0.32 server, with no model.

It speaks the part of vLLM's OpenAI-compatible API and `/metrics` exposition that
specbench uses, emulates batching, speculative acceptance with known per-position
probabilities, and (optionally) corrupted outputs, so the whole harness can be tested
and demonstrated without a GPU. See `engine` (time and acceptance model), `tokens` (fake
tokenizer and model), `protocol`/`stream` (response shapes), `metrics` (exposition).
"""

from specbench.emulator.config import EmulatorConfig, make_emulator_config, parse_acceptance
from specbench.emulator.server import build_app, serve_emulator

__all__ = [
    "EmulatorConfig",
    "build_app",
    "make_emulator_config",
    "parse_acceptance",
    "serve_emulator",
]
