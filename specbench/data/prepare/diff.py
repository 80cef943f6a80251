"""`data diff`: two prepared sets of one config, row by row by `question_id`.

Either side may be a folder `data prepare` wrote, Model-Optimizer's `prepare_data.py`
output (`speed/<config>/test.parquet`), NeMo-Skills' `<config>.jsonl`, or one such file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from specbench.data.conversation import Conversation
from specbench.data.prepared import load_prepared

CONTEXT = 30


@dataclass
class ConfigDiff:
    config: str
    identical: int = 0
    compared: int = 0
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    #: question_id, column, the first differing characters of A, of B.
    changed: list[tuple[str, str, str, str]] = field(default_factory=list)


def _fields(conversation: Conversation) -> dict[str, str]:
    values = {f"turns[{i}]": turn for i, turn in enumerate(conversation.turns)}
    values["turns"] = f"{len(conversation.turns)} turns"
    values["category"] = conversation.category
    values["sub_category"] = str(conversation.sub_category)
    values["source"] = str(conversation.source)
    values.update({key: str(value) for key, value in conversation.extra.items()})
    return values


def first_difference(a: str, b: str) -> tuple[str, str]:
    """The characters of `a` and `b` from a little before where they first differ."""
    index = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, index - 10)
    return a[start : index + CONTEXT], b[start : index + CONTEXT]


def diff_config(config: str, a: Path, b: Path) -> ConfigDiff:
    left = {c.question_id: c for c in load_prepared(config, a).conversations}
    right = {c.question_id: c for c in load_prepared(config, b).conversations}
    result = ConfigDiff(config=config)
    result.only_a = [qid for qid in left if qid not in right]
    result.only_b = [qid for qid in right if qid not in left]
    for qid, conversation in left.items():
        if qid not in right:
            continue
        result.compared += 1
        fa, fb = _fields(conversation), _fields(right[qid])
        columns = [key for key in dict.fromkeys([*fa, *fb]) if fa.get(key) != fb.get(key)]
        if not columns:
            result.identical += 1
            continue
        column = columns[0]
        shown_a, shown_b = first_difference(fa.get(column, ""), fb.get(column, ""))
        result.changed.append((qid, column, shown_a, shown_b))
    return result


def configs_in(path: Path) -> list[str]:
    """The configs a prepared set holds: from prepared.json, the layouts, or the file's name."""
    from specbench.data.prepared import infer_config
    from specbench.data.speed_bench import CONFIGS

    if path.is_file():
        inferred = infer_config(path)
        return [inferred] if inferred else []
    found = []
    for config in CONFIGS:
        layouts = [path / "speed" / config, path / "data" / "speed" / config, path / config]
        if any(p.is_dir() for p in layouts) or (path / f"{config}.jsonl").is_file():
            found.append(config)
    return found
