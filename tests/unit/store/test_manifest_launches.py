"""The manifest's `launches` record: absent in older manifests (which load and are rewritten
without it), the layout of the latest suite, every server start in the order it happened."""

from __future__ import annotations

import json
from pathlib import Path

from specbench.store.manifest import (
    LaunchesRecord,
    LaunchStart,
    Manifest,
    read_manifest,
    update_manifest,
)


def start(server: str, launch: int, pid: int) -> LaunchStart:
    return LaunchStart(server=server, launch=launch, pid=pid, started_at=f"t{pid}", run="r1")


def test_a_manifest_without_launches_loads_and_is_rewritten_without_them(tmp_path: Path) -> None:
    update_manifest(tmp_path, lambda manifest: manifest)
    written = json.loads((tmp_path / "manifest.json").read_text())
    assert "launches" not in written  # older readers see the manifest they knew
    manifest = read_manifest(tmp_path)
    assert manifest is not None and manifest.launches is None
    # A change without a layout (no suite: `bench`) records no start.
    assert manifest.with_launch_start(None, start("b", 0, 10)).launches is None


def test_starts_accumulate_in_order_under_the_latest_layout(tmp_path: Path) -> None:
    two = LaunchesRecord(launches=2, order="interleaved", seed=0, planned=[["b", "s"]] * 2)
    update_manifest(tmp_path, lambda m: m.with_launch_start(two, start("b", 0, 11)))
    update_manifest(tmp_path, lambda m: m.with_launch_start(two, start("s", 0, 12)))
    # A rerun of the suite grown to three launches: the layout is its, the starts go on.
    three = two.model_copy(update={"launches": 3, "planned": [["b", "s"]] * 3})
    update_manifest(tmp_path, lambda m: m.with_launch_start(three, start("b", 2, 13)))
    manifest = read_manifest(tmp_path)
    assert manifest is not None and manifest.launches is not None
    assert manifest.launches.launches == 3 and len(manifest.launches.planned) == 3
    assert [(s.server, s.launch, s.pid) for s in manifest.launches.starts] == [
        ("b", 0, 11),
        ("s", 0, 12),
        ("b", 2, 13),
    ]
    raw = json.loads((tmp_path / "manifest.json").read_text())
    assert raw["launches"]["starts"][2] == {
        "server": "b",
        "launch": 2,
        "pid": 13,
        "started_at": "t13",
        "start_ticks": None,
        "run": "r1",
    }
    assert Manifest.model_validate(raw).launches == manifest.launches
