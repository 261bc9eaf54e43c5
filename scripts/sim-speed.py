#!/usr/bin/env python3
"""The simulator's rate in simulated PTX instructions per CPU second.

    python3 scripts/sim-speed.py [--kdslc target/release/kdslc] [--runs 3]
                                 [--checks none,all] [--compare OTHER_KDSLC]

Runs the launches of docs/simulator.md "Speed" (`sgemm_tiled` 256x256x256,
107 M instructions; `pipeline_sum` over 2^23 floats, 64.0 M) with `--jobs 1`
and prints, per kernel and checks setting, the least user CPU time of
`--runs` runs (compilation and setup included) and the rate it gives. The
instruction count is read from the run's own `--stats`, never assumed.

User CPU time, not wall time: on a shared machine the wall clock follows the
other processes' load. With `--compare`, the two binaries run alternately,
so that both see the same load and their ratio is meaningful.
"""

import argparse
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LAUNCHES = {
    "sgemm_tiled 256^3": [
        "samples/sgemm_tiled.kdsl", "--grid", "16,16",
        "--arg", "a=rand:65536:6", "--arg", "b=rand:65536:7",
        "--arg", "c=zeros:65536", "--arg", "m=256", "--arg", "n=256",
        "--arg", "k=256",
    ],
    "pipeline_sum 2^23": [
        "samples/pipeline_sum.kdsl", "--grid", "64",
        "--arg", "x=rand:8388608:5", "--arg", "out=zeros:1",
        "--arg", "chunks=128",
    ],
}

STEPS = re.compile(r"instructions executed\s+(\d+)")


def run_once(kdslc, args, checks):
    """User CPU seconds of one run and the instructions it executed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    p = subprocess.run(
        [kdslc, "sim", *args, "--checks", checks, "--jobs", "1", "--stats"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    if p.returncode != 0:
        sys.exit(f"sim-speed: {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
    m = STEPS.search(p.stderr)
    if not m:
        sys.exit(f"sim-speed: no instruction count in the --stats output:\n{p.stderr}")
    return after - before, int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kdslc", default=str(ROOT / "target" / "release" / "kdslc"))
    ap.add_argument("--compare", help="a second kdslc, run alternately with the first")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--checks", default="none,all")
    a = ap.parse_args()
    binaries = [a.kdslc] + ([a.compare] if a.compare else [])
    for b in binaries:
        if not os.access(b, os.X_OK):
            sys.exit(f"sim-speed: {b} is not an executable (cargo build --release)")
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(f"{'kernel':20} {'checks':6} {'binary':8} {'instructions':>13} {'CPU s':>7} {'M instr/s':>10}")
    for name, args in LAUNCHES.items():
        for checks in a.checks.split(","):
            best = {b: None for b in binaries}
            steps = None
            for _ in range(a.runs):
                for b in binaries:
                    t, n = run_once(b, args, checks)
                    if steps is not None and n != steps:
                        sys.exit(f"sim-speed: {name}: instruction counts differ ({steps}, {n})")
                    steps = n
                    best[b] = t if best[b] is None else min(best[b], t)
            for i, b in enumerate(binaries):
                label = "A" if i == 0 else "B"
                t = best[b]
                print(f"{name:20} {checks:6} {label:8} {steps:>13} {t:>7.2f} {steps / t / 1e6:>10.1f}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
