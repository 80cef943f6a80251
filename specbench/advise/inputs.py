"""What `specbench advise` reads: results directories of one suite holding a K grid.

Several directories may be given (a campaign grown into a second folder): they must be
results of the same suite and target model, and a server name must mean the same K in
each. Their launches stay distinct (launch `i` of one folder is not launch `i` of
another). Anything else, and a grid the advice cannot choose in (no baseline, fewer than
two Ks), is one line naming the directory or what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from specbench.advise.configs import AdvisedConfig, configs_from_suite
from specbench.common.errors import SpecbenchError
from specbench.results import columns as C
from specbench.results.selection import mixed_cells

if TYPE_CHECKING:
    import pandas as pd

    from specbench.advise.advice import Advice
    from specbench.advise.slo import Slo


@dataclass(frozen=True, slots=True)
class AdviceInputs:
    """The frame (labels are server names, launches distinct across folders) and configs."""

    frame: pd.DataFrame
    configs: dict[str, AdvisedConfig]
    suite: str
    #: Per directory, the resolved suite (`manifest.suite`), in the order given.
    suites: tuple[dict[str, object], ...]


def _suite_of(directory: Path) -> dict[str, object]:
    from specbench.store.layout import MANIFEST
    from specbench.store.manifest import read_manifest

    if not directory.is_dir():
        raise SpecbenchError(f"{directory}: no such results directory")
    manifest = read_manifest(directory)
    if manifest is None:
        raise SpecbenchError(f"{directory}: not a specbench results directory (no {MANIFEST})")
    if not manifest.suite:
        raise SpecbenchError(
            f"{directory}/{MANIFEST}: no suite recorded (attached servers): the advice needs "
            "each server's K from the suite"
        )
    return dict(manifest.suite)


def _models(suite: dict[str, object]) -> tuple[str, ...]:
    servers = suite.get("servers") or {}
    assert isinstance(servers, dict)
    return tuple(sorted({str(s.get("model")) for s in servers.values() if isinstance(s, dict)}))


def load_inputs(directories: Sequence[Path]) -> AdviceInputs:
    """The advice's inputs from `directories`, checked (module docstring)."""
    from specbench.results.frame import cells_frame
    from specbench.results.loading import load_cells

    suites = [_suite_of(d) for d in directories]
    name, models = suites[0].get("name"), _models(suites[0])
    configs: dict[str, AdvisedConfig] = {}
    for directory, suite in zip(directories, suites, strict=True):
        if suite.get("name") != name or _models(suite) != models:
            raise SpecbenchError(
                f"{directory}: cells of suite {suite.get('name')!r} ({', '.join(_models(suite))}),"
                f" not of {name!r} ({', '.join(models)}) as {directories[0]}; advise one "
                "suite's results"
            )
        for server, config in configs_from_suite(suite).items():
            known = configs.setdefault(server, config)
            if (known.k, known.schedule) != (config.k, config.schedule):
                raise SpecbenchError(
                    f"{directory}: server {server} is {config.name} here but {known.name} in "
                    f"{directories[0]}"
                )
    frames = []
    for directory in directories:
        cells, _ = load_cells([directory])
        frame = cells_frame(cells)
        if frame.empty:
            continue
        frame[C.LABEL] = frame[C.SERVER_LABEL]
        frame[C.LAUNCH] = [f"{directory}#{launch}" for launch in frame[C.LAUNCH]]
        frames.append(frame)
    if not frames:
        raise SpecbenchError(f"{', '.join(map(str, directories))}: no measured cells")
    import pandas as pd

    frame = pd.concat(frames, ignore_index=True)
    _check_grid(frame, configs, directories)
    return AdviceInputs(frame, configs, str(name), tuple(suites))


def _check_grid(
    frame: pd.DataFrame, configs: dict[str, AdvisedConfig], directories: Sequence[Path]
) -> None:
    """A baseline and two or more Ks with whole-workload cells, or one line saying which
    is missing."""
    where = ", ".join(map(str, directories))
    measured = set(mixed_cells(frame)[C.LABEL])
    ks = sorted({c.k for s, c in configs.items() if s in measured and c.k is not None})
    if 0 not in ks:
        raise SpecbenchError(
            f"{where}: no baseline cells (a server with baseline = true is K = 0): the advice "
            "compares every K with it"
        )
    if len([k for k in ks if k >= 1]) < 2:
        found = ", ".join(f"K = {k}" for k in ks if k >= 1) or "none"
        raise SpecbenchError(
            f"{where}: one K measured ({found}); the advice chooses among two or more: "
            "sweep them, e.g. num_speculative_tokens = [1, 2, 3, 4]"
        )


def grid_advice(directories: Sequence[Path], slo: Slo | None = None) -> Advice | None:
    """The advice of the report's results, or None when they hold no K grid (fewer than
    two fixed Ks ≥ 1 in their suites): most reports compare one speculative config.

    SpecbenchError when they hold a grid the advice cannot use (no baseline cells,
    suites that differ), for the report to say why its section is absent.
    """
    from specbench.advise.advice import build_advice

    suites = [_suite_of(d) for d in directories]
    ks = {c.k for suite in suites for c in configs_from_suite(suite).values() if c.k is not None}
    if len([k for k in ks if k >= 1]) < 2:
        return None
    inputs = load_inputs(directories)
    return build_advice(inputs.frame, inputs.configs, slo=slo)
