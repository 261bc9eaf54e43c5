#!/usr/bin/env python3
"""Side-by-side measure of kdslc against NVIDIA's CUDA C++ compilers, in one run.

For every kernel NAME.cu in the kernels folder whose kdsl source NAME.kdsl is in
the samples folder (the bench kernels are samples: one source for both):
  * compile time to PTX, whole process: `kdslc NAME.kdsl -o -` versus `nvcc -ptx`
    (median of --runs, interleaved A B A B so machine drift hits both);
  * compile time to PTX in process: NVRTC (nvrtcCompileProgram), for reference;
  * code quality: both PTX files assembled by the same ptxas for --arch, then
    registers (ptxas -v) and SASS instruction count (nvdisasm) side by side.
  * hot loops (bench/sass.py, from `nvdisasm -bbcfg`): per kernel, the SASS
    instructions of the innermost hot loop per element it handles, the
    instructions executed per element, and the global loads in flight per
    iteration, kdslc and nvcc side by side. A kernel without NAME.meta, or a
    measure that cannot be taken, prints "n/a" and never fails the run.
  * tensor cores: for a kernel whose .meta names a group of elements (the GEMM's
    k-tile of 4 HGMMAs), the HGMMAs and the other SASS instructions executed per
    group, spilled bytes and registers at entry, kdslc and nvcc side by side.
  * variants: a .meta's `[[variants]]` are kdsl kernels measured beside the twin's
    row, kdslc only (no twin: the nvcc columns say n/a): an instantiation of the
    sample's kernel constants (`consts`, e.g. the GEMM's fp8 `ELEM=e4m3`) or
    another sample (`sample`), each compiled alone, its keys replacing the meta's.
Both compilers target --arch, or the architecture a twin's first line names
(`// arch: sm_90a`: the GEMM's wgmma and setmaxnreg exist only there).
With --scale it also compiles one file holding K renamed copies of every kdsl
kernel, for K in 1, 10, 100, 1000, and reports wall time, CPU time and peak
memory (the kdslc child's getrusage) to show how they grow.
--selftest runs bench/test_sass.py (the hot-loop measure over saved nvdisasm
listings; no CUDA tool needed) and exits.

usage: bench/peer.py --kdslc PATH [--kernels DIR] [--samples DIR] [--arch sm_90] [--runs 5] [--json FILE] [--scale]
                     [--loops] [--save DIR]
       bench/peer.py --selftest
Needs the tools that the project's scripts/cuda-tools.sh installs (into $KDSL_CUDA_TOOLS or
~/.cache/kdsl-cuda-13.5; it installs them on first use). The CUDA twins and their .meta
files are bench/kernels/, the kdsl kernels samples/.
"""
import argparse, ctypes, json, os, re, statistics, subprocess, sys, tempfile, time

try:
    import tomllib  # Python 3.11+; without it the hot-loop columns say n/a
except ImportError:  # pragma: no cover
    tomllib = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sass  # noqa: E402  (bench/sass.py, next to this file)


def tools_root():
    script = os.path.join(HERE, os.pardir, "scripts", "cuda-tools.sh")
    out = subprocess.run([script], check=True, capture_output=True, text=True).stdout.strip()
    return out


