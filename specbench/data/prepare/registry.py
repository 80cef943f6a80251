"""SPEED-Bench's upstream sources, in the order NVIDIA's code matches a row's `source` against them.

NVIDIA Model-Optimizer `examples/specdec_bench/specdec_bench/datasets/speed.py` (enum
`BenchmarkDataset`), read at commit `UPSTREAM_COMMIT`: a row's source is matched by
substring, first match wins, so the order matters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from specbench.data.prepare.context import Context
from specbench.data.prepare.families import (
    adaleval,
    bamboo,
    chatrag,
    cnn_dailymail,
    code_contests,
    coser,
    hle,
    livecodebench,
    mmlu_pro,
    mtbench101,
    opus100,
    rolebench,
)

UPSTREAM = "NVIDIA/Model-Optimizer examples/specdec_bench/specdec_bench/datasets/speed.py"
UPSTREAM_COMMIT = "a2fbac7bad8ab446d3f8783dadb0c3366eb0ad73"
#: The two flavours of the resolvers: the code each reimplements, at the commit read.
#: Model-Optimizer's is what specdec_bench and the model cards use; NeMo-Skills' what
#: `vllm bench serve`, SGLang and AIPerf use. They differ in three prompts' whitespace and
#: in the HLE generator: one per config (Model-Optimizer), one per process (NeMo-Skills).
FLAVOURS = {
    "model-optimizer": (UPSTREAM, UPSTREAM_COMMIT),
    "nemo-skills": (
        "NVIDIA-NeMo/Skills nemo_skills/dataset/speed-bench/prepare.py",
        "aeda1da41ec2888848ffa094305b7669df493f6c",
    ),
}
DEFAULT_FLAVOUR = "model-optimizer"


@dataclass(frozen=True)
class Source:
    """One upstream source family: what a row's `source` contains, where it lives, its resolver."""

    match: str
    resolve: Callable[[dict[str, Any], Context], list[str]]
    repo: str | None = None
    revision: str | None = None
    gated: bool = False
    #: The only files of the repo the resolver reads (all when empty).
    files: tuple[str, ...] = ()
    #: Its files are named by URL in the rows' `source` (listed from SPEED-Bench's rows).
    by_url: bool = False


SOURCES: tuple[Source, ...] = (
    Source("RUCAIBox/BAMBOO", bamboo.resolve, by_url=True),
    Source("abisee/cnn_dailymail", cnn_dailymail.resolve, cnn_dailymail.REPO),
    Source("cais/hle", hle.resolve, hle.REPO, hle.REVISION, gated=True),
    Source(
        "livecodebench/code_generation_lite",
        livecodebench.resolve,
        livecodebench.REPO,
        livecodebench.REVISION,
        files=livecodebench.FILES,
    ),
    Source(
        "deepmind/code_contests", code_contests.resolve, code_contests.REPO, code_contests.REVISION
    ),
    Source("mtbench101/mt-bench-101", mtbench101.resolve, by_url=True),
    Source("Helsinki-NLP/opus-100", opus100.resolve, opus100.REPO, opus100.REVISION),
    Source("nvidia/ChatRAG-Bench", chatrag.resolve, chatrag.REPO, chatrag.REVISION),
    Source("TIGER-Lab/MMLU-Pro", mmlu_pro.resolve, mmlu_pro.REPO, mmlu_pro.REVISION),
    Source("AdaLEval/stackselect", adaleval.resolve_stackselect, by_url=True),
    Source("AdaLEval/textsort", adaleval.resolve_textsort, by_url=True),
    Source(
        "ZenMoore/RoleBench", rolebench.resolve, rolebench.REPO, rolebench.REVISION, by_url=True
    ),
    Source("Neph0s/CoSER", coser.resolve, "Neph0s/CoSER", by_url=True),
)


def source_for(source: str | None) -> Source | None:
    """The first family whose name is in a row's `source`, as the upstream code matches it."""
    for family in SOURCES:
        if source and family.match in source:
            return family
    return None
