"""Which GPUs a server's energy counts (`energy.select`): explicit ids, else its launch's
visible devices as the runtimes nest them, else the first TP × PP × DP devices."""

from __future__ import annotations

from specbench.energy.select import counted_gpus, visible_devices


def test_explicit_gpu_ids_win() -> None:
    counted = counted_gpus(2, {"CUDA_VISIBLE_DEVICES": "4,5"}, explicit=[6, 7])
    assert (counted.ids, counted.how) == (("6", "7"), "gpu_ids")


def test_the_first_visible_devices_of_the_launch() -> None:
    counted = counted_gpus(2, {"HIP_VISIBLE_DEVICES": "4, 5,6"})
    assert counted.ids == ("4", "5")
    assert counted.how == "the first 2 of HIP_VISIBLE_DEVICES=4,5,6"
    uuids = counted_gpus(1, {"CUDA_VISIBLE_DEVICES": "GPU-aa,GPU-bb"})
    assert uuids.ids == ("GPU-aa",)


def test_hip_indexes_into_rocr_as_the_runtime_does() -> None:
    env = {"ROCR_VISIBLE_DEVICES": "2,3,6,7", "HIP_VISIBLE_DEVICES": "1,3"}
    assert visible_devices(env) == (["3", "7"], "ROCR_VISIBLE_DEVICES then HIP_VISIBLE_DEVICES")
    assert counted_gpus(2, env).ids == ("3", "7")
    assert visible_devices({"ROCR_VISIBLE_DEVICES": "2,3"}) == (["2", "3"], "ROCR_VISIBLE_DEVICES")


def test_without_a_variable_the_first_devices_of_the_node() -> None:
    counted = counted_gpus(8, {"CUDA_VISIBLE_DEVICES": " "})
    assert counted.ids == tuple(str(i) for i in range(8))
    assert counted.how == "the first 8 devices (no *_VISIBLE_DEVICES)"
