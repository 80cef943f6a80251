"""`specbench emulate`: a deterministic stand-in for a vLLM 0.32 server, with no model.

It speaks the part of vLLM's OpenAI-compatible API and `/metrics` exposition that
specbench uses, emulates batching, speculative acceptance with known per-position
probabilities, and (optionally) corrupted outputs, so the whole harness can be tested
and demonstrated without a GPU. See `engine` (time and acceptance model), `tokens` (fake
tokenizer and model), `protocol`/`stream` (response shapes), `metrics` (exposition).

Its names load on first use (PEP 562), so that importing the package does not import
pydantic and the server. Its settings are declared in `common/emulator_settings.py`, which
the CLI reads at start-up and `launch` derives a suite's `[emulator]` table from.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specbench.emulator.config import EmulatorConfig, make_emulator_config, parse_acceptance
    from specbench.emulator.server import build_app, serve_emulator

_HOMES = {
    "EmulatorConfig": "specbench.emulator.config",
    "make_emulator_config": "specbench.emulator.config",
    "parse_acceptance": "specbench.emulator.config",
    "build_app": "specbench.emulator.server",
    "serve_emulator": "specbench.emulator.server",
}

__all__ = [
    "EmulatorConfig",
    "build_app",
    "make_emulator_config",
    "parse_acceptance",
    "serve_emulator",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
