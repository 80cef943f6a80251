"""Read a suite TOML, apply `--set` overrides, merge servers over `[target]`, validate.

Every problem becomes one `SpecbenchError` line naming the file and the field path
(`suites/x.toml: servers.eagle3.speculative.method: ...`), listing the allowed keys or
values where that helps.

Relative paths resolve against the folder of the suite file, never the working
directory, so a suite means the same thing wherever it is run from. A model is a local
path when it starts with `./`, `../`, `/` or `~` (else it is a hub id such as
`amd/MiniMax-M3-MXFP4`); the same holds for a speculative draft `model`. A dataset's
path part is always a path (`speed-bench:CONFIG:PATH`, `mt-bench:PATH`, `custom:PATH`,
or a bare path). A server with a list of Ks is expanded here (`specbench.suite.sweep`), and
an "advised" K schedule is read from its results directory (`specbench.suite.advised`,
`advised_from` relative to the suite's folder too).
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from specbench.common.errors import SpecbenchError
from specbench.common.validation import describe_validation_error, unknown_key
from specbench.data.check import with_data_dir
from specbench.launch.config import ServerConfig
from specbench.suite.advised import resolve_advised
from specbench.suite.model import Suite, WorkloadSpec
from specbench.suite.sweep import expand_sweep

_TOP_LEVEL_KEYS = (
    "name",
    "description",
    "repeats",
    "launches",
    "max_launches",
    "launch_order",
    "launch_seed",
    "gpus",
    "target",
    "servers",
    "workloads",
    "slurm",
    "slo",
    "data_dir",
)
#: Top-level keys the suite model takes as written; the rest are resolved here first.
_AS_GIVEN = tuple(
    k for k in _TOP_LEVEL_KEYS if k not in ("target", "servers", "workloads", "data_dir")
)
#: Keys a server may set but `[target]` may not: they are per-config by nature.
_SERVER_ONLY_KEYS = ("baseline", "speculative")
_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_DUPLICATE_TABLE = re.compile(r"Cannot declare \('servers', '([^']+)'\) twice \(at line (\d+)")
_MERGED_TABLES = ("env", "emulator")


def load_suite(path: str | Path, overrides: Iterable[str] = ()) -> Suite:
    """Load and validate the suite at `path`; `overrides` are `dotted.path=TOML value`."""
    source = Path(path)
    raw = read_toml(source)
    overrides = list(overrides)
    if not overrides:
        return build_suite(raw, source)
    try:
        build_suite(copy.deepcopy(raw), source)
    except SpecbenchError:  # the file itself is wrong (or a --set mends it): as it always was
        for override in overrides:
            apply_override(raw, override, source)
        return build_suite(raw, source)
    # The file is valid, so an error from here on is a --set's: name it, first one first.
    for override in overrides:
        apply_override(raw, override, source)
        try:
            build_suite(copy.deepcopy(raw), source)
        except SpecbenchError as error:
            raise SpecbenchError(f"{error} (from --set {override!r})") from None
    return build_suite(raw, source)


def read_toml(source: Path) -> dict[str, Any]:
    """The parsed TOML; malformed files name the file and line."""
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecbenchError(f"suite file {source} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SpecbenchError(f"cannot read suite file {source}: {error}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        duplicate = _DUPLICATE_TABLE.search(str(error))
        if duplicate:
            raise SpecbenchError(
                f"{source}: duplicate server name {duplicate.group(1)!r} "
                f"(line {duplicate.group(2)}): each [servers.<name>] must be unique"
            ) from None
        raise SpecbenchError(f"{source}: malformed TOML: {error}") from None


def parse_override(override: str) -> tuple[list[str], Any]:
    """`a.b.c=VALUE` → (["a", "b", "c"], TOML value; a bare word is taken as a string)."""
    dotted, sep, text = override.partition("=")
    keys = [key.strip() for key in dotted.split(".")]
    if not sep or not all(keys):
        raise SpecbenchError(f"--set {override!r}: expected dotted.path=value")
    try:
        value = tomllib.loads(f"value = {text.strip()}")["value"]
    except tomllib.TOMLDecodeError:
        value = text.strip()
    return keys, value


def apply_override(raw: dict[str, Any], override: str, source: Path) -> None:
    """Set one `--set` value in the raw TOML tree, creating tables on the way.

    `servers.NAME.num_speculative_tokens` is shorthand for
    `servers.NAME.speculative.num_speculative_tokens`, the most swept knob.
    """
    keys, value = parse_override(override)
    servers = raw.get("servers")
    # A typo in a server name would add a server, launched and measured.
    if (
        len(keys) >= 2
        and keys[0] == "servers"
        and isinstance(servers, dict)
        and keys[1] not in servers
    ):
        raise SpecbenchError(
            f"--set {override!r}: {source} has no server {keys[1]!r}; servers: "
            f"{', '.join(servers)} (a new server is added in the suite file)"
        )
    if len(keys) == 3 and keys[0] == "servers" and keys[2] == "num_speculative_tokens":
        keys = [keys[0], keys[1], "speculative", keys[2]]
    node: Any = raw
    for depth, key in enumerate(keys[:-1]):
        where = ".".join(keys[: depth + 1])
        if isinstance(node, list):
            node = _list_item(node, key, where, override, source)
            continue
        node = node.setdefault(key, {})
        if not isinstance(node, dict | list):
            raise SpecbenchError(f"--set {override!r}: {where} in {source} is not a table")
    last = keys[-1]
    if isinstance(node, list):
        index = _index(last, ".".join(keys), override, len(node))
        node[index] = value
    else:
        node[last] = value


def _index(key: str, where: str, override: str, length: int) -> int:
    if not key.isdigit() or int(key) >= length:
        raise SpecbenchError(f"--set {override!r}: {where} must be an index below {length}")
    return int(key)


def _list_item(node: list[Any], key: str, where: str, override: str, source: Path) -> Any:
    item = node[_index(key, where, override, len(node))]
    if not isinstance(item, dict):
        raise SpecbenchError(f"--set {override!r}: {where} in {source} is not a table")
    return item


def build_suite(raw: dict[str, Any], source: Path) -> Suite:
    """Merge, resolve and validate a raw suite tree read from `source`."""
    _check_keys(raw, _TOP_LEVEL_KEYS, "", source)
    target = raw.get("target", {})
    servers = raw.get("servers", {})
    if not isinstance(target, dict):
        raise SpecbenchError(f"{source}: target must be a table ([target])")
    if not isinstance(servers, dict) or not servers:
        raise SpecbenchError(f"{source}: no servers: add at least one [servers.<name>] table")
    target_keys = [key for key in ServerConfig.model_fields if key not in _SERVER_ONLY_KEYS]
    _check_keys(target, target_keys, "target.", source)
    merged: dict[str, ServerConfig] = {}
    sweeps: dict[str, list[str]] = {}
    advised: dict[str, str] = {}
    for name, table in servers.items():
        if not _SERVER_NAME.match(name):
            raise SpecbenchError(
                f"{source}: servers.{name}: a server name uses letters, digits, '.', '_', '-'"
            )
        if not isinstance(table, dict):
            raise SpecbenchError(f"{source}: servers.{name} must be a table")
        # A K sweep becomes NAME-k1, NAME-k2, ... here, so nothing downstream sees a list.
        expanded = expand_sweep(name, _merge(target, table), {*servers, *merged} - {name}, source)
        for expanded_name, config in expanded.items():
            advice = resolve_advised(name, config, source)
            if advice is not None:
                advised[expanded_name] = str(advice)
            merged[expanded_name] = _server(name, config, set(table), source)
        if list(expanded) != [name]:
            sweeps[name] = list(expanded)
    workloads = raw.get("workloads", [])
    if not isinstance(workloads, list) or not workloads:
        raise SpecbenchError(f"{source}: no workloads: add at least one [[workloads]] table")
    data_dir = _data_dir(raw.get("data_dir"), source)
    resolved = [_resolve_workload(item, source.parent, data_dir) for item in workloads]
    document: dict[str, Any] = {key: raw[key] for key in _AS_GIVEN if key in raw}
    if data_dir is not None:
        document["data_dir"] = data_dir
    if sweeps:
        document["k_sweeps"] = sweeps
    if advised:
        document["advised_schedules"] = advised
    document.update(servers=merged, workloads=resolved, source=str(source))
    try:
        # Strict: a TOML value of the wrong type is refused, never coerced ("yes" → True).
        return Suite.model_validate(document, strict=True)
    except ValidationError as error:
        raise SpecbenchError(describe_validation_error(error, Suite, "", source)) from None


def _check_keys(table: dict[str, Any], allowed: Iterable[str], prefix: str, source: Path) -> None:
    allowed = list(allowed)
    for key in table:
        if key not in allowed:
            raise SpecbenchError(f"{source}: {prefix}{key}: {unknown_key(key, allowed)}")


def _merge(target: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(target)
    for key, value in server.items():
        if key in _MERGED_TABLES and isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _server(name: str, table: dict[str, Any], own_keys: set[str], source: Path) -> ServerConfig:
    folder = source.parent
    if isinstance(table.get("model"), str):
        table["model"] = resolve_model(table["model"], folder)
    speculative = table.get("speculative")
    if isinstance(speculative, dict) and isinstance(speculative.get("model"), str):
        speculative["model"] = resolve_model(speculative["model"], folder)
    try:
        return ServerConfig.model_validate(table, strict=True)
    except ValidationError as error:
        first = error.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        # A value inherited from [target] is reported where the user wrote it.
        prefix = f"servers.{name}." if field in own_keys or not field else "target."
        raise SpecbenchError(
            describe_validation_error(error, ServerConfig, prefix, source)
        ) from None


def _data_dir(value: Any, source: Path) -> str | None:
    """The suite's `data_dir` (a `data prepare` folder), absolute against the suite's folder."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise SpecbenchError(f"{source}: data_dir must be a folder path (a non-empty string)")
    return _absolute(value.strip(), source.parent)


