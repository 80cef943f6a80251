"""Turn a pydantic ValidationError into one line: file, field path, what is allowed."""

from __future__ import annotations

import difflib
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError


def describe_validation_error(
    error: ValidationError, root: type[BaseModel], prefix: str, source: Path | str
) -> str:
    """`FILE: servers.x.field: problem; allowed: ...` for the first error (+N more)."""
    # An unknown key is usually a typo of a "missing" one: name it first.
    problems = sorted(error.errors(), key=lambda problem: problem["type"] != "extra_forbidden")
    first = problems[0]
    loc = tuple(first["loc"])
    path = prefix + _dotted(loc) if loc else prefix.rstrip(".")
    detail = _detail(first, root, loc)
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    where = f"{path}: " if path else ""
    return f"{source}: {where}{detail}{more}"


def unknown_key(key: str, allowed: list[str]) -> str:
    """`unknown key; did you mean 'max_tokens'? allowed: …`: the nearest allowed key first,
    when one is near enough to be a typo of it (difflib's ratio ≥ 0.6)."""
    near = difflib.get_close_matches(key, allowed, n=1)
    guess = f" did you mean {near[0]!r}?" if near else ""
    return f"unknown key;{guess} allowed: {', '.join(allowed)}"


def _dotted(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _detail(problem: Any, root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    kind = problem["type"]
    if kind == "extra_forbidden":
        parent = model_at(root, loc[:-1])
        if parent is None:
            return "unknown key; allowed: ?"
        return unknown_key(str(loc[-1]), list(parent.model_fields))
    if kind == "literal_error":
        expected = problem.get("ctx", {}).get("expected", "")
        return f"{problem['input']!r} is not allowed; allowed: {expected}"
    if kind == "missing":
        return "required but missing"
    message = str(problem["msg"]).removeprefix("Value error, ")
    if kind != "value_error" and "input" in problem and not isinstance(problem["input"], dict):
        message += f" (got {problem['input']!r})"
    return message


def model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model class found by following `loc` from `root`, or None."""
    current: Any = root
    for part in loc:
        current = _strip_optional(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
            continue
        origin = get_origin(current)
        if origin is dict:
            current = get_args(current)[1]
        elif origin is list:
            current = get_args(current)[0]
        else:
            return None
    current = _strip_optional(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _strip_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        options = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(options) == 1:
            return options[0]
    return annotation
