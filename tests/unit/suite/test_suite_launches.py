"""Launches in the suite: the fields, the launch-major order of cells (interleaved or seeded
random), the suite hash they leave alone, and the bad values refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.run.plan import RunOptions, plan_suite, suite_hash
from specbench.run.preflight import check_relaunchable
from specbench.suite import load_suite

SUITE = """\
name = "launches"
{top}

[target]
engine = "emulator"
model = "org/target"

[servers.base]
baseline = true

[servers.spec]
speculative = {{ method = "eagle3", model = "org/draft", num_speculative_tokens = 3 }}

[servers.ngram]
speculative = {{ method = "ngram", num_speculative_tokens = 3 }}

[[workloads]]
name = "chat"
dataset = "mt-bench"
concurrency = [1, 4]
max_tokens = 16
{workload}
"""


def suite_file(tmp_path: Path, top: str = "", workload: str = "", name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(SUITE.format(top=top, workload=workload))
    return path


def order(path: Path) -> list[str]:
    return [cell.key for cell in load_suite(path).expand()]


def starts(path: Path) -> list[tuple[str, int]]:
    """(server, launch) of each server start, in run order."""
    found: list[tuple[str, int]] = []
    for cell in load_suite(path).expand():
        if not found or found[-1] != (cell.server, cell.launch):
            found.append((cell.server, cell.launch))
    return found


def test_one_launch_is_the_order_before_launches(tmp_path: Path) -> None:
    keys = [
        "base/chat/c1/r0", "base/chat/c1/r1", "base/chat/c4/r0", "base/chat/c4/r1",
        "spec/chat/c1/r0", "spec/chat/c1/r1", "spec/chat/c4/r0", "spec/chat/c4/r1",
        "ngram/chat/c1/r0", "ngram/chat/c1/r1", "ngram/chat/c4/r0", "ngram/chat/c4/r1",
    ]  # fmt: skip
    assert order(suite_file(tmp_path, "repeats = 2")) == keys
    assert order(suite_file(tmp_path, "repeats = 2\nlaunches = 1", name="one.toml")) == keys
    assert {cell.launch for cell in load_suite(tmp_path / "one.toml").expand()} == {0}


def test_launches_are_interleaved_across_servers_launch_after_launch(tmp_path: Path) -> None:
    path = suite_file(tmp_path, "launches = 2")
    assert order(path) == [
        "base/chat/c1/r0", "base/chat/c4/r0", "spec/chat/c1/r0", "spec/chat/c4/r0",
        "ngram/chat/c1/r0", "ngram/chat/c4/r0",
        "base/chat/c1/l1/r0", "base/chat/c4/l1/r0", "spec/chat/c1/l1/r0", "spec/chat/c4/l1/r0",
        "ngram/chat/c1/l1/r0", "ngram/chat/c4/l1/r0",
    ]  # fmt: skip
    assert starts(path) == [
        ("base", 0), ("spec", 0), ("ngram", 0), ("base", 1), ("spec", 1), ("ngram", 1)
    ]  # fmt: skip
    suite = load_suite(path)
    assert suite.launch_orders() == [["base", "spec", "ngram"]] * 2
    # Repeats are passes within one launch: they follow their launch's cells.
    with_repeats = order(suite_file(tmp_path, "launches = 2\nrepeats = 2", name="r.toml"))
    assert with_repeats[4:8] == [
        "spec/chat/c1/r0", "spec/chat/c1/r1", "spec/chat/c4/r0", "spec/chat/c4/r1"
    ]  # fmt: skip
    assert with_repeats[12:14] == ["base/chat/c1/l1/r0", "base/chat/c1/l1/r1"]


def test_a_random_order_is_a_seeded_shuffle_per_launch_that_a_grown_suite_keeps(
    tmp_path: Path,
) -> None:
    three = load_suite(suite_file(tmp_path, 'launches = 3\nlaunch_order = "random"'))
    orders = three.launch_orders()
    assert len(orders) == 3 and all(sorted(o) == ["base", "ngram", "spec"] for o in orders)
    assert orders == load_suite(tmp_path / "s.toml").launch_orders()  # reproducible
    # Seed 0: not every launch in the suite's order (the shuffle is real).
    assert orders != [["base", "spec", "ngram"]] * 3
    assert starts(tmp_path / "s.toml") == [
        (s, launch) for launch in range(3) for s in orders[launch]
    ]
    other = suite_file(
        tmp_path, 'launches = 3\nlaunch_order = "random"\nlaunch_seed = 7', name="seed7.toml"
    )
    assert load_suite(other).launch_orders() != orders
    # 2 → 3 launches: the first two launches keep their order, the third is added.
    two = suite_file(tmp_path, 'launches = 2\nlaunch_order = "random"', name="two.toml")
    assert load_suite(two).launch_orders() == orders[:2]
    assert order(two) == order(tmp_path / "s.toml")[: len(order(two))]


def test_a_workload_may_have_its_own_launches(tmp_path: Path) -> None:
    extra = '\n[[workloads]]\nname = "once"\ndataset = "mt-bench"\nconcurrency = [2]\n'
    path = suite_file(tmp_path, "launches = 2", "launches = 3" + extra + "max_tokens = 16\n")
    suite = load_suite(path)
    assert [suite.launches_of(0), suite.launches_of(1), suite.planned_launches] == [3, 2, 3]
    keys = order(path)
    assert "base/chat/c1/l2/r0" in keys and "base/once/c2/l1/r0" in keys
    assert not any(key.startswith("base/once/c2/l2") for key in keys)
    assert keys[-2:] == ["ngram/chat/c1/l2/r0", "ngram/chat/c4/l2/r0"]


def test_launch_fields_leave_the_suite_hash_alone(tmp_path: Path) -> None:
    def hashed(top: str, workload: str = "") -> str:
        return suite_hash(load_suite(suite_file(tmp_path, top, workload)))

    plain = hashed("")
    assert hashed("launches = 1") == plain  # absent and the default: one hash
    assert hashed('launch_order = "interleaved"\nlaunch_seed = 0') == plain
    # The count of launches is never in it: a campaign grown 2 → 3 stays one campaign.
    assert hashed("launches = 2") == hashed("launches = 3") == plain
    assert hashed("", "launches = 2") == hashed("", "launches = 3") == plain
    # A random order is another layout of the starts: in the hash, with its seed.
    random0 = hashed('launch_order = "random"')
    assert random0 != plain
    assert hashed('launch_order = "random"\nlaunch_seed = 1') not in (plain, random0)


@pytest.mark.parametrize(
    ("top", "workload", "names"),
    [
        ("launches = 0", "", "launches"),
        ("launches = -2", "", "launches"),
        ("launches = 2.5", "", "launches"),
        ('launches = "3"', "", "launches"),
        ("launches = true", "", "launches"),
        ('launch_order = "sequential"', "", "launch_order"),
        ("launch_seed = 1.5", "", "launch_seed"),
        ("", "launches = 0", "workloads[0].launches"),
        ("", "launches = 1.5", "workloads[0].launches"),
    ],
)
def test_bad_launch_values_are_one_line_naming_the_field(
    tmp_path: Path, top: str, workload: str, names: str
) -> None:
    path = suite_file(tmp_path, top, workload)
    with pytest.raises(SpecbenchError) as caught:
        load_suite(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {names}: "), message


def test_the_plan_starts_a_server_per_launch(tmp_path: Path) -> None:
    suite = load_suite(suite_file(tmp_path, "launches = 2"))
    plan = plan_suite(suite, RunOptions(output=tmp_path / "out", servers=("spec",)))
    assert plan.launches == 2
    assert [plan.start_key(c)[:2] for c in plan.cells] == [("spec", 0)] * 2 + [("spec", 1)] * 2
    assert plan.start_key(plan.cells[0])[2] == suite.servers["spec"]


def test_an_attached_server_cannot_give_launches(tmp_path: Path) -> None:
    suite = load_suite(suite_file(tmp_path, "launches = 2"))
    endpoint = {"spec": "http://127.0.0.1:1"}
    attached = plan_suite(suite, RunOptions(output=tmp_path / "out", endpoints=endpoint))
    with pytest.raises(SpecbenchError) as caught:
        check_relaunchable(attached)
    assert str(caught.value) == (
        "launches = 2: server 'spec' is attached (--endpoint spec=http://127.0.0.1:1) and "
        "cannot be started afresh for each launch; allowed with an attached server: "
        "launches = 1 (or let specbench start it: drop its --endpoint)"
    )
    # One launch: attaching is what it was.
    one = load_suite(suite_file(tmp_path, "", name="one.toml"))
    check_relaunchable(plan_suite(one, RunOptions(output=tmp_path / "out", endpoints=endpoint)))