def _resolve_workload(item: Any, folder: Path, data_dir: str | None = None) -> Any:
    if isinstance(item, dict) and isinstance(item.get("dataset"), str):
        # data_dir: every speed-bench:CONFIG without a path reads CONFIG from that folder.
        spec = with_data_dir(item["dataset"], data_dir)
        item = {**item, "dataset": resolve_dataset(spec, folder)}
    if isinstance(item, dict) and isinstance(item.get("tokenizer"), str):
        item = {**item, "tokenizer": resolve_model(item["tokenizer"], folder)}
    return item


def resolve_model(model: str, folder: Path) -> str:
    """A local model path made absolute against `folder`; a hub id unchanged."""
    if model.startswith(("./", "../", "~")):
        return str((folder / Path(model).expanduser()).resolve())
    return model


def resolve_dataset(spec: str, folder: Path) -> str:
    """A dataset spec with its path part made absolute against `folder`."""
    spec = spec.strip()
    parts = spec.split(":")
    if parts[0] == "speed-bench":
        if len(parts) >= 3:
            return ":".join([*parts[:2], _absolute(":".join(parts[2:]), folder)])
        return spec
    if parts[0] in ("mt-bench", "custom"):
        if len(parts) >= 2:
            return f"{parts[0]}:{_absolute(':'.join(parts[1:]), folder)}"
        return spec
    return _absolute(spec, folder)


def _absolute(path: str, folder: Path) -> str:
    return str((folder / Path(path).expanduser()).resolve())


def workload_from_options(**fields: Any) -> WorkloadSpec:
    """A workload from command-line values (`bench`); errors name the field, one line."""
    values = {key: value for key, value in fields.items() if value is not None}
    try:
        return WorkloadSpec.model_validate(values)
    except ValidationError as error:
        # `options: --max_tokens: ...` → `--max-tokens: ...`, the flag the user typed.
        message = describe_validation_error(error, WorkloadSpec, "--", "options")
        flag, _, detail = message.removeprefix("options: ").partition(": ")
        flag = flag.replace("_", "-")
        raise SpecbenchError(f"{_BENCH_FLAGS.get(flag, flag)}: {detail}") from None


#: `bench` options whose name is not the workload field's (`--request-timeout` sets
#: `request_timeout_s`): a message names the flag the user typed.
_BENCH_FLAGS = {
    "--request-timeout-s": "--request-timeout",
    "--categories": "--category",
    "--entropy-tiers": "--entropy-tier",
    "--name": "--workload-name",
}