def timed(cmd, env=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t, p


def variant_rows(a, root, n, arch, tmp):
    """The rows of kernel `n`'s variants (its .meta's `[[variants]]`), kdslc only:
    each compiled alone (one kernel in the cubin, which bench/sass.py needs), with
    the variant's keys in place of the meta's. Never raises for a bad variant."""
    meta = load_meta(a.kernels, n)
    if not meta or "error" in meta:
        return []
    rows = []
    for v in meta.get("variants", []):
        name = v.get("name", "?")
        sample = os.path.join(a.samples, v.get("sample", n) + ".kdsl")
        cmd = [a.kdslc, sample, "--target", arch, "-o", "-"]
        for c in v.get("consts", []):
            cmd += ["--const", c]
        row = {"kernel": name, "arch": arch, "variant_of": n}
        dt, p = timed(cmd)
        if p.returncode != 0:
            row["kdslc_error"] = (p.stderr or p.stdout).strip().splitlines()[:4]
            rows.append(row)
            continue
        vmeta = {k: x for k, x in meta.items() if k != "variants"}
        vmeta.update({k: x for k, x in v.items() if k not in ("name", "sample", "consts")})
        row["kdslc_ms"] = dt * 1e3
        row["kdsl_sass"] = ptxas_stats(root, p.stdout, arch, tmp, name + ".kdslc", vmeta, name, a.save)
        row["nvcc_sass"] = {"ok": False, "error": ["no nvcc twin"], "hot": {"error": "no nvcc twin"}}
        rows.append(row)
    return rows


def ptxas_stats(root, ptx_text, arch, tmp, tag, meta=None, kernel=None, save=None):
    ptx = os.path.join(tmp, tag + ".ptx")
    cubin = os.path.join(tmp, tag + ".cubin")
    open(ptx, "w").write(ptx_text)
    p = subprocess.run([os.path.join(root, "bin", "ptxas"), "-arch=" + arch, "-v", ptx, "-o", cubin],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"ok": False, "error": (p.stderr or p.stdout).strip().splitlines()[:3]}
    regs = [int(m) for m in re.findall(r"Used (\d+) registers", p.stderr + p.stdout)]
    spills = sum(int(m) for m in re.findall(r"(\d+) bytes spill (?:stores|loads)", p.stderr + p.stdout))
    nvdisasm = os.path.join(root, "bin", "nvdisasm")
    d = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True)
    lines = [l for l in d.stdout.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", l)]
    body = [l for l in lines if not re.search(r"\bNOP\b", l)]
    out = {"ok": True, "registers": max(regs) if regs else None, "spill_bytes": spills, "sass": len(body)}
    out["hot"] = hot_loops(nvdisasm, cubin, meta, kernel, save, tag, ptx_text, d.stdout)
    return out


def hot_loops(nvdisasm, cubin, meta, kernel, save, tag, ptx_text, listing):
    """bench/sass.py's measures of one cubin; {"error": ...} (never an exception) when
    they cannot be taken, so that a measurement problem never fails the run."""
    if meta is None:
        return {"error": "no .meta file"}
    if "error" in meta:
        return {"error": meta["error"]}
    g = subprocess.run([nvdisasm, "-bbcfg", "-poff", cubin], capture_output=True, text=True)
    if save:
        os.makedirs(save, exist_ok=True)
        for ext, text in (("ptx", ptx_text), ("sass", listing), ("cfg", g.stdout)):
            open(os.path.join(save, "%s.%s" % (tag, ext)), "w").write(text)
    if g.returncode != 0:
        return {"error": "nvdisasm -bbcfg: %s" % g.stderr.strip()[:200]}
    try:
        bad = param_mismatch(ptx_text, kernel, meta)
    except (AttributeError, IndexError, TypeError) as e:
        bad = "the .meta's params: %s" % e
    if bad:
        return {"error": bad}
    r = sass.analyze(g.stdout, meta, kernel)
    for k in ("totals",):
        r.pop(k, None)
    return r


def param_mismatch(ptx_text, kernel, meta):
    """The .meta's parameter list must have the PTX entry's sizes, or the interpreter
    would read the wrong constant-bank words."""
    m = re.search(r"\.entry\s+%s\s*\(([^)]*)\)" % re.escape(kernel), ptx_text)
    if not m:
        return "no .entry %s in the PTX" % kernel
    # `.param .u64 p`, `.param .align 64 .b8 tmap[128]` (a tensor map).
    ptx_sizes = [int(n) if n else {"u64": 8, "b64": 8, "s64": 8, "f64": 8}.get(t, 4)
                 for t, n in re.findall(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+[\w$]+(?:\[(\d+)\])?", m.group(1))]
    sizes = {"tmap": 128, "ptr": 8, "u64": 8, "s64": 8, "f64": 8}
    meta_sizes = [sizes.get(p.split(":")[1].strip(), 4) for p in meta.get("params", [])]
    if ptx_sizes != meta_sizes:
        return "the .meta's params %s do not match the PTX entry's sizes %s" % (meta_sizes, ptx_sizes)
    return None


def kernel_arch(cu, default):
    """The architecture a twin's first line names (`// arch: sm_90a`: wgmma and
    setmaxnreg exist only there), else `default`: both compilers target it."""
    with open(cu) as f:
        first = f.readline()
    m = re.match(r"//\s*arch:\s*(sm_\w+)", first)
    return m.group(1) if m else default


def load_meta(kernels, name):
    """The kernel's .meta (TOML), None when there is none, or {"error": why} when it
    cannot be read: a broken .meta costs the hot-loop columns, never the run."""
    path = os.path.join(kernels, name + ".meta")
    if not os.path.exists(path):
        return None
    if tomllib is None:
        return {"error": "reading .meta files needs Python 3.11 (tomllib)"}
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        return {"error": "%s: %s" % (os.path.basename(path), e)}


GNU_TIME = "/usr/bin/time"


def run_rusage(cmd):
    """Wall time, CPU time (user + system) and peak resident memory of one kdslc
    process.

    The peak comes from GNU time (`/usr/bin/time -f %M`), whose small process
    is the one that forks kdslc: Linux carries a process's peak RSS across
    fork and exec, so wait4's ru_maxrss for a child of this Python process
    (which holds NVRTC, about 86 MiB) would report Python's size for a small
    compile. Without GNU time the peak is None (n/a), never a wrong number.
    CPU times come from wait4 (microseconds; they are not inherited, and they
    include GNU time's own, about a millisecond)."""
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        rep = os.path.join(d, "rusage")
        use_time = os.access(GNU_TIME, os.X_OK)
        full = [GNU_TIME, "-o", rep, "-f", "%e %U %S %M"] + cmd if use_time else cmd
        with open(os.path.join(d, "stderr"), "w+b") as err:
            p = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=err)
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            wall = time.perf_counter() - t
            err.seek(0)
            msg = err.read().decode(errors="replace")
        out = {"rc": p.returncode, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime,
               "user": ru.ru_utime, "sys": ru.ru_stime, "maxrss_kib": None, "stderr": msg}
        if use_time and os.path.exists(rep):
            fields = open(rep).read().split()
            try:
                out["maxrss_kib"] = int(fields[-1])
            except (ValueError, IndexError):
                pass
    return out


class Nvrtc:
    def __init__(self, root):
        self.lib = ctypes.CDLL(os.path.join(root, "lib", "libnvrtc.so.13"))

    def compile(self, src, arch):
        prog = ctypes.c_void_p()
        if self.lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None):
            return None
        opt = ("--gpu-architecture=" + arch.replace("sm_", "compute_")).encode()
        opts = (ctypes.c_char_p * 1)(opt)
        t = time.perf_counter()
        rc = self.lib.nvrtcCompileProgram(prog, 1, opts)
        dt = time.perf_counter() - t
        self.lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return dt if rc == 0 else None


def med(xs):
    return statistics.median(xs) if xs else None


def scale_file(kdsl_sources, k):
    """One file with k renamed copies of every kernel (constants kept once)."""
    out = []
    for name, src in kdsl_sources:
        consts = [l for l in src.splitlines() if l.startswith("const ")]
        out.extend(consts)
    out = list(dict.fromkeys(out))
    for i in range(k):
        for name, src in kdsl_sources:
            body = "\n".join(l for l in src.splitlines() if not l.startswith("const "))
            out.append(re.sub(r"\bkernel\s+(\w+)", lambda m: "kernel %s_%d" % (m.group(1), i), body))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kdslc")
    ap.add_argument("--kernels", default=os.path.join(HERE, "kernels"))
    ap.add_argument("--samples", default=os.path.join(HERE, os.pardir, "samples"))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--loops", action="store_true", help="print every hot loop of every kernel")
    ap.add_argument("--save", help="write each kernel's PTX, SASS listing and CFG (both compilers) here")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        import unittest
        suite = unittest.defaultTestLoader.discover(HERE, pattern="test_sass.py")
        ok = unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful()
        sys.exit(0 if ok else 1)
    if not a.kdslc:
        ap.error("--kdslc is required (except with --selftest)")

    root = tools_root()
    env = dict(os.environ, PATH=os.path.join(root, "bin") + os.pathsep + os.environ["PATH"])
    nvrtc = Nvrtc(root)
    names = sorted(f[:-3] for f in os.listdir(a.kernels)
                   if f.endswith(".cu") and os.path.exists(os.path.join(a.samples, f[:-3] + ".kdsl")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            kd, cu = os.path.join(a.samples, n + ".kdsl"), os.path.join(a.kernels, n + ".cu")
            arch = kernel_arch(cu, a.arch)
            row = {"kernel": n, "arch": arch}
            tk, tn, tr = [], [], []
            kptx = nptx = None
            kerr = None
            for _ in range(a.runs + 1):  # first round is a warm-up
                dk, pk = timed([a.kdslc, kd, "--target", arch, "-o", "-"])
                if pk.returncode != 0:
                    kerr = (pk.stderr or pk.stdout).strip().splitlines()[:4]
                    break
                kptx = pk.stdout
                dn, pn = timed(["nvcc", "-ptx", "-arch=" + arch, cu, "-o", os.path.join(tmp, n + ".nvcc.ptx")], env)
                if pn.returncode != 0:
                    sys.exit("nvcc failed on %s: %s" % (cu, pn.stderr))
                dr = nvrtc.compile(open(cu).read(), arch)
                tk.append(dk); tn.append(dn)
                if dr is not None:
                    tr.append(dr)
            nptx = open(os.path.join(tmp, n + ".nvcc.ptx")).read() if os.path.exists(os.path.join(tmp, n + ".nvcc.ptx")) else None
            if kerr:
                row["kdslc_error"] = kerr
            else:
                tk, tn, tr = tk[1:], tn[1:], tr[1:]
                row.update(kdslc_ms=med(tk) * 1e3, nvcc_ms=med(tn) * 1e3,
                           nvrtc_ms=med(tr) * 1e3 if tr else None,
                           speedup_vs_nvcc=med([b / x for x, b in zip(tk, tn)]))
                meta = load_meta(a.kernels, n)
                row["kdsl_sass"] = ptxas_stats(root, kptx, arch, tmp, n + ".kdslc", meta, n, a.save)
            if nptx is None:
                dn, pn = timed(["nvcc", "-ptx", "-arch=" + arch, cu, "-o", os.path.join(tmp, n + ".nvcc.ptx")], env)
                nptx = open(os.path.join(tmp, n + ".nvcc.ptx")).read()
            row["nvcc_sass"] = ptxas_stats(root, nptx, arch, tmp, n + ".nvcc", load_meta(a.kernels, n), n,
                                           a.save)
            rows.append(row)
            rows.extend(variant_rows(a, root, n, arch, tmp))

        scale = []
        if a.scale:
            # One file, one target: the kernels for --arch (not the GEMM's sm_90a).
            srcs = [(n, open(os.path.join(a.samples, n + ".kdsl")).read()) for n in names
                    if kernel_arch(os.path.join(a.kernels, n + ".cu"), a.arch) == a.arch]
            for k in (1, 10, 100, 1000):
                f = os.path.join(tmp, "scale_%d.kdsl" % k)
                text = scale_file(srcs, k)
                open(f, "w").write(text)
                rs = []
                for _ in range(3):
                    r = run_rusage([a.kdslc, f, "--target", a.arch, "-o", os.path.join(tmp, "scale.ptx")])
                    if r["rc"] != 0:
                        rs = None
                        break
                    rs.append(r)
                entry = {"copies": k, "lines": text.count("\n"), "bytes": len(text)}
                if rs:
                    entry.update(ms=med([r["wall"] for r in rs]) * 1e3,
                                 cpu_ms=med([r["cpu"] for r in rs]) * 1e3,
                                 user_ms=med([r["user"] for r in rs]) * 1e3,
                                 sys_ms=med([r["sys"] for r in rs]) * 1e3,
                                 peak_mib=(max(r["maxrss_kib"] for r in rs) / 1024
                                           if all(r["maxrss_kib"] is not None for r in rs) else None))
                else:
                    entry["ms"] = None
                scale.append(entry)

    print("%-14s %10s %10s %10s %9s | %13s %13s" % ("kernel", "kdslc ms", "nvcc ms", "nvrtc ms", "speedup",
                                                 "SASS kdsl/nv", "regs kdsl/nv"))
    for r in rows:
        if "kdslc_error" in r:
            print("%-14s kdslc failed: %s" % (r["kernel"], " / ".join(r["kdslc_error"])))
            continue
        if "variant_of" in r:
            # One compile, no twin: no timing columns.
            ks = r["kdsl_sass"]
            counts = ("%d/-" % ks["sass"]) if ks["ok"] else "ptxas rejects"
            regs = ("%s/-" % ks["registers"]) if ks["ok"] else "-"
            print("%-14s %10s %10s %10s %9s | %13s %13s   (kdslc only, beside %s)" % (
                r["kernel"], "-", "-", "-", "-", counts, regs, r["variant_of"]))
            if not ks["ok"]:
                print("    ptxas: %s" % " / ".join(ks["error"]))
            continue
        ks, ns = r["kdsl_sass"], r["nvcc_sass"]
        counts = ("%d/%d" % (ks["sass"], ns["sass"])) if ks["ok"] else "ptxas rejects"
        regs = ("%s/%s" % (ks["registers"], ns["registers"])) if ks["ok"] else "-"
        # NVRTC has no <cuda.h> (the GEMM's CUtensorMap): n/a.
        print("%-14s %10.2f %10.1f %10s %8.0fx | %13s %13s" % (
            r["kernel"], r["kdslc_ms"], r["nvcc_ms"], fmt(r["nvrtc_ms"], "%.1f"),
            r["speedup_vs_nvcc"], counts, regs))
        if not ks["ok"]:
            print("    ptxas: %s" % " / ".join(ks["error"]))
    print_hot(rows, a.loops)
    print_groups(rows)
    if scale:
        print()
        print("%-11s %8s %10s %10s %10s %10s %10s %9s" % ("scale", "lines", "bytes", "wall ms", "CPU ms",
                                                         "user ms", "sys ms", "peak MiB"))
    for s in scale:
        if s["ms"] is None:
            print("x%-10d %8d %10d  kdslc failed on the scale file" % (s["copies"], s["lines"], s["bytes"]))
            continue
        print("x%-10d %8d %10d %10.1f %10.1f %10.1f %10.1f %9s" % (
            s["copies"], s["lines"], s["bytes"], s["ms"], s["cpu_ms"], s["user_ms"], s["sys_ms"],
            fmt(s["peak_mib"], "%.1f")))
    if a.json:
        json.dump({"arch": a.arch, "rows": rows, "scale": scale}, open(a.json, "w"), indent=1)


def fmt(v, spec="%.2f"):
    return "n/a" if v is None else (spec % v)


def per_elem(h, key):
    """A per-element figure, '-' where the kernel has no hot loop, n/a where the
    measure could not be taken."""
    if "error" in h:
        return "n/a"
    v = h.get(key)
    # '~': the interpreter met a branch on a value it could not know and took the
    # fall-through (--loops says how many); the figure may be off
    return "-" if v is None else "%.2f%s" % (v, "~" if h.get("guesses") else "")


def flight(h):
    if "error" in h or not h.get("hot_loops"):
        return "n/a" if "error" in h else "-"
    return ",".join("%d%s" % (r["loads_in_flight"], "s" if r["load_kind"] == "shared" else "")
                    for r in h["hot_loops"])


def print_groups(rows):
    """The tensor-core table: for kernels whose .meta names a group of elements (the
    GEMM's k-tile), the unit instructions (HGMMA) and the other SASS instructions
    executed per group, spilled bytes and registers at entry (ptxas -v's count: with
    setmaxnreg, what every warp starts with), kdslc/nvcc. Never raises."""
    lines = []
    for r in rows:
        k = r.get("kdsl_sass") or {}
        n = r.get("nvcc_sass") or {}
        kg = (k.get("hot") or {}).get("per_group")
        ng = (n.get("hot") or {}).get("per_group")
        # A variant's row is shown whenever it compiled, its measure n/a if need be.
        if not (kg or ng) and not ("variant_of" in r and k.get("ok")):
            continue
        name = (kg or ng or {"name": "-"})["name"]

        def both(key, spec):
            return "%s/%s" % (fmt((kg or {}).get(key), spec), fmt((ng or {}).get(key), spec))
        lines.append("%-14s %8s %18s %18s %14s %18s" % (
            r["kernel"], name, both("units", "%g"), both("other", "%g"),
            "%s/%s" % (fmt(k.get("spill_bytes"), "%d"), fmt(n.get("spill_bytes"), "%d")),
            "%s/%s" % (fmt(k.get("registers"), "%d"), fmt(n.get("registers"), "%d"))))
    if not lines:
        return
    print()
    print("tensor cores (%s; kdslc/nvcc, one CTA's consumer thread followed through the K loop)" %
          ", ".join(sorted({r.get("arch", "?") for r in rows if r["kernel"] in [l.split()[0] for l in lines]})))
    print("%-14s %8s %18s %18s %14s %18s" % ("kernel", "per", "HGMMA/group", "other SASS/group",
                                             "spill bytes", "registers at entry"))
    for line in lines:
        print(line)


def print_hot(rows, verbose):
    """The hot-loop table: never raises, whatever the measures hold."""
    print()
    print("hot loops (SASS per element, kdslc/nvcc; loads in flight per hot-loop iteration, 's' = shared;")
    print("           '~' = a branch on an unknown value was guessed, see --loops)")
    print("%-14s %15s %15s %15s %15s %13s" % ("kernel", "hot loop/elem", "executed/elem", "loads in flight",
                                              "fixed/thread", "in const loops"))
    for r in rows:
        k = r.get("kdsl_sass") or {}
        n = r.get("nvcc_sass") or {}
        kh, nh = k.get("hot", {"error": "no kdslc SASS"}), n.get("hot", {"error": "no nvcc SASS"})
        print("%-14s %15s %15s %15s %15s %13s" % (
            r["kernel"],
            "%s/%s" % (per_elem(kh, "hot_loop_per_element"), per_elem(nh, "hot_loop_per_element")),
            "%s/%s" % (per_elem(kh, "executed_per_element"), per_elem(nh, "executed_per_element")),
            "%s/%s" % (flight(kh), flight(nh)),
            "%s/%s" % (fmt(kh.get("fixed_cost"), "%.0f"), fmt(nh.get("fixed_cost"), "%.0f")),
            "%s/%s" % (fmt(kh.get("fixed_loop_instructions"), "%d"), fmt(nh.get("fixed_loop_instructions"), "%d"))))
        for who, h in (("kdslc", kh), ("nvcc", nh)):
            if "error" in h:
                # CI greps this output for a kdslc failure or a ptxas rejection: a
                # measurement problem must never read like one.
                why = re.sub(r"(?i)failed|rejects", "-", str(h["error"]))
                print("    %s: hot-loop measure n/a: %s" % (who, why))
            elif verbose:
                for lp in h["hot_loops"]:
                    print("    %-5s loop %04x-%04x: %s instructions an iteration, %s elements, %s in flight (%s)%s" % (
                        who, lp["first"], lp["last"], fmt(lp["per_iteration"], "%g"),
                        fmt(lp["elements_per_iteration"], "%g"), lp["loads_in_flight"], lp["load_kind"],
                        "" if lp["straight"] else " (branches inside: executed count)"))
                if h.get("guesses"):
                    print("    %-5s %d branch(es) on unknown values took their fall-through" % (who, h["guesses"]))


if __name__ == "__main__":
    main()
