"""Check one GPU's energy counter against its power sampled at 10 Hz (issue 41).

Usage: python tools/gpu_energy_check.py --source nvml --gpu 0 --seconds 30
       [--idle-seconds 10] [--load matmul|none]

Two windows on GPU `--gpu`: idle for `--idle-seconds`, then loaded for `--seconds` (a
matmul loop in PyTorch on that GPU; `--load none` runs nothing, for a load of your own).
For each window: the counter's delta (J), the power sampled at 10 Hz and integrated by the
trapezoid rule (J), their ratio, and the mean power (W); then idle against loaded watts. A
ratio far from 1 means the counter (or the power reading) is not to be trusted: some AMD
GPUs have a broken counter. Without PyTorch it says so and measures the idle window only.

`--source` is "amdsmi", "nvml", "auto" or an exporter URL (http://host:5000/metrics); the
GPU is the library's index (NVML: as nvidia-smi numbers them; torch is pointed at the same
one through CUDA_DEVICE_ORDER=PCI_BUS_ID) or an NVML UUID. Bad input (an unknown source, no
such GPU, a library that does not import): one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn

from specbench.energy.log import LogError, LogHeader, LogReading, LogRecord
from specbench.energy.reading import EnergySource, Reading, ReasonCode, TelemetryUnavailable
from specbench.energy.sampler import PowerSampler
from specbench.energy.sources import auto_source, check_setting, open_source
from specbench.energy.window import energy_summary
from specbench.store.summary import EnergySummary

#: The cross-check's rate here: ten power readings a second.
SAMPLE_INTERVAL_S = 0.1
#: Square fp16 matrices of this side keep a datacenter GPU's tensor cores busy.
MATMUL_SIDE = 8192
PROG = "gpu_energy_check"

Load = Callable[[float], None]


class Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (argparse prints the usage above them)."""

    def error(self, message: str) -> NoReturn:
        bad_input(message)


def bad_input(message: str) -> NoReturn:
    print(f"{PROG}: {message}", file=sys.stderr)
    raise SystemExit(2)


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds must be more than 0")
    return value


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--source", required=True, help="amdsmi, nvml, auto or an exporter URL")
    parser.add_argument("--gpu", required=True, help='the GPU: an index ("0") or an NVML UUID')
    parser.add_argument("--seconds", type=positive_seconds, default=30.0, help="loaded window")
    parser.add_argument("--idle-seconds", type=positive_seconds, default=10.0, help="idle window")
    parser.add_argument("--load", choices=("matmul", "none"), default="matmul")
    return parser.parse_args(argv)


def open_checked(setting: str, gpu: str) -> EnergySource:
    """The source `setting` names, read once; bad input exits 2 with one line."""
    problem = check_setting(setting)
    if problem is not None or setting == "off":
        bad_input(f"--source: {problem or 'off reads nothing'}")
    source: EnergySource | None
    try:
        if setting == "auto":
            source, detail = auto_source([gpu])
            if source is None:
                bad_input(f"--source auto: {detail}")
        else:
            source = open_source(setting, [gpu])
        if gpu not in source.read().gpus:
            source.close()
            bad_input(f"--gpu: {source.name} does not list GPU {gpu}")
    except TelemetryUnavailable as error:
        option = f"--gpu {gpu}" if error.reason == "no_device" else f"--source {setting}"
        bad_input(f"{option}: {error}")
    return source


def matmul_load(gpu: str) -> tuple[Load | None, str]:
    """A load that runs fp16 matmuls on `gpu` for given seconds, or None and why not."""
    # torch's numbering then follows the PCI bus, as NVML's and nvidia-smi's do.
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    try:
        import torch
    except ImportError as error:
        return None, f"torch is not installed ({error}): measuring the idle window only"
    if not torch.cuda.is_available():
        return None, "torch sees no GPU: measuring the idle window only"
    device = torch.device(f"cuda:{gpu}" if gpu.isdigit() else "cuda:0")
    a = torch.randn(MATMUL_SIDE, MATMUL_SIDE, device=device, dtype=torch.float16)
    b = torch.randn(MATMUL_SIDE, MATMUL_SIDE, device=device, dtype=torch.float16)

    def run(seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for _ in range(8):
                torch.matmul(a, b)
            torch.cuda.synchronize(device)

    return run, f"load: {MATMUL_SIDE}² fp16 matmuls on {device} (torch {torch.__version__})"


def measure(source: EnergySource, gpu: str, seconds: float, load: Load | None) -> EnergySummary:
    """One window: a counter read, `seconds` of `load` (or of idling) sampled at 10 Hz, a
    counter read; summarised as a cell's window is."""
    records: list[LogRecord] = [LogHeader(source.name, None, [gpu])]
    before = source.read()

    def as_record(kind: Any, reading: Reading) -> LogReading:
        return LogReading(kind, reading.at_s - before.at_s, reading.gpus)

    def on_error(at_s: float, reason: ReasonCode, message: str) -> None:
        records.append(LogError("sample", at_s - before.at_s, reason, message))

    records.append(as_record("before", before))
    sampler = PowerSampler(
        source, lambda r: records.append(as_record("sample", r)), on_error, SAMPLE_INTERVAL_S
    )
    sampler.start()
    if load is None:
        time.sleep(seconds)
    else:
        load(seconds)
    sampler.stop()
    records.append(as_record("after", source.read()))
    return energy_summary(records, output_tokens=None)


def describe(name: str, window: EnergySummary) -> str:
    """One line: counter J, sampled J, their ratio, mean W; or why a figure is missing."""
    counter = window.joules
    sampled = window.sampled_joules
    seconds = window.window_s or 0.0
    parts = [f"{name:<7} {seconds:6.2f} s", f"{window.samples:4d} samples"]
    parts.append(
        f"counter {counter:10.2f} J" if counter is not None else f"counter: {window.detail}"
    )
    parts.append(f"sampled {sampled:10.2f} J" if sampled is not None else "sampled: no power")
    if counter is not None and sampled:
        parts.append(f"ratio {counter / sampled:.3f}")
    watts = mean_watts(window)
    if watts is not None:
        parts.append(f"mean {watts:7.1f} W")
    return "  ".join(parts)


def mean_watts(window: EnergySummary) -> float | None:
    """The counter's mean power, else the sampled power's; None with neither."""
    joules = window.joules if window.joules is not None else window.sampled_joules
    return None if joules is None or not window.window_s else joules / window.window_s


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    source = open_checked(args.source, args.gpu)
    try:
        print(f"source {source.name}, GPU {args.gpu}: power sampled every {SAMPLE_INTERVAL_S} s")
        load: Load | None = None
        note = "load: none of its own (run yours now)"
        if args.load == "matmul":
            load, note = matmul_load(args.gpu)
        idle = measure(source, args.gpu, args.idle_seconds, None)
        print(describe("idle", idle))
        print(note)
        if args.load == "matmul" and load is None:
            return 0
        loaded = measure(source, args.gpu, args.seconds, load)
        print(describe("loaded", loaded))
        idle_w, loaded_w = mean_watts(idle), mean_watts(loaded)
        if idle_w is not None and loaded_w is not None:
            rise = round(loaded_w - idle_w, 1) + 0.0  # + 0.0: never print "-0.0"
            print(f"idle {idle_w:.1f} W, loaded {loaded_w:.1f} W ({rise:+.1f} W)")
    except TelemetryUnavailable as error:
        print(f"{PROG}: {source.name} stopped answering: {error}", file=sys.stderr)
        return 1
    finally:
        source.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
