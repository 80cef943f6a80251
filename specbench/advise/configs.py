"""What each server config of a results directory is to the advice: its K, or its schedule.

Read from the manifest's resolved suite (`manifest.json` → `suite.servers`), never from
a server: the baseline (`baseline = true`, speculation off) is K = 0; a speculative server
with an integer `num_speculative_tokens` is that fixed K (a K sweep's `NAME-kN` servers are
ordinary servers by then, `suite.sweep`); one that names a
`num_speculative_tokens_per_batch_size` schedule is a schedule, with its maximum K. A server
the suite does not describe (attached, or an older manifest without the suite) is left out
of the advice, and said so by the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from specbench.common.k_schedule import KSchedule, check_schedule

#: The speculative-config key of a K schedule (vLLM 0.32).
SCHEDULE_KEY = "num_speculative_tokens_per_batch_size"


@dataclass(frozen=True, slots=True)
class AdvisedConfig:
    """One server config as the advice sees it."""

    server: str
    #: 0: the baseline; N: a fixed K; None: a schedule.
    k: int | None
    #: The schedule's ranges, for a schedule server; else None.
    schedule: KSchedule | None = None
    #: The speculative server's `--speculative-config` fields as the suite resolved them
    #: (method, model, K, …); None for the baseline.
    speculative: Mapping[str, Any] | None = None
    #: The K sweep the server came from (`suite.k_sweeps`), e.g. `eagle3`; None if none.
    sweep: str | None = None

    @property
    def is_fixed(self) -> bool:
        """The baseline or one fixed K: a candidate of the pick."""
        return self.k is not None

    @property
    def name(self) -> str:
        """How a table names it: `K = 3 (eagle3-k3)`, `K = 0 (baseline)`, `schedule (NAME)`."""
        if self.k is None:
            return f"schedule ({self.server})"
        return f"K = {self.k} ({self.server})"


def _schedule_of(speculative: Mapping[str, Any]) -> KSchedule | None:
    """The schedule a speculative table names (as a field or inside `extra`), checked."""
    extra = speculative.get("extra") or {}
    value = speculative.get(SCHEDULE_KEY, extra.get(SCHEDULE_KEY))
    if value is None:
        return None
    return check_schedule(value)


def configs_from_suite(suite: Mapping[str, Any]) -> dict[str, AdvisedConfig]:
    """Each server of a resolved suite (`Manifest.suite`) → its `AdvisedConfig`, in order.

    A server that neither is the baseline nor speculates (a second target-only server)
    is left out: it has no K.
    """
    sweeps = {
        server: sweep
        for sweep, servers in (suite.get("k_sweeps") or {}).items()
        for server in servers
    }
    configs: dict[str, AdvisedConfig] = {}
    for server, table in (suite.get("servers") or {}).items():
        if not isinstance(table, Mapping):
            continue
        speculative = table.get("speculative")
        if table.get("baseline") is True:
            configs[server] = AdvisedConfig(server, 0)
        elif isinstance(speculative, Mapping):
            schedule = _schedule_of(speculative)
            k = None if schedule is not None else int(speculative["num_speculative_tokens"])
            configs[server] = AdvisedConfig(
                server, k, schedule, dict(speculative), sweeps.get(server)
            )
    return configs
