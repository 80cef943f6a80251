"""Each server's K as the advice reads it from a resolved suite (advise/configs.py)."""

from __future__ import annotations

from specbench.advise.configs import configs_from_suite


def test_baseline_fixed_ks_and_a_schedule() -> None:
    spec = {"method": "eagle3", "model": "d", "extra": {}}
    suite = {
        "k_sweeps": {"eagle3": ["eagle3-k1", "eagle3-k2"]},
        "servers": {
            "baseline": {"baseline": True, "speculative": None},
            "eagle3-k1": {"speculative": {**spec, "num_speculative_tokens": 1}},
            "eagle3-k2": {"speculative": {**spec, "num_speculative_tokens": 2}},
            "sched": {
                "speculative": {
                    **spec,
                    "num_speculative_tokens": 4,
                    "extra": {"num_speculative_tokens_per_batch_size": [[1, 4, 4], [5, 64, 1]]},
                }
            },
            "second-target": {"speculative": None},
        },
    }
    configs = configs_from_suite(suite)
    assert list(configs) == ["baseline", "eagle3-k1", "eagle3-k2", "sched"]
    assert [configs[s].k for s in configs] == [0, 1, 2, None]
    assert configs["eagle3-k2"].sweep == "eagle3" and configs["baseline"].sweep is None
    assert configs["sched"].schedule == ((1, 4, 4), (5, 64, 1))
    assert configs["sched"].name == "schedule (sched)"
    assert configs["eagle3-k1"].name == "K = 1 (eagle3-k1)"
