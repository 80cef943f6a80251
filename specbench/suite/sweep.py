"""A K sweep: a speculative server whose `num_speculative_tokens` is a list of Ks.

`[servers.eagle3]` with `speculative.num_speculative_tokens = [1, 2, 3]` becomes the servers
`eagle3-k1`, `eagle3-k2`, `eagle3-k3`, each a full copy with one K, in the list's order.
The expansion happens once, on the raw tables where the suite is loaded, so everything
after it (plan, cells, launches, results folders, manifest, report, gate, Slurm shards)
sees ordinary servers with an int K. A server's identity is its own expanded config, never
the list: a list grown from [1, 2, 3] to [1, 2, 3, 4] keeps the first three servers as they
were, and a rerun into their results directory measures only `eagle3-k4`.

An emulator server's per-position acceptance lists cover the largest K; each K keeps its
first K values. K = 0 is the suite's baseline (the `baseline = true` server, speculation
off), never a speculative config: vLLM refuses a static `num_speculative_tokens = 0`.
A K schedule (`num_speculative_tokens_per_batch_size`) on a sweep is refused: a schedule
has one maximum.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.launch.config import SCHEDULE_KEY

#: Where a sweep's list is written in a server's table.
FIELD = "speculative.num_speculative_tokens"
#: Emulator settings with one value per draft position: a draft's acceptance at a position
#: does not depend on how many positions it drafts, so each K takes the first K values (and
#: keeps them as the list grows: its identity is unchanged).
PER_POSITION = ("acceptance", "reasoning_acceptance")


def swept_name(server: str, k: int) -> str:
    """The name of one K of a sweep: `eagle3`, 2 → `eagle3-k2`."""
    return f"{server}-k{k}"


def k_values(server: str, table: dict[str, Any], source: Path) -> list[int] | None:
    """The Ks a server's merged `table` sweeps; None when it sweeps none (an int K, or no
    speculation). A bad list is one line naming the field and file."""
    speculative = table.get("speculative")
    if not isinstance(speculative, dict):
        return None
    values = speculative.get("num_speculative_tokens")
    if not isinstance(values, list):
        return None
    where = f"{source}: servers.{server}.{FIELD}"
    if not values:
        raise SpecbenchError(
            f"{where}: the K list is empty; list Ks of 1 or more, e.g. [1, 2, 3], or give one K"
        )
    # bool is an int to Python; `true` is no K.
    if any(not isinstance(k, int) or isinstance(k, bool) for k in values):
        raise SpecbenchError(f"{where}: Ks are integers of 1 or more, got {_shown(values)}")
    if 0 in values:
        raise SpecbenchError(
            f"{where}: K = 0 is the baseline (the server with baseline = true, speculation "
            f"off), not a speculative config; list Ks of 1 or more, got {_shown(values)}"
        )
    if any(k < 1 for k in values):
        raise SpecbenchError(f"{where}: Ks are integers of 1 or more, got {_shown(values)}")
    repeated = sorted({k for k in values if values.count(k) > 1})
    if repeated:
        raise SpecbenchError(
            f"{where}: K {', '.join(map(str, repeated))} listed twice in {_shown(values)}; "
            "list each K once"
        )
    if speculative.get(SCHEDULE_KEY) is not None:
        raise SpecbenchError(
            f"{source}: servers.{server}.speculative.{SCHEDULE_KEY}: a K schedule on a K sweep "
            f"{_shown(values)}; a schedule has one maximum (num_speculative_tokens): give one K "
            "for the scheduled server, and sweep the fixed Ks in another server"
        )
    if table.get("baseline") is True:
        raise SpecbenchError(
            f"{where}: a K sweep on the baseline server; the baseline is K = 0 (speculation "
            "off): sweep a speculative server"
        )
    return values


def expand_sweep(
    server: str, table: dict[str, Any], taken: Collection[str], source: Path
) -> dict[str, dict[str, Any]]:
    """`server`'s merged table, or one copy per K of its sweep named `NAME-kN` (list order).

    `taken` holds the names of the suite's other servers: a swept name among them (a
    hand-written `eagle3-k2` beside a sweep of `eagle3` over 2) is one line naming both.
    """
    ks = k_values(server, table, source)
    if ks is None:
        return {server: table}
    emulator = table.get("emulator")
    per_position = {
        key: values
        for key in PER_POSITION
        if isinstance(emulator, dict) and isinstance(values := emulator.get(key), list)
    }
    for key, values in per_position.items():
        if len(values) < max(ks):
            raise SpecbenchError(
                f"{source}: servers.{server}.emulator.{key}: {len(values)} values, but the K "
                f"sweep {ks} goes up to K = {max(ks)}; give one value per draft position up to "
                "the largest K (each K takes its first K)"
            )
    expanded = {}
    for k in ks:
        name = swept_name(server, k)
        if name in taken:
            raise SpecbenchError(
                f"{source}: servers.{server}.{FIELD}: the sweep's server {name!r} (K = {k}) "
                f"clashes with [servers.{name}]; rename one of them"
            )
        copied = copy.deepcopy(table)
        copied["speculative"]["num_speculative_tokens"] = k
        for key, values in per_position.items():
            copied["emulator"][key] = values[:k]
        expanded[name] = copied
    return expanded


def _shown(values: list[Any]) -> str:
    """A K list as the TOML it came from (`"2"` quoted, `true` lower-case)."""
    shown = [
        str(v).lower() if isinstance(v, bool) else f'"{v}"' if isinstance(v, str) else str(v)
        for v in values
    ]
    return f"[{', '.join(shown)}]"
