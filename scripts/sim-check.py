#!/usr/bin/env python3
"""Runs every sample and bench kernel in the simulator and compares outputs.

    python3 scripts/sim-check.py [--kdslc target/release/kdslc] [--nvcc PATH] [--seeds N]

The launches are the lines of scripts/sim-launches.txt (`FILE FLAGS...`, as
in `kdslc sim FILE FLAGS...`). For each line:

- a `.kdsl` file runs as `kdslc sim FILE FLAGS --out DIR` (kdslc's PTX);
- a `.cu` twin is compiled with `nvcc -ptx -arch=sm_90` (or the
  architecture its first line names, `// arch: sm_90a`), without and with
  `-lineinfo`, and each PTX runs with the line's flags; kdslc's own PTX of
  the `.kdsl` kernel of the same name (`kdslc FILE.kdsl -o FILE.ptx`, for
  the `--target` its line names) runs
  with the same flags as a `.ptx` input too (a twin whose kdsl kernel is
  not written yet — tests/it/docs/setup.rs lists them — runs alone, and is
  compared across schedules only);
- every run is repeated under `--schedule random:SEED` for SEED in 1..N.

Every run must exit 0. Outputs are compared: a random schedule's with the
in-order run's, a twin's (and kdslc's PTX's) with the `.kdsl` run's of the
same name (in the twin's folder, else samples/NAME.kdsl: the bench kernels'
one source), position by position (`--arg` order). Integers must be equal; floats equal within a relative tolerance of
1e-4 (sums accumulate in another order). Prints a table; exits 1 on any
fault or mismatch. nvcc is required when CI is set; elsewhere its rows are
skipped with a note when it is missing.
"""

import argparse
import ast
import os
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "scripts" / "sim-launches.txt"
FLOAT_TOL = 1e-4


def launches(table):
    """(file, flags) per line of the table, in order."""
    out = []
    for line in table.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            words = shlex.split(line)
            out.append((words[0], words[1:]))
    return out


def arg_names(flags):
    """The parameter name or position of each `--arg`, in order."""
    names = []
    for i, w in enumerate(flags):
        if w == "--arg" and i + 1 < len(flags):
            names.append(flags[i + 1].split("=", 1)[0])
    return names


def read_npy(path):
    """(kind, values) of a 1-D little-endian .npy file: kind 'f' or 'i'."""
    data = path.read_bytes()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start : start + hlen].decode("latin1"))
    descr = header["descr"]
    body = data[start + hlen :]
    codes = {
        "<f4": ("f", "f"), "<f8": ("f", "d"), "<f2": ("f", "e"),
        "<i4": ("i", "i"), "<u4": ("i", "I"), "<i8": ("i", "q"), "<u8": ("i", "Q"),
        "|u1": ("i", "B"), "|i1": ("i", "b"), "|b1": ("i", "B"), "<i2": ("i", "h"), "<u2": ("i", "H"),
    }
    if descr in codes:
        kind, code = codes[descr]
        n = len(body) // struct.calcsize(code)
        return kind, list(struct.unpack(f"<{n}{code}", body[: n * struct.calcsize(code)]))
    if descr == "<V2":  # bfloat16: widen to f32
        n = len(body) // 2
        return "f", [struct.unpack("<f", b"\0\0" + body[2 * i : 2 * i + 2])[0] for i in range(n)]
    raise ValueError(f"{path}: dtype {descr} not handled")


def compare(a_path, b_path):
    """None when equal (within tolerance for floats), else what differs.
    Also returns the largest relative difference seen."""
    ka, va = read_npy(a_path)
    kb, vb = read_npy(b_path)
    if ka != kb or len(va) != len(vb):
        return f"{a_path.name} and {b_path.name}: {ka}[{len(va)}] vs {kb}[{len(vb)}]", 0.0
    worst = 0.0
    for i, (x, y) in enumerate(zip(va, vb)):
        if ka == "i":
            if x != y:
                return f"element {i}: {x} vs {y}", 0.0
            continue
        if x != x or y != y:  # NaN
            if (x != x) != (y != y):
                return f"element {i}: {x} vs {y}", 0.0
            continue
        diff = abs(x - y) / max(abs(x), abs(y), 1e-30)
        worst = max(worst, diff if x != y else 0.0)
        if diff > FLOAT_TOL and abs(x - y) > 1e-30:
            return f"element {i}: {x!r} vs {y!r} (relative {diff:.2e})", worst
    return None, worst


