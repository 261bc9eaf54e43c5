"""Every sample compiled and run in the simulator through the Python API,
each against a NumPy reference (small sizes), with its inputs left
untouched."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import kdsl

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def rng(seed):
    return np.random.default_rng(seed)


def rand_f32(n, seed):
    return rng(seed).uniform(-1, 1, n).astype(np.float32)


def run(kernel, grid, **args):
    """Runs the kernel, checks that no input changed, returns its outputs."""
    before = {k: v.copy() for k, v in args.items() if isinstance(v, np.ndarray)}
    out = kernel.sim(grid=grid, **args)
    for k, v in before.items():
        assert np.array_equal(args[k], v), f"input `{k}` changed"
    writable = [p.name for p in kernel.params if p.kind != "scalar" and p.writable]
    assert list(out) == writable
    for k, v in out.items():
        assert v.shape == args[k].shape and v.dtype == args[k].dtype
    return out


def close(got, want, rtol):
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol)


def test_saxpy():
    k = kdsl.compile(SAMPLES / "saxpy.kdsl").saxpy
    x, y = rand_f32(1000, 1), rand_f32(1000, 2)
    out = run(k, 4, a=2.5, x=x, y=y, n=1000)
    close(out["y"], 2.5 * x.astype(np.float64) + y, 1e-6)


@pytest.mark.parametrize("name,n,grid", [("reduce_sum", 3000, 4), ("cluster_sum", 2000, 4)])
def test_sums(name, n, grid):
    k = kdsl.compile(SAMPLES / f"{name}.kdsl")[name]
    x = rand_f32(n + 100, 3)
    out = run(k, grid, x=x, out=np.array([1.5], np.float32), n=n)
    close(out["out"], np.array([1.5 + x[:n].astype(np.float64).sum()]), 1e-5)


@pytest.mark.parametrize(
    "name,grid,chunks,chunk",
    [("pipeline_sum", 2, 3, 1024), ("ws_pipeline", 2, 3, 1024), ("big_pipeline", 1, 2, 8192)],
)
def test_pipelines(name, grid, chunks, chunk):
    k = kdsl.compile(SAMPLES / f"{name}.kdsl")[name]
    x = rand_f32(grid * chunks * chunk, 5)
    out = run(k, grid, x=x, out=np.zeros(1, np.float32), chunks=chunks)
    close(out["out"], np.array([x.astype(np.float64).sum()]), 1e-5)


def test_ws_named():
    k = kdsl.compile(SAMPLES / "ws_named.kdsl").ws_named
    grid, chunks = 1, 3
    x = rand_f32(grid * chunks * 8192, 15)
    out = run(k, grid, x=x, out=np.full(5, 9.0, np.float32), chunks=chunks)
    want = np.concatenate([x.astype(np.float64).reshape(-1, 8192).sum(axis=1), [9.0, 9.0]])
    close(out["out"], want, 1e-5)


@pytest.mark.parametrize("tile", [None, 8])
def test_sgemm_tiled(tile):
    m = kdsl.compile(SAMPLES / "sgemm_tiled.kdsl", consts={"TILE": tile} if tile else None)
    k = m.sgemm_tiled
    t = tile or 16
    assert k.block == (t, t, 1)
    rows, cols, inner = 20, 18, 25
    a, b = rand_f32(rows * inner, 6), rand_f32(inner * cols, 7)
    out = run(k, (math.ceil(cols / t), math.ceil(rows / t)), a=a, b=b,
              c=np.zeros(rows * cols, np.float32), m=rows, n=cols, k=inner)
    want = a.astype(np.float64).reshape(rows, inner) @ b.astype(np.float64).reshape(inner, cols)
    close(out["c"], want.reshape(-1), 1e-5)


def test_sgemm_regtile():
    k = kdsl.compile(SAMPLES / "sgemm_regtile.kdsl").sgemm_regtile
    assert k.block == (256, 1, 1)
    rows, cols, inner = 136, 130, 20  # partial 128x128 tiles, k not a multiple of 8
    a, b = rand_f32(rows * inner, 9), rand_f32(inner * cols, 10)
    out = run(k, (math.ceil(cols / 128), math.ceil(rows / 128)), a=a, b=b,
              c=np.zeros(rows * cols, np.float32), m=rows, n=cols, k=inner)
    want = a.astype(np.float64).reshape(rows, inner) @ b.astype(np.float64).reshape(inner, cols)
    close(out["c"], want.reshape(-1), 1e-5)


def test_softmax_rows():
    k = kdsl.compile(SAMPLES / "softmax_rows.kdsl").softmax_rows
    rows, cols = 3, 300
    x = rand_f32(rows * cols, 8).reshape(rows, cols)  # any shape: C order
    out = run(k, rows, x=x, y=np.zeros((rows, cols), np.float32), cols=cols)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    close(out["y"], e / e.sum(axis=1, keepdims=True), 1e-5)


def test_transpose():
    k = kdsl.compile(SAMPLES / "transpose.kdsl").transpose
    rows, cols = 40, 45
    inp = np.arange(rows * cols, dtype=np.float32)
    out = run(k, (math.ceil(cols / 32), math.ceil(rows / 32)), input=inp,
              output=np.zeros(rows * cols, np.float32), rows=rows, cols=cols)
    assert np.array_equal(out["output"], inp.reshape(rows, cols).T.reshape(-1))


def test_blend_rows():
    k = kdsl.compile(SAMPLES / "blend_rows.kdsl").blend_rows
    rows, cols = 3, 300
    a, b, w = rand_f32(rows * cols, 9), rand_f32(rows * cols, 10), rand_f32(rows, 11)
    out = run(k, rows, a=a, b=b, w=w, out=np.zeros(rows * cols, np.float32), cols=cols)
    t = np.clip(w.astype(np.float64) + 0.5, 0, 1)
    t = t * t * (3 - 2 * t)
    want = np.repeat(t, cols) * (b.astype(np.float64) - a) + a
    close(out["out"], want, 1e-6)


@pytest.mark.parametrize("name", ["histogram", "histogram_v4"])
def test_histogram(name):
    k = kdsl.compile(SAMPLES / f"{name}.kdsl")[name]
    data = rng(14).integers(0, 256, 3000, dtype=np.uint8)
    n = 2999
    out = run(k, 3, data=data, bins=np.full(256, 7, np.uint32), n=n)
    assert np.array_equal(out["bins"], 7 + np.bincount(data[:n], minlength=256))


def test_ticket_sum():
    k = kdsl.compile(SAMPLES / "ticket_sum.kdsl").ticket_sum
    grid, n = 4, 3000
    x = rand_f32(n, 14)
    out = run(k, grid, x=x, partial=np.zeros(grid, np.float32), tickets=np.zeros(1, np.uint32),
              total=np.zeros(1, np.float32), n=n)
    parts = np.zeros(grid)
    np.add.at(parts, (np.arange(n) // 128) % grid, x.astype(np.float64))
    close(out["partial"], parts, 1e-5)
    assert out["tickets"][0] == 0
    close(out["total"], np.array([parts.sum()]), 1e-5)


def test_hopper_gemm_bf16_tensors():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    m = kdsl.compile(SAMPLES / "hopper_gemm.kdsl", target="sm_90a")
    k = m.hopper_gemm
    assert [p.kind for p in k.params][:2] == ["tensor", "tensor"]
    rows, cols, inner = 130, 40, 72  # a partial tile of rows, two K tiles
    g = rng(1)
    # Multiples of 2^-8 below 1: every partial sum is exact in f32.
    a = (g.integers(0, 256, (rows, inner)) / 256).astype(ml_dtypes.bfloat16)
    b = (g.integers(0, 256, (cols, inner)) / 256).astype(ml_dtypes.bfloat16)
    c = np.zeros(rows * cols, ml_dtypes.bfloat16)
    out = run(k, (math.ceil(cols / 256), math.ceil(rows / 128)), a=a, b=b, c=c,
              m=rows, n=cols, k=inner)
    want = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
    want = want.astype(ml_dtypes.bfloat16).reshape(-1)
    assert out["c"].dtype == ml_dtypes.bfloat16
    assert np.array_equal(out["c"].view(np.uint16), want.view(np.uint16))


def small_ints(dtype, shape, seed):
    """Integers -3 to 3 as `dtype` (exact in bf16 and e4m3): their products
    and sums are exact in f32, so a GEMM's bf16 C is each exact sum
    rounded once, as the reference rounds it."""
    return (rng(seed).integers(-3, 4, shape)).astype(np.float32).astype(dtype)


def gemm_reference(a, b, ml_dtypes):
    """A · Bᵀ in f64, rounded to f32 (exact here) and then to bf16, as bits."""
    want = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
    return want.astype(ml_dtypes.bfloat16).reshape(-1).view(np.uint16)


@pytest.mark.parametrize("rows,cols,inner,grid,seed", [
    # One cluster of two CTAs for two pairs of 128 x 256 tiles (the lower
    # tile of each pair one row deep, the second pair one column wide),
    # three k-tiles each (the last a partial one): the ring of four stages
    # carries on from the first pair into the second.
    (129, 257, 136, 2, None),
    # Two clusters for six pairs (three each), two k-tiles a tile, under a
    # random interleaving of the threads.
    (300, 520, 72, 4, 1),
])
def test_hopper_gemm_persistent_more_tiles_than_ctas(rows, cols, inner, grid, seed):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    k = kdsl.compile(SAMPLES / "hopper_gemm_persistent.kdsl", target="sm_90a").hopper_gemm_persistent
    assert k.cluster == (2, 1, 1)
    assert [p.box for p in k.params[:2]] == [(128, 64), (128, 64)]
    a = small_ints(ml_dtypes.bfloat16, (rows, inner), 31)
    b = small_ints(ml_dtypes.bfloat16, (cols, inner), 32)
    c = np.zeros((rows, cols), ml_dtypes.bfloat16)
    before = {n: v.copy() for n, v in dict(a=a, b=b, c=c).items()}
    out = k.sim(grid=grid, seed=seed, a=a, b=b, c=c, m=rows, n=cols, k=inner)
    assert all(np.array_equal(v, before[n]) for n, v in dict(a=a, b=b, c=c).items())
    assert np.array_equal(out["c"].reshape(-1).view(np.uint16), gemm_reference(a, b, ml_dtypes))


def test_hopper_gemm_fp8_instantiation():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    m = kdsl.compile(SAMPLES / "hopper_gemm.kdsl", target="sm_90a", consts={"ELEM": "e4m3"})
    k = m.hopper_gemm__ELEM_e4m3
    assert m.hopper_gemm is k  # the only instantiation: found by its kernel's name too
    assert [p.elem for p in k.params[:3]] == ["e4m3", "e4m3", "bf16"]
    assert [p.box for p in k.params[:2]] == [(128, 128), (256, 128)]
    assert k.params[0].dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    # A partial tile of rows, two k-tiles (128 and a partial 16).
    rows, cols, inner = 130, 40, 144
    a = small_ints(ml_dtypes.float8_e4m3fn, (rows, inner), 51)
    b = small_ints(ml_dtypes.float8_e4m3fn, (cols, inner), 52)
    c = np.zeros(rows * cols, ml_dtypes.bfloat16)
    out = run(k, (math.ceil(cols / 256), math.ceil(rows / 128)), a=a, b=b, c=c,
              m=rows, n=cols, k=inner)
    assert np.array_equal(out["c"].view(np.uint16), gemm_reference(a, b, ml_dtypes))
    with pytest.raises(TypeError, match=r"argument `a` \(tensor \[e4m3; 128, 128\]\) .* needs dtype ml_dtypes.float8_e4m3fn, not bfloat16"):
        k.sim(grid=1, a=a.astype(ml_dtypes.bfloat16), b=b, c=c, m=rows, n=cols, k=inner)


def attention_reference(q, k, v, heads, seq, scale, causal):
    """softmax(Q Kᵀ · scale) V per head in f64, over the keys up to each row
    when `causal`."""
    d = q.shape[1]
    q, k, v = (t.astype(np.float64).reshape(heads, seq, d) for t in (q, k, v))
    s = np.einsum("hqd,hkd->hqk", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=2, keepdims=True))
    return np.einsum("hqk,hkd->hqd", p / p.sum(axis=2, keepdims=True), v).reshape(heads * seq, d)


@pytest.fixture(scope="module")
def attention():
    """Every instantiation the samples' Makefile builds, in one module."""
    return kdsl.compile(SAMPLES / "flash_attention_fwd.kdsl", target="sm_90a",
                        consts={"HEAD_DIM": [64, 128], "CAUSAL": [False, True]})


