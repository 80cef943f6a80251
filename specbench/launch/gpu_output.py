"""What amd-smi, rocm-smi and nvidia-smi print for the GPU inventory, parsed.

Outputs change between releases, so each parser looks fields up defensively: a missing or
`N/A` field is None, and output that lists no GPU (malformed, empty, a warning only) is
None, which `launch.gpus` reads as a tool that did not answer. The layouts, and fixtures of
each: tests/fixtures/gpu_tools/README.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: What the tools print for a value they could not read.
_MISSING = {"", "n/a", "[n/a]", "na", "none", "unknown", "not supported", "[not supported]"}
_MIB_PER_UNIT = {"b": 1 / 2**20, "kb": 1 / 2**10, "kib": 1 / 2**10, "mb": 1, "mib": 1}
_MIB_PER_UNIT |= {"gb": 2**10, "gib": 2**10, "tb": 2**20, "tib": 2**20}


@dataclass(frozen=True)
class GpuFacts:
    """What one inventory command's output says about the GPUs."""

    count: int
    product: str | None
    vram_mib: int | None
    driver: str | None


def _text(value: Any) -> str | None:
    """A reported value as text, None when the tool could not read it."""
    if value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return None if text.lower() in _MISSING else text


def _mib(value: Any, unit: str = "MB") -> int | None:
    """MiB from a number and unit, `{"value": N, "unit": U}` or text such as `294896 MB`."""
    if isinstance(value, dict):
        return _mib(value.get("value"), str(value.get("unit") or unit))
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([\d.]+)\s*([A-Za-z]*)\s*", value)
        if match is None:
            return None
        value, unit = match.group(1), match.group(2) or unit
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    scale = _MIB_PER_UNIT.get(unit.strip().lower())
    if scale is None or number <= 0:
        return None
    return round(number * scale)


def _json(text: str) -> Any:
    """The first JSON value in `text`, skipping lines a tool prints before it (warnings)."""
    for match in re.finditer(r"^[ \t]*[\[{]", text, re.MULTILINE):
        try:
            value, _ = json.JSONDecoder().raw_decode(text[match.end() - 1 :])
        except ValueError:
            continue
        return value
    return None


def _facts(
    products: Iterable[str | None], vram: Iterable[int | None], drivers: Iterable[str | None]
) -> GpuFacts | None:
    names = list(products)
    if not names:
        return None
    distinct = list(dict.fromkeys(name for name in names if name))
    sizes = [size for size in vram if size is not None]
    driver = next((d for d in drivers if d), None)
    return GpuFacts(
        count=len(names),
        product=", ".join(distinct) or None,
        vram_mib=min(sizes) if sizes else None,
        driver=driver,
    )


def _lookup(entry: dict[str, Any], *path: str) -> Any:
    value: Any = entry
    for key in path:
        if not isinstance(value, dict):
            return None
        value = next((v for k, v in value.items() if str(k).lower() == key), None)
    return value


def parse_amd_smi_static(text: str) -> GpuFacts | None:
    """`amd-smi static --asic --vram --driver --json`: a list of GPU entries, or
    `{"gpu_data": [...]}` (AMD SMI 26 on); None when it lists no GPU."""
    payload = _json(text)
    if isinstance(payload, dict):
        payload = _lookup(payload, "gpu_data")
    if not isinstance(payload, list):
        return None
    gpus = [entry for entry in payload if isinstance(entry, dict) and "gpu" in entry]
    return _facts(
        (
            _text(_lookup(g, "asic", "market_name")) or _text(_lookup(g, "board", "product_name"))
            for g in gpus
        ),
        (_mib(_lookup(g, "vram", "size")) for g in gpus),
        (_text(_lookup(g, "driver", "version")) for g in gpus),
    )


def parse_amd_smi_version(text: str) -> str | None:
    """`rocm_version` from `amd-smi version --json` (a one-entry list, or the entry)."""
    payload = _json(text)
    entries = payload if isinstance(payload, list) else [payload]
    for entry in entries:
        if isinstance(entry, dict):
            version = _text(_lookup(entry, "rocm_version"))
            if version:
                return version
    return None


def parse_rocm_smi(text: str) -> GpuFacts | None:
    """`rocm-smi --showproductname --showmeminfo vram --showdriverversion --json`: one
    `cardN` object per GPU, the driver under `system`; None when it lists no card."""
    payload = _json(text)
    if not isinstance(payload, dict):
        return None
    cards = [
        value
        for key, value in payload.items()
        if re.fullmatch(r"card\d+", str(key)) and isinstance(value, dict)
    ]
    system = payload.get("system")
    return _facts(
        (_text(_lookup(card, "card series")) for card in cards),
        (_mib(_lookup(card, "vram total memory (b)"), "B") for card in cards),
        [_text(_lookup(system, "driver version")) if isinstance(system, dict) else None],
    )


def parse_nvidia_smi_query(text: str) -> GpuFacts | None:
    """`nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader,
    nounits`: `NAME, MiB, DRIVER` per GPU; None when no line has that shape."""
    rows = []
    for line in text.splitlines():
        fields = [field.strip() for field in line.rsplit(",", 2)]
        if len(fields) == 3 and fields[0] and re.fullmatch(r"[\d.]+|\[N/A\]", fields[1]):
            rows.append(fields)
    return _facts(
        (_text(row[0]) for row in rows),
        (_mib(row[1], "MiB") for row in rows),
        (_text(row[2]) for row in rows),
    )


def parse_nvidia_smi_version(text: str) -> str | None:
    """`CUDA Version : 12.4` from `nvidia-smi --version`."""
    match = re.search(r"^CUDA Version\s*:\s*(\S+)", text, re.MULTILINE)
    return match.group(1) if match else None
