"""What the resolvers of one config share: the upstream reader, loaded sources, one HLE generator.

A fresh `Context` per config, as Model-Optimizer builds a fresh `SPEEDBench` per config: the
HLE throughput rows draw their demonstrations from one `numpy` generator (seed 42) shared by
the whole config, in upstream row order. NeMo-Skills' flavour holds one generator for the
whole process instead: `shared_rng` then carries it from config to config.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data.prepare.upstream import Upstream
from specbench.data.speed_bench import CONFIGS, PLACEHOLDER


@dataclass
class Context:
    config: str
    upstream: Upstream
    flavour: str = "model-optimizer"
    #: A one-item list holding a generator shared across configs (NeMo-Skills' flavour).
    shared_rng: list[Any] | None = None
    memo: dict[Any, Any] = field(default_factory=dict)
    _hle_rng: Any = None

    def num_tokens(self, where: str) -> int:
        """The config's prompt length in o200k tokens; a throughput-only source elsewhere fails."""
        tokens = CONFIGS[self.config]
        if tokens is None:
            raise SpecbenchError(
                f"{where}: a throughput-only source in config {self.config!r}; "
                "it needs a throughput_<N>k config"
            )
        return tokens

    def cached(self, key: Any, build: Callable[[], Any]) -> Any:
        """A loaded source or a derived table, built once per config."""
        if key not in self.memo:
            self.memo[key] = build()
        return self.memo[key]

    def hle_rng(self) -> Any:
        """The HLE generator: this config's, or the one shared across configs."""
        import numpy as np

        if self.shared_rng is not None:
            if not self.shared_rng:
                self.shared_rng.append(np.random.default_rng(42))
            return self.shared_rng[0]
        if self._hle_rng is None:
            self._hle_rng = np.random.default_rng(42)
        return self._hle_rng


def template(row: dict[str, Any]) -> str:
    """The `str.format` template a placeholder row carries after the marker and a blank line."""
    return str(row["turns"][0]).removeprefix(f"{PLACEHOLDER}\n\n")


def first_match(rows: Any, column: str, value: Any, where: str) -> dict[str, Any]:
    """The first row whose `column` equals `value` (the upstream code takes `.iloc[0]`)."""
    for index, item in enumerate(rows[column]):
        if item == value:
            return dict(rows[index])
    raise SpecbenchError(f"{where}: no row with {column} {value!r} in the upstream source")


def index_row(rows: Any, index: int, where: str) -> dict[str, Any]:
    if not 0 <= index < len(rows):
        raise SpecbenchError(
            f"{where}: row {index} asked for, the upstream source has {len(rows)} rows"
        )
    return dict(rows[index])
