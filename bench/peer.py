#!/usr/bin/env python3
"""Side-by-side measure of kdslc against NVIDIA's CUDA C++ compilers, in one run.

For every kernel NAME with both NAME.kdsl and NAME.cu in the kernels folder:
  * compile time to PTX, whole process: `kdslc NAME.kdsl -o -` versus `nvcc -ptx`
    (median of --runs, interleaved A B A B so machine drift hits both);
  * compile time to PTX in process: NVRTC (nvrtcCompileProgram), for reference;
  * code quality: both PTX files assembled by the same ptxas for --arch, then
    registers (ptxas -v) and SASS instruction count (nvdisasm) side by side.
With --scale it also times kdslc on one file holding K renamed copies of every
kdsl kernel, for K in 1, 10, 100, 1000, to show how compile time grows.

usage: bench/peer.py --kdslc PATH [--kernels DIR] [--arch sm_90] [--runs 5] [--json FILE] [--scale]
Needs the tools that the project's scripts/cuda-tools.sh installs (into $KDSL_CUDA_TOOLS or
~/.cache/kdsl-cuda-13.5; it installs them on first use). The kernels are bench/kernels/.
"""
import argparse, ctypes, json, os, re, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))


def tools_root():
    script = os.path.join(HERE, os.pardir, "scripts", "cuda-tools.sh")
    out = subprocess.run([script], check=True, capture_output=True, text=True).stdout.strip()
    return out


def timed(cmd, env=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t, p


def ptxas_stats(root, ptx_text, arch, tmp, tag):
    ptx = os.path.join(tmp, tag + ".ptx")
    cubin = os.path.join(tmp, tag + ".cubin")
    open(ptx, "w").write(ptx_text)
    p = subprocess.run([os.path.join(root, "bin", "ptxas"), "-arch=" + arch, "-v", ptx, "-o", cubin],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"ok": False, "error": (p.stderr or p.stdout).strip().splitlines()[:3]}
    regs = [int(m) for m in re.findall(r"Used (\d+) registers", p.stderr + p.stdout)]
    d = subprocess.run([os.path.join(root, "bin", "nvdisasm"), "-c", cubin], capture_output=True, text=True)
    sass = [l for l in d.stdout.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", l)]
    body = [l for l in sass if not re.search(r"\bNOP\b", l)]
    return {"ok": True, "registers": max(regs) if regs else None, "sass": len(body)}


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
    ap.add_argument("--kdslc", required=True)
    ap.add_argument("--kernels", default=os.path.join(HERE, "kernels"))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--scale", action="store_true")
    a = ap.parse_args()

    root = tools_root()
    env = dict(os.environ, PATH=os.path.join(root, "bin") + os.pathsep + os.environ["PATH"])
    nvrtc = Nvrtc(root)
    names = sorted(f[:-5] for f in os.listdir(a.kernels)
                   if f.endswith(".kdsl") and os.path.exists(os.path.join(a.kernels, f[:-5] + ".cu")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            kd, cu = os.path.join(a.kernels, n + ".kdsl"), os.path.join(a.kernels, n + ".cu")
            row = {"kernel": n}
            tk, tn, tr = [], [], []
            kptx = nptx = None
            kerr = None
            for _ in range(a.runs + 1):  # first round is a warm-up
                dk, pk = timed([a.kdslc, kd, "--target", a.arch, "-o", "-"])
                if pk.returncode != 0:
                    kerr = (pk.stderr or pk.stdout).strip().splitlines()[:4]
                    break
                kptx = pk.stdout
                dn, pn = timed(["nvcc", "-ptx", "-arch=" + a.arch, cu, "-o", os.path.join(tmp, n + ".nvcc.ptx")], env)
                if pn.returncode != 0:
                    sys.exit("nvcc failed on %s: %s" % (cu, pn.stderr))
                dr = nvrtc.compile(open(cu).read(), a.arch)
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
                row["kdsl_sass"] = ptxas_stats(root, kptx, a.arch, tmp, n + ".kdsl")
            if nptx is None:
                dn, pn = timed(["nvcc", "-ptx", "-arch=" + a.arch, cu, "-o", os.path.join(tmp, n + ".nvcc.ptx")], env)
                nptx = open(os.path.join(tmp, n + ".nvcc.ptx")).read()
            row["nvcc_sass"] = ptxas_stats(root, nptx, a.arch, tmp, n + ".nvcc")
            rows.append(row)

        scale = []
        if a.scale:
            srcs = [(n, open(os.path.join(a.kernels, n + ".kdsl")).read()) for n in names]
            for k in (1, 10, 100, 1000):
                f = os.path.join(tmp, "scale_%d.kdsl" % k)
                text = scale_file(srcs, k)
                open(f, "w").write(text)
                ts = []
                ok = True
                for _ in range(3):
                    d, p = timed([a.kdslc, f, "--target", a.arch, "-o", os.path.join(tmp, "scale.ptx")])
                    if p.returncode != 0:
                        ok = False
                        break
                    ts.append(d)
                scale.append({"copies": k, "lines": text.count("\n"), "bytes": len(text),
                              "ms": med(ts) * 1e3 if ok else None})

    print("%-14s %10s %10s %10s %9s | %13s %13s" % ("kernel", "kdslc ms", "nvcc ms", "nvrtc ms", "speedup",
                                                 "SASS kdsl/nv", "regs kdsl/nv"))
    for r in rows:
        if "kdslc_error" in r:
            print("%-14s kdslc failed: %s" % (r["kernel"], " / ".join(r["kdslc_error"])))
            continue
        ks, ns = r["kdsl_sass"], r["nvcc_sass"]
        sass = ("%d/%d" % (ks["sass"], ns["sass"])) if ks["ok"] else "ptxas rejects"
        regs = ("%s/%s" % (ks["registers"], ns["registers"])) if ks["ok"] else "-"
        print("%-14s %10.2f %10.1f %10.1f %8.0fx | %13s %13s" % (
            r["kernel"], r["kdslc_ms"], r["nvcc_ms"], r["nvrtc_ms"] or float("nan"),
            r["speedup_vs_nvcc"], sass, regs))
        if not ks["ok"]:
            print("    ptxas: %s" % " / ".join(ks["error"]))
    for s in scale:
        print("scale x%-5d %8d lines %10d bytes  %s ms" % (s["copies"], s["lines"], s["bytes"],
                                                          "%.1f" % s["ms"] if s["ms"] is not None else "failed"))
    if a.json:
        json.dump({"arch": a.arch, "rows": rows, "scale": scale}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
