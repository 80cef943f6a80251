"""One entry point from a `--dataset` spec to a ready-to-send `Workload`.

Spec forms:

- `speed-bench:CONFIG` — `nvidia/SPEED-Bench` via `datasets.load_dataset` at a pinned revision
  (`--dataset-revision` overrides it; `$SPECBENCH_SPEED_BENCH_REPO` replaces the repo id,
  e.g. with a local folder laid out like the hub repo).
- `speed-bench:CONFIG:PATH` — SPEED-Bench data prepared locally by NVIDIA's scripts: a
  Model-Optimizer output folder (`data/speed/CONFIG/test.parquet`), a NeMo-Skills folder
  (`CONFIG.jsonl`), or one file (parquet, 8-column JSONL, or NeMo-Skills `messages` JSONL).
- `mt-bench` / `mt-bench:PATH` — FastChat's MT-Bench `question.jsonl` (PATH, or
  `$SPECBENCH_MT_BENCH`).
- `custom:PATH` — custom JSONL, `{"category": str, "turns": [str, ...]}` per line.
- a bare `PATH` — a file with SPEED-Bench's columns is read as SPEED-Bench (its config taken
  from `CONFIG/test.parquet` or `CONFIG.jsonl`); any other file as custom JSONL.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.common.naming import selection_key
from specbench.data import mt_bench, prepared, speed_bench
from specbench.data.conversation import Conversation
from specbench.data.custom import load_custom
from specbench.data.selection import filter_categories, stratified_sample

#: `--entropy-tier` accepts the category names and these short forms.
TIER_ALIASES = {"low": "low_entropy", "high": "high_entropy"}


@dataclass(frozen=True)
class RawDataset:
    """Every validated row a spec names, before selection; placeholders still included.

    `name` is a filesystem-safe slug for result folders; `source` the resolved path or hub
    repo id; `revision` the hub revision used (None for local data); `warnings` lines the
    CLI should show (e.g. `--num-prompts` larger than the dataset).
    """

    spec: str
    name: str
    conversations: tuple[Conversation, ...]
    config: str | None = None
    revision: str | None = None
    source: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def is_speed_bench(self) -> bool:
        """True for SPEED-Bench data, whose categories and placeholders are checked."""
        return self.config is not None

    @property
    def nominal_context_tokens(self) -> int | None:
        """The config's nominal prompt length in o200k tokens (None: natural length, or not
        SPEED-Bench)."""
        return speed_bench.CONFIGS[self.config] if self.config else None

    @property
    def categories(self) -> tuple[str, ...]:
        """Categories present, in first-seen order."""
        return tuple(dict.fromkeys(conversation.category for conversation in self.conversations))


@dataclass(frozen=True)
class Workload(RawDataset):
    """A selected, validated set of conversations (what `select` kept) plus where they came
    from; ready to send."""


def _speed_bench(spec: str, data: speed_bench.SpeedBenchData) -> RawDataset:
    return RawDataset(
        spec=spec,
        name=selection_key(spec),
        conversations=data.conversations,
        source=data.source,
        config=data.config,
        revision=data.revision,
    )


def read_dataset(
    spec: str, *, revision: str | None = None, accept_partial: bool = False
) -> RawDataset:
    """Load and validate every row a `--dataset` spec names (see the module docstring).

    `accept_partial` lets through prepared data marked partial (`data prepare --skip-gated`).
    """
    spec = spec.strip()
    if not spec:
        raise SpecbenchError("--dataset is empty; give speed-bench:CONFIG, mt-bench or a path")
    kind, _, rest = spec.partition(":")
    if kind == "speed-bench":
        config, _, local = rest.partition(":")
        if not config:
            raise SpecbenchError(
                f"--dataset {spec!r}: name a config, e.g. speed-bench:qualitative; "
                f"allowed: {', '.join(speed_bench.CONFIGS)}"
            )
        speed_bench.check_config(config)
        if local:
            return _speed_bench(
                spec,
                prepared.load_prepared(
                    config, Path(local).expanduser(), accept_partial=accept_partial
                ),
            )
        return _speed_bench(spec, speed_bench.load_hub(config, revision))
    if kind == "mt-bench":
        file, conversations, warnings = mt_bench.load_mt_bench(rest or None)
        return RawDataset(
            spec=spec,
            name=selection_key(spec),
            conversations=tuple(conversations),
            source=str(file.resolve()),
            warnings=tuple(warnings),
        )
    path = Path(rest if kind == "custom" else spec).expanduser()
    if kind != "custom" and rest and not path.exists() and re.fullmatch(r"[a-z_-]{2,}", kind):
        raise SpecbenchError(
            f"--dataset {spec!r}: unknown dataset kind {kind!r}; use speed-bench:CONFIG, "
            "speed-bench:CONFIG:PATH, mt-bench[:PATH], custom:PATH or a file path"
        )
    if kind != "custom" and prepared.looks_like_speed_bench(path):
        inferred = prepared.infer_config(path)
        if inferred is None:
            raise SpecbenchError(
                f"{path}: SPEED-Bench data, but its config is not in the path; "
                "use --dataset speed-bench:CONFIG:PATH"
            )
        return _speed_bench(
            spec, prepared.load_prepared(inferred, path, accept_partial=accept_partial)
        )
    if path.is_dir():
        raise SpecbenchError(
            f"{path}: is a folder; give a JSONL file, or speed-bench:CONFIG:PATH for prepared data"
        )
    return RawDataset(
        spec=spec,
        name=selection_key(spec),
        conversations=tuple(load_custom(path)),
        source=str(path.resolve()),
    )


def _tiers(entropy_tiers: Sequence[str], raw: RawDataset) -> list[str]:
    if raw.config is None or raw.config == "qualitative":
        raise SpecbenchError(
            f"--entropy-tier applies only to SPEED-Bench throughput configs, not {raw.spec!r}"
        )
    tiers = [TIER_ALIASES.get(tier, tier) for tier in entropy_tiers]
    for given, tier in zip(entropy_tiers, tiers, strict=True):
        if tier not in speed_bench.ENTROPY_TIERS:
            allowed = ", ".join([*speed_bench.ENTROPY_TIERS, *TIER_ALIASES])
            raise SpecbenchError(f"--entropy-tier {given!r} is unknown; allowed: {allowed}")
    return tiers


def select(
    raw: RawDataset,
    *,
    categories: Sequence[str] = (),
    entropy_tiers: Sequence[str] = (),
    num_prompts: int | None = None,
    seed: int = 0,
    strict: bool = False,
) -> Workload:
    """Filter and sample a loaded dataset; refuse SPEED-Bench placeholders among the kept rows.

    Placeholders are checked after the category filters and before sampling, so a category
    whose rows are all real can run while others still need preparing, and a seed never
    decides whether a run is refused.
    """
    where = raw.source
    if raw.config is not None:
        speed_bench.check_categories(raw.config, categories)
    rows = filter_categories(raw.conversations, categories, where=where)
    if entropy_tiers:
        rows = filter_categories(rows, _tiers(entropy_tiers, raw), where=where)
    if raw.config is not None:
        speed_bench.check_no_placeholders(rows, raw.config, where)
    selection = stratified_sample(rows, num_prompts, seed=seed, strict=strict, where=where)
    kept = replace(
        raw,
        conversations=selection.conversations,
        warnings=raw.warnings + selection.warnings,
    )
    return Workload(**{field.name: getattr(kept, field.name) for field in fields(kept)})


def load_workload(
    spec: str,
    *,
    revision: str | None = None,
    categories: Sequence[str] = (),
    entropy_tiers: Sequence[str] = (),
    num_prompts: int | None = None,
    seed: int = 0,
    strict: bool = False,
    accept_partial: bool = False,
) -> Workload:
    """Load, validate and select the conversations named by `spec`.

    `categories` keeps only those categories (unknown ones are an error); `entropy_tiers`
    does the same for the tiers of a SPEED-Bench throughput config; `num_prompts` takes a
    seeded stratified sample (see `selection.stratified_sample`); `revision` is the hub
    revision for `speed-bench:CONFIG`. Placeholder SPEED-Bench rows are refused, and prepared
    data marked partial unless `accept_partial`. Every bad input raises SpecbenchError with a
    one-line message.
    """
    raw = read_dataset(spec, revision=revision, accept_partial=accept_partial)
    return select(
        raw,
        categories=categories,
        entropy_tiers=entropy_tiers,
        num_prompts=num_prompts,
        seed=seed,
        strict=strict,
    )