def nvcc_arch(path):
    """sm_90, or the architecture a twin's first line names (`// arch: sm_90a`)."""
    first = path.read_text().splitlines()[:1]
    if first and first[0].startswith("// arch: "):
        return first[0][len("// arch: "):].split()[0]
    return "sm_90"


def awaiting_samples():
    """The twins tests/it/docs/setup.rs lists as awaiting their kdsl sample."""
    text = (ROOT / "tests" / "it" / "docs" / "setup.rs").read_text()
    start = text.find("TWINS_AWAITING_THEIR_SAMPLE")
    block = text[start:text.find(";", start)] if start >= 0 else ""
    return set(__import__("re").findall(r'"(\w+)"', block))


def find_nvcc(given):
    """--nvcc, $KDSL_NVCC, next to $KDSL_PTXAS, the pinned install of
    scripts/cuda-tools.sh, then PATH (the tests look in the same places)."""
    if given:
        return given
    env = os.environ.get
    candidates = [
        env("KDSL_NVCC"),
        env("KDSL_PTXAS") and os.path.join(os.path.dirname(env("KDSL_PTXAS")), "nvcc"),
        env("KDSL_CUDA_TOOLS_ROOT") and os.path.join(env("KDSL_CUDA_TOOLS_ROOT"), "bin", "nvcc"),
        os.path.expanduser(os.path.join(env("KDSL_CUDA_TOOLS", "~/.cache/kdsl-cuda-13.5"), "nvidia/cu13/bin/nvcc")),
        shutil.which("nvcc"),
    ]
    for cand in candidates:
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