@pytest.mark.parametrize("head_dim,causal,seed", [(64, False, 5), (64, True, None), (128, False, None), (128, True, 5)])
def test_flash_attention(attention, head_dim, causal, seed):
    """Two heads of 160 rows: a full 128-row tile and a partial one, of
    queries and of keys (the partial KV tile's rows past seq_len are the
    next head's, or zeros past the tensor's end, and must weigh nothing).
    Two of them under a random interleaving of the threads (`seed`).
    The tolerance is tests/it/sim/attention.rs's: P and O are rounded to
    bf16 (2⁻⁹ each), ex2.approx is good to 2⁻²², and with |V| <= 1 every
    output is within 2⁻⁸ + 2⁻⁹ < 0.006 of the reference."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    name = "flash_attention_fwd" + (f"__HEAD_DIM_{head_dim}" if head_dim != 64 else "") + (
        "__CAUSAL_true" if causal else "")
    k = attention[name]
    assert k.kernel == "flash_attention_fwd" and k.block == (384, 1, 1)
    heads, seq = 2, 160
    g = rng(head_dim + causal)
    q, kk, v = (g.uniform(-1, 1, (heads * seq, head_dim)).astype(ml_dtypes.bfloat16) for _ in range(3))
    scale = 1 / math.sqrt(head_dim)
    o = np.zeros((heads * seq, head_dim), ml_dtypes.bfloat16)
    out = k.sim(grid=(math.ceil(seq / 128), heads), seed=seed, q=q, k=kk, v=v, o=o, seq_len=seq, scale=scale)
    assert not o.any()  # the input is untouched
    want = attention_reference(q, kk, v, heads, seq, scale, causal)
    got = out["o"].astype(np.float64)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=0, atol=0.006)


# The tests of each sample (a new sample comes with one: the test below
# fails until it is listed here).
SAMPLE_TESTS = {
    "saxpy": ["test_saxpy"],
    "reduce_sum": ["test_sums"],
    "cluster_sum": ["test_sums"],
    "pipeline_sum": ["test_pipelines"],
    "ws_pipeline": ["test_pipelines"],
    "big_pipeline": ["test_pipelines"],
    "ws_named": ["test_ws_named"],
    "sgemm_tiled": ["test_sgemm_tiled"],
    "sgemm_regtile": ["test_sgemm_regtile"],
    "softmax_rows": ["test_softmax_rows"],
    "transpose": ["test_transpose"],
    "blend_rows": ["test_blend_rows"],
    "histogram": ["test_histogram"],
    "histogram_v4": ["test_histogram"],
    "ticket_sum": ["test_ticket_sum"],
    "hopper_gemm": ["test_hopper_gemm_bf16_tensors", "test_hopper_gemm_fp8_instantiation"],
    "hopper_gemm_persistent": ["test_hopper_gemm_persistent_more_tiles_than_ctas"],
    "flash_attention_fwd": ["test_flash_attention"],
}


def test_every_sample_is_tested():
    assert {p.stem for p in SAMPLES.glob("*.kdsl")} == set(SAMPLE_TESTS)
    for tests in SAMPLE_TESTS.values():
        for t in tests:
            assert callable(globals().get(t)), f"no test `{t}` in {__file__}"


def source_target(path: Path) -> str:
    """The target a sample asks for on a `// target: sm_90a` line of its
    leading comment, else sm_90 (as tests/it/common's `source_target`)."""
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line.startswith("//"):
            break
        if line.startswith("// target:"):
            return line[len("// target:"):].strip()
    return "sm_90"


def test_the_wgmma_samples_ask_for_sm_90a():
    wgmma = {p.stem for p in SAMPLES.glob("*.kdsl") if "wgmma" in p.read_text()}
    assert wgmma and all(source_target(SAMPLES / f"{s}.kdsl") == "sm_90a" for s in wgmma)


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.kdsl")), ids=lambda p: p.stem)
def test_every_sample_compiles_with_its_manifest(path):
    target = source_target(path)
    m = kdsl.compile(path, target=target)
    assert m.ptx.startswith("//") or ".entry" in m.ptx
    assert m.manifest["target"] == target
    assert [k["name"] for k in m.manifest["kernels"]] == list(m.kernels)
    for k in m.kernels.values():
        assert f".entry {k.name}" in m.ptx


COPY = """
kernel cp(x: global [e4m3], y: global mut [e4m3], h: global [f16], g: global mut [f16],
          b: global [bf16], c: global mut [bf16], s: f16, n: u32) block(32) {
    let i = thread_idx.x;
    if i < n {
        y[i] = x[i];
        g[i] = h[i] * s;
        c[i] = b[i];
    }
}
"""


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_fp8_bf16_and_f16_arrays_under_every_schedule(seed):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    k = kdsl.compile(COPY, name="copy.kdsl").cp
    assert [p.dtype for p in k.params[:2]] == [np.dtype(ml_dtypes.float8_e4m3fn)] * 2
    x = np.array([0.5, -1.5, 448, 0.0625, 3], ml_dtypes.float8_e4m3fn)
    h = np.array([1, 2, -3, 4, 5], np.float16)
    b = np.array([1.5, -2, 3.25, 1e30, 0], ml_dtypes.bfloat16)
    out = k.sim(grid=1, seed=seed, x=x, y=np.zeros(5, ml_dtypes.float8_e4m3fn), h=h,
                g=np.full(5, 7, np.float16), b=b, c=np.zeros(5, ml_dtypes.bfloat16),
                s=np.float16(0.5), n=4)
    assert out["y"].dtype == ml_dtypes.float8_e4m3fn
    assert np.array_equal(out["y"].view(np.uint8), np.append(x[:4], 0).astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
    assert np.array_equal(out["g"], np.array([0.5, 1, -1.5, 2, 7], np.float16))
    assert np.array_equal(out["c"].view(np.uint16), np.append(b[:4], 0).astype(ml_dtypes.bfloat16).view(np.uint16))