class Run:
    def __init__(self, label, source, schedule, outdir):
        self.label, self.source, self.schedule, self.outdir = label, source, schedule, outdir
        self.status, self.seconds, self.against, self.note, self.worst = "?", 0.0, "", "", 0.0
        # Exited 0 with outputs: usable as a reference even if its own
        # comparison failed.
        self.ran = False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kdslc", default=str(ROOT / "target" / "release" / "kdslc"))
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--seeds", type=int, default=2, help="random schedules per launch (default 2)")
    ap.add_argument("--table", type=Path, default=TABLE, help="the launches (default scripts/sim-launches.txt)")
    args = ap.parse_args()
    kdslc = os.path.abspath(args.kdslc)
    if not os.access(kdslc, os.X_OK):
        sys.exit(f"sim-check: no kdslc at {kdslc} (build it: cargo build --release)")
    nvcc = find_nvcc(args.nvcc)
    ci = bool(os.environ.get("CI"))
    if nvcc is None and ci:
        sys.exit("sim-check: nvcc not found and CI is set (run scripts/cuda-tools.sh)")

    work = Path(tempfile.mkdtemp(prefix="sim-check-"))
    runs = []

    def sim(label, source, target, flags, schedule, tag):
        outdir = work / tag
        r = Run(label, source, schedule, outdir)
        cmd = [kdslc, "sim", str(target), *flags, "--out", str(outdir), "--message-format", "short"]
        if schedule != "in-order":
            cmd += ["--schedule", schedule]
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        r.seconds = time.monotonic() - t0
        if p.returncode != 0:
            r.status = f"exit {p.returncode}"
            r.note = (p.stderr.strip().splitlines() or [""])[0][:100]
        elif not outdir.is_dir() or not any(outdir.iterdir()):
            r.status, r.note = "no outputs", "the run wrote no --out files"
        else:
            r.status, r.ran = "ok", True
        runs.append(r)
        return r

    def check(r, reference, pairs):
        """Compares r's outputs with reference's: pairs of (file in r, file in reference)."""
        if not r.ran or reference is None:
            return
        if not reference.ran:
            r.status, r.note = "unchecked", f"its reference failed: {reference.label}"
            return
        r.against = f"{reference.label} [{reference.source}, {reference.schedule}]"
        for mine, theirs in pairs:
            a, b = r.outdir / mine, reference.outdir / theirs
            if not a.exists() or not b.exists():
                r.status, r.note = "mismatch", f"missing output {a.name if not a.exists() else b.name}"
                return
            diff, worst = compare(a, b)
            r.worst = max(r.worst, worst)
            if diff:
                r.status, r.note = "mismatch", f"{mine}: {diff}"
                return

    def same_names(reference):
        return [(p.name, p.name) for p in sorted(reference.outdir.glob("*.npy"))]

    table = launches(args.table)
    kdsl_runs = {}  # file -> (in-order run, flags)
    for n, (file, flags) in enumerate(table):
        path = ROOT / file
        stem = path.stem
        if path.suffix == ".kdsl":
            base = sim(file, "kdslc PTX", file, flags, "in-order", f"{n}-k")
            kdsl_runs[file] = (base, flags)
            sample = f"samples/{stem}.kdsl"
            if file != sample and sample in kdsl_runs:
                check(base, kdsl_runs[sample][0], same_names(kdsl_runs[sample][0]))
            for seed in range(1, args.seeds + 1):
                r = sim(file, "kdslc PTX", file, flags, f"random:{seed}", f"{n}-k-r{seed}")
                check(r, base, same_names(base))
            continue
        # A .cu twin: compare position by position with the .kdsl kernel of
        # the same name, in the same folder or among the samples.
        twin = str(Path(file).with_suffix(".kdsl"))
        if twin not in kdsl_runs:
            twin = f"samples/{stem}.kdsl"
        sources = []
        if twin in kdsl_runs:
            kbase, kflags = kdsl_runs[twin]
            knames = arg_names(kflags)
            ptx = work / f"{stem}.kdslc.ptx"
            target = kflags[kflags.index("--target") : kflags.index("--target") + 2] if "--target" in kflags else []
            p = subprocess.run([kdslc, twin, *target, "-o", str(ptx)], cwd=ROOT, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"sim-check: kdslc {twin} failed:\n{p.stderr}")
            sources.append(("kdslc PTX as .ptx", ptx, lambda name, pos: f"$p_{name}.npy"))
        elif stem in awaiting_samples():
            kbase, knames = None, []
        else:
            sys.exit(f"sim-check: {file} has no `{twin}` line before it in {args.table}")
        if nvcc is None:
            print(f"sim-check: SKIPPED {file}: nvcc not found (run scripts/cuda-tools.sh)")
        else:
            for lineinfo in (False, True):
                out = work / f"{stem}{'.lineinfo' if lineinfo else ''}.ptx"
                cmd = [nvcc, "-ptx", "-arch=" + nvcc_arch(path), str(path), "-o", str(out)] + (["-lineinfo"] if lineinfo else [])
                p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"sim-check: nvcc failed on {file}:\n{p.stderr}")
                label = "nvcc -lineinfo PTX" if lineinfo else "nvcc PTX"
                sources.append((label, out, lambda name, pos, s=stem: f"{s}_param_{pos}.npy"))
        for k, (label, target, output_name) in enumerate(sources):
            base = sim(file, label, target, flags, "in-order", f"{n}-{k}")
            if kbase is not None:
                pairs = [
                    (output_name(name, pos), f"{name}.npy")
                    for pos, name in enumerate(knames)
                    if (kbase.outdir / f"{name}.npy").exists()
                ]
                check(base, kbase, pairs)
            for seed in range(1, args.seeds + 1):
                r = sim(file, label, target, flags, f"random:{seed}", f"{n}-{k}-r{seed}")
                check(r, base, same_names(base))

    # The table.
    w = max(len(r.label) for r in runs)
    ws = max(len(r.source) for r in runs)
    print(f"{'launch':<{w}}  {'PTX':<{ws}}  {'schedule':<10} {'result':<10} {'time':>6}  {'max rel diff':>12}  compared with")
    for r in runs:
        worst = f"{r.worst:.1e}" if r.against else ""
        print(f"{r.label:<{w}}  {r.source:<{ws}}  {r.schedule:<10} {r.status:<10} {r.seconds:5.2f}s  {worst:>12}  {r.against or '-'}")
        if r.note:
            print(f"{'':<{w}}    ^ {r.note}")
    bad = [r for r in runs if r.status != "ok"]
    shutil.rmtree(work, ignore_errors=True)
    print(f"\nsim-check: {len(runs)} runs, {len(bad)} failed (floats compared within {FLOAT_TOL:g} relative)")
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
