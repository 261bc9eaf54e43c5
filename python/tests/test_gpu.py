"""`kernel[grid](*args)`: arguments are checked against the signature before
the driver is touched (tested anywhere); without a CUDA driver the launch
raises GpuUnavailable; against a stand-in driver (tests/driver/
libcuda_stub.c, which logs what it is given) the launch configuration, the
parameters and the cuTensorMapEncodeTiled arguments built from arrays'
shapes are what the kernel's signature says (tested anywhere); with torch
and a GPU, kernels run on torch tensors and match the simulator
(scripts/gpu-check.sh runs these when lent one)."""

from __future__ import annotations

import ctypes
import math
import struct
from pathlib import Path

import numpy as np
import pytest

import kdsl
from fakes import DL_BFLOAT, DL_CPU, DL_F8_E4M3FN, DL_FLOAT, CudaArray, DLPackArray

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def has_driver() -> bool:
    for name in ("libcuda.so.1", "libcuda.so"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    return False


class HostDLPack:
    """A NumPy array behind DLPack alone: a host array in disguise."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.fixture(scope="module")
def saxpy():
    return kdsl.compile(SAMPLES / "saxpy.kdsl").saxpy


def test_arguments_are_checked_before_the_driver(saxpy):
    x = CudaArray((512,), "<f4")
    y = CudaArray((512,), "<f4")
    with pytest.raises(TypeError, match=r"argument `x` \(global \[f32\]\) of kernel `saxpy` is a NumPy array, in host memory"):
        saxpy[2](2.0, np.ones(512, np.float32), y, 512)
    with pytest.raises(TypeError, match=r"argument `x` .* is in host memory"):
        saxpy[2](2.0, HostDLPack(np.ones(512, np.float32)), y, 512)
    with pytest.raises(TypeError, match=r"argument `y` .* needs elements of typestr <f4, not <f8"):
        saxpy[2](2.0, x, CudaArray((512,), "<f8"), 512)
    with pytest.raises(ValueError, match=r"argument `x` .* not C-contiguous"):
        saxpy[2](2.0, CudaArray((512,), "<f4", strides=(8,)), y, 512)
    with pytest.raises(TypeError, match=r"kernel `saxpy`: missing argument `n` \(u32\)"):
        saxpy[2](2.0, x, y)
    with pytest.raises(TypeError, match=r"argument `x` .* takes a device array .* not list"):
        saxpy[2](2.0, [1.0], y, 512)
    with pytest.raises(ValueError, match=r"argument `n` \(u32\): `-5` is out of range"):
        saxpy[2](2.0, x, y, -5)


def test_bf16_tensors_need_dlpack():
    k = kdsl.compile(SAMPLES / "hopper_gemm.kdsl", target="sm_90a").hopper_gemm
    a = CudaArray((128, 64), "<u2")
    with pytest.raises(TypeError, match=r"argument `a` \(tensor \[bf16; 128, 64\]\) .* needs bf16 elements, which `__cuda_array_interface__` cannot describe"):
        k[1, 1](a, a, a, 128, 256, 64)


@pytest.mark.skipif(has_driver(), reason="this machine has a CUDA driver")
def test_without_a_driver_the_launch_says_so(saxpy):
    x = CudaArray((512,), "<f4")
    with pytest.raises(kdsl.GpuUnavailable, match=r"no CUDA driver found .*kernel.sim\(...\) runs on the CPU"):
        saxpy[2](2.0, x, CudaArray((512,), "<f4"), 512)
    with pytest.raises(kdsl.GpuUnavailable):
        saxpy.launch(2, 2.0, x, x, 512, device=0)


def test_dlpack_arrays_are_checked_against_the_signature():
    k = kdsl.compile(SAMPLES / "hopper_gemm.kdsl", target="sm_90a").hopper_gemm
    a = DLPackArray((200, 72), DL_BFLOAT, 16, address=0x10000)
    b = DLPackArray((300, 72), DL_BFLOAT, 16, address=0x20000)
    c = DLPackArray((200 * 300,), DL_BFLOAT, 16, address=0x30000)
    with pytest.raises(ValueError, match=r"argument `a` \(tensor \[bf16; 128, 64\]\) of kernel `hopper_gemm` is a rank-2 tensor; the array has shape \(14400,\)"):
        k[2, 2](DLPackArray((200 * 72,), DL_BFLOAT, 16, address=0x10000), b, c, 200, 300, 72)
    with pytest.raises(TypeError, match=r"argument `b` .* needs bfloat16 elements, not float32"):
        k[2, 2](a, DLPackArray((300, 72), DL_FLOAT, 32, address=0x20000), c, 200, 300, 72)
    with pytest.raises(TypeError, match=r"argument `c` \(global mut \[bf16\]\) .* needs bfloat16 elements, not float8_e4m3fn8"):
        k[2, 2](a, b, DLPackArray((60000,), DL_F8_E4M3FN, 8, address=0x30000), 200, 300, 72)
    with pytest.raises(ValueError, match=r"argument `a` .* not C-contiguous \(strides \(2, 400\) bytes for shape \(200, 72\)\)"):
        k[2, 2](DLPackArray((200, 72), DL_BFLOAT, 16, address=0x10000, strides=(1, 200)), b, c, 200, 300, 72)
    # C order spelled out is C order.
    with pytest.raises(ValueError, match=r"argument `a` .* multiple of 16 bytes .* starts at 0x10008"):
        k[2, 2](DLPackArray((200, 72), DL_BFLOAT, 16, address=0x10000, byte_offset=8, strides=(72, 1)),
                b, c, 200, 300, 72)
    with pytest.raises(TypeError, match=r"argument `a` .* is in host memory"):
        k[2, 2](DLPackArray((200, 72), DL_BFLOAT, 16, device_type=DL_CPU), b, c, 200, 300, 72)
    with pytest.raises(ValueError, match=r"the arrays are on different devices \(\[0, 1\]\)"):
        k[2, 2](a, DLPackArray((300, 72), DL_BFLOAT, 16, address=0x20000, device_id=1), c, 200, 300, 72)
    with pytest.raises(ValueError, match=r"device=1, but arrays are on device \[0\]"):
        k.launch((2, 2), a, b, c, 200, 300, 72, device=1)
    # cuTensorMapEncodeTiled's rules, checked before the driver: rows of
    # 36 bf16 are 72 bytes apart, not a multiple of 16.
    with pytest.raises(ValueError, match=r"argument `a` \(tensor \[bf16; 128, 64\]\): .*16"):
        k[2, 2](DLPackArray((200, 36), DL_BFLOAT, 16, address=0x10000), b, c, 200, 300, 36)


def test_cuda_array_interface_checks():
    k = kdsl.compile(SAMPLES / "saxpy.kdsl").saxpy
    x = CudaArray((512,), "<f4", address=0x10000)
    with pytest.raises(ValueError, match=r"argument `y` \(global mut \[f32\]\) of kernel `saxpy` is written by the kernel, and the array is read-only"):
        k[2](2.0, x, CudaArray((512,), "<f4", address=0x20000, readonly=True), 512)
    # A read-only array where the kernel only reads is fine up to the driver.
    with pytest.raises(ValueError, match=r"the arrays are on different devices"):
        k[2](2.0, CudaArray((512,), "<f4", readonly=True, device=1), CudaArray((512,), "<f4", device=0), 512)
    # Strides of a dimension of 1 say nothing: still C order.
    with pytest.raises(ValueError, match=r"device=3, but arrays are on device \[0\]"):
        k.launch(2, 2.0, CudaArray((512, 1), "<f4", strides=(4, 1024), device=0), x, 512, device=3)
    with pytest.raises(TypeError, match=r"argument `x` .* needs elements of typestr <f4, not <i4"):
        k[2](2.0, CudaArray((512,), "<i4"), x, 512)
    with pytest.raises(TypeError, match=r"argument `a` \(f32\) is a scalar, and was given CudaArray"):
        k[2](x, x, x, 512)


# ------------------------------------------- against a stand-in driver

MAGIC = struct.unpack("<Q", b"STUBTMAP")[0]


def params(lines):
    """The `param I WORD aligned64=A` lines as (word, aligned)."""
    out = []
    for line in lines:
        if line.startswith("param "):
            _, i, word, aligned = line.split(" ")
            assert int(i) == len(out)
            out.append((int(word, 16), aligned == "aligned64=1"))
    return out


def low32(word):
    return word & 0xFFFF_FFFF


def test_saxpy_launch_on_the_stub(stub):
    p, log = stub("""
        import kdsl, fakes
        m = kdsl.compile("samples/saxpy.kdsl")
        x = fakes.CudaArray((1000,), "<f4", address=0x10000, device=0)
        y = fakes.DLPackArray((1000,), fakes.DL_FLOAT, 32, address=0x20000)
        m.saxpy[4](2.5, x, y, 1000)
        print("done")
    """, KDSL_STUB_PARAMS="4")
    assert p.returncode == 0 and p.stdout == "done\n", p.stderr
    assert log[0] == "launch grid=4,1,1 block=256,1,1 shared=0 attrs=0", log
    words = params(log)
    assert len(words) == 4, log
    assert low32(words[0][0]) == struct.unpack("<I", struct.pack("<f", 2.5))[0]
    assert words[1][0] == 0x10000 and words[2][0] == 0x20000
    assert low32(words[3][0]) == 1000


# cuda.h's values of the names the manifest gives (docs/manifest.md).
CUDA_H = {
    "CU_TENSOR_MAP_DATA_TYPE_UINT8": 0, "CU_TENSOR_MAP_DATA_TYPE_UINT16": 1,
    "CU_TENSOR_MAP_DATA_TYPE_UINT32": 2, "CU_TENSOR_MAP_DATA_TYPE_INT32": 3,
    "CU_TENSOR_MAP_DATA_TYPE_UINT64": 4, "CU_TENSOR_MAP_DATA_TYPE_INT64": 5,
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT16": 6, "CU_TENSOR_MAP_DATA_TYPE_FLOAT32": 7,
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT64": 8, "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16": 9,
    "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32": 11,
    "CU_TENSOR_MAP_INTERLEAVE_NONE": 0,
    "CU_TENSOR_MAP_SWIZZLE_NONE": 0, "CU_TENSOR_MAP_SWIZZLE_32B": 1,
    "CU_TENSOR_MAP_SWIZZLE_64B": 2, "CU_TENSOR_MAP_SWIZZLE_128B": 3,
    "CU_TENSOR_MAP_L2_PROMOTION_NONE": 0, "CU_TENSOR_MAP_L2_PROMOTION_L2_64B": 1,
    "CU_TENSOR_MAP_L2_PROMOTION_L2_128B": 2, "CU_TENSOR_MAP_L2_PROMOTION_L2_256B": 3,
    "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE": 0, "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA": 1,
}


def encode_line(module, kernel, param, shape):
    """The stub's log line for the map of `param` over a dense row-major
    array of `shape`: the compile-time arguments from the module's
    manifest, dimensions and strides (bytes, leaving out the innermost)
    from the shape, both innermost first as the driver takes them."""
    k = next(k for k in module.manifest["kernels"] if k["name"] == kernel)
    t = next(p for p in k["params"] if p["name"] == param)["tensor_map"]
    size = t["element_bytes"]
    assert t["rank"] == len(shape)
    dims = ",".join(str(d) for d in reversed(shape))
    strides = ",".join(str(size * math.prod(shape[i + 1:])) for i in reversed(range(len(shape) - 1)))
    join = lambda xs: ",".join(str(x) for x in xs)  # noqa: E731
    return (f"encode type={CUDA_H[t['data_type']]} rank={t['rank']} aligned16=1 dims={dims} strides={strides} "
            f"box={join(t['box_dim'])} elementStrides={join(t['element_strides'])} "
            f"interleave={CUDA_H[t['interleave']]} swizzle={CUDA_H[t['swizzle']]} "
            f"l2={CUDA_H[t['l2_promotion']]} fill={CUDA_H[t['oob_fill']]} map_aligned64=1")


@pytest.mark.parametrize("elem", ["bf16", "e4m3"])
def test_hopper_gemm_tensor_maps_on_the_stub(stub, elem):
    m = kdsl.compile(SAMPLES / "hopper_gemm.kdsl", target="sm_90a",
                     consts={"ELEM": elem} if elem != "bf16" else None)
    k = m.hopper_gemm
    size = 2 if elem == "bf16" else 1
    code, type_ = ("DL_BFLOAT", 9) if elem == "bf16" else ("DL_F8_E4M3FN", 0)
    rows, cols, inner = 200, 300, 80
    p, log = stub(f"""
        import kdsl, fakes
        m = kdsl.compile("samples/hopper_gemm.kdsl", target="sm_90a", consts={{"ELEM": "{elem}"}})
        a = fakes.DLPackArray(({rows}, {inner}), fakes.{code}, {8 * size}, address=0x10000)
        b = fakes.DLPackArray(({cols}, {inner}), fakes.{code}, {8 * size}, address=0x40000)
        c = fakes.DLPackArray(({rows} * {cols},), fakes.DL_BFLOAT, 16, address=0x80000)
        m.hopper_gemm[2, 2](a, b, c, {rows}, {cols}, {inner})
    """, KDSL_STUB_PARAMS="6")
    assert p.returncode == 0, p.stderr
    assert log[:3] == [
        encode_line(m, k.name, "a", (rows, inner)),
        encode_line(m, k.name, "b", (cols, inner)),
        f"launch grid=2,2,1 block=384,1,1 shared={k.dynamic_shared} attrs=0",
    ], log
    words = params(log)
    # What the signature and the manifest say, independently: the element
    # type (bf16 9, fp8 as bytes 0), 16-byte rows, the box of each param.
    assert log[0].startswith(f"encode type={type_} rank=2 aligned16=1 dims={inner},{rows} strides={inner * size} "
                             f"box={k.params[0].box[1]},{k.params[0].box[0]} ")
    assert " swizzle=3 " in log[0] and " swizzle=3 " in log[1]
    # The tensor maps by value (128 bytes each, 64-byte aligned), then C's
    # address and the three sizes.
    assert words[:2] == [(MAGIC, True), (MAGIC, True)], log
    assert words[2][0] == 0x80000
    assert [low32(w) for w, _ in words[3:]] == [rows, cols, inner]


RANK3 = "kernel t3(x: tensor [f32; 2, 4, 8], o: global mut [f32]) block(32) { o[0] = 1.0; }"


def test_a_rank_3_map_from_a_cuda_array_interface_on_the_stub(stub):
    """Dimensions and byte strides innermost first, from a C-order array
    that comes through `__cuda_array_interface__` (f32: no DLPack needed),
    with strides spelled out; the element type is FLOAT32, no swizzle."""
    m = kdsl.compile(RANK3)
    p, log = stub(f"""
        import kdsl, fakes
        m = kdsl.compile({RANK3!r})
        x = fakes.CudaArray((3, 5, 12), "<f4", address=0x10000, strides=(240, 48, 4))
        m.t3[1](x, fakes.CudaArray((1,), "<f4", address=0x20000))
    """, KDSL_STUB_PARAMS="2")
    assert p.returncode == 0, p.stderr
    assert log[0] == encode_line(m, "t3", "x", (3, 5, 12)), log
    assert log[0].startswith("encode type=7 rank=3 aligned16=1 dims=12,5,3 strides=48,240 box=8,4,2 "), log
    assert " swizzle=0 " in log[0]
    assert params(log) == [(MAGIC, True), (0x20000, params(log)[1][1])], log
    # 12 f32 a row are 48 bytes apart; 6 would be 24, no multiple of 16.
    with pytest.raises(ValueError, match=r"argument `x` \(tensor \[f32; 2, 4, 8\]\): .*16"):
        m.t3[1](CudaArray((3, 5, 6), "<f4", address=0x10000), CudaArray((1,), "<f4"))


def test_persistent_cluster_launch_on_the_stub(stub):
    k = kdsl.compile(SAMPLES / "hopper_gemm_persistent.kdsl", target="sm_90a").hopper_gemm_persistent
    p, log = stub("""
        import kdsl, fakes
        m = kdsl.compile("samples/hopper_gemm_persistent.kdsl", target="sm_90a")
        a = fakes.DLPackArray((300, 136), fakes.DL_BFLOAT, 16, address=0x10000)
        b = fakes.DLPackArray((520, 136), fakes.DL_BFLOAT, 16, address=0x40000)
        c = fakes.DLPackArray((300, 520), fakes.DL_BFLOAT, 16, address=0x80000)
        m.hopper_gemm_persistent[4](a, b, c, 300, 520, 136)
    """, KDSL_STUB_PARAMS="6")
    assert p.returncode == 0, p.stderr
    # B's box is half a tile. The cluster shape is compiled into the PTX
    # (`.reqnctapercluster`), so the launch needs no cluster attribute.
    assert log[1].split(" box=")[1].startswith("64,128 "), log
    assert ".reqnctapercluster 2, 1, 1" in k._module.ptx
    assert log[2] == f"launch grid=4,1,1 block=384,1,1 shared={k.dynamic_shared} attrs=0", log
    words = params(log)
    assert words[:2] == [(MAGIC, True), (MAGIC, True)] and words[2][0] == 0x80000, log
    # A grid that is no whole number of clusters: refused before the driver.
    bf16 = DLPackArray((16, 8), DL_BFLOAT, 16, address=0x10000)
    with pytest.raises(ValueError, match=r"cluster"):
        k[3](bf16, bf16, bf16, 16, 16, 8)


def test_scalars_are_packed_as_the_kernel_takes_them(stub):
    """Each scalar's bits in its parameter: f64 and i64 whole, the low
    bytes of a u8 and a bool, an f16x2's halves low first; then the
    array's address; and a block(32, 2) kernel's launch shape."""
    p, log = stub("""
        import kdsl, fakes
        m = kdsl.compile("kernel packs(a: f64, b: i64, c: u8, h: f16x2, d: bool, x: global mut [f32]) "
                         "block(32, 2) { x[0] = 1.0; }")
        m.packs[3, 2](-2.5, -3, 200, (1.0, -2.0), True, fakes.CudaArray((4,), "<f4", address=0xabc000))
    """, KDSL_STUB_PARAMS="6")
    assert p.returncode == 0, p.stderr
    assert log[0] == "launch grid=3,2,1 block=32,2,1 shared=0 attrs=0", log
    words = [w for w, _ in params(log)]
    assert words[0] == struct.unpack("<Q", struct.pack("<d", -2.5))[0]
    assert words[1] == struct.unpack("<Q", struct.pack("<q", -3))[0]
    assert words[2] & 0xFF == 200 and words[4] & 0xFF == 1
    assert low32(words[3]) == struct.unpack("<I", struct.pack("<ee", 1.0, -2.0))[0]
    assert words[5] == 0xABC000


def test_driver_failures_on_the_stub(stub):
    launch = """
        import kdsl, fakes
        m = kdsl.compile("samples/hopper_gemm.kdsl", target="sm_90a")
        a = fakes.DLPackArray((200, 80), fakes.DL_BFLOAT, 16, address=0x10000)
        c = fakes.DLPackArray((200 * 200,), fakes.DL_BFLOAT, 16, address=0x80000)
        try:
            m.hopper_gemm[1, 2](a, a, c, 200, 200, 80)
        except kdsl.GpuError as e:
            print(type(e).__name__)
            print(e)
    """
    p, _ = stub(launch, KDSL_STUB_ENCODE="1")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("GpuError\n") and "cuTensorMapEncodeTiled" in p.stdout, p.stdout
    p, _ = stub(launch, KDSL_STUB_LOAD="218")
    assert p.stdout.startswith("GpuError\n") and "stub: the JIT refused this module" in p.stdout, p.stdout
    p, _ = stub(launch, KDSL_STUB_INIT="3")
    assert p.stdout.startswith("GpuUnavailable\n") and "kernel.sim(...) runs on the CPU" in p.stdout, p.stdout


# ------------------------------------------------------------- on a GPU


def cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch


def test_saxpy_on_torch_tensors(saxpy):
    torch = cuda_torch()
    n = 100_000
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    want = 2.5 * x + y
    saxpy[math.ceil(n / 256)](2.5, x, y, n)
    torch.testing.assert_close(y, want)
    with pytest.raises(TypeError, match=r"argument `x` .* needs elements of typestr <f4, not <f8"):
        saxpy[1](2.5, x.double(), y, n)
    with pytest.raises(ValueError, match=r"argument `x` .* not C-contiguous"):
        saxpy[1](2.5, x[::2], y, n)


def test_torch_launches_match_the_simulator():
    torch = cuda_torch()
    k = kdsl.compile(SAMPLES / "softmax_rows.kdsl").softmax_rows
    rows, cols = 7, 600
    x = np.random.default_rng(8).uniform(-1, 1, (rows, cols)).astype(np.float32)
    sim = k.sim(grid=rows, x=x, y=np.zeros_like(x), cols=cols)["y"]
    xt, yt = torch.from_numpy(x).cuda(), torch.zeros(rows, cols, device="cuda")
    k[rows](xt, yt, cols)
    np.testing.assert_allclose(yt.cpu().numpy(), sim, rtol=1e-6)
    k2 = kdsl.compile(SAMPLES / "cluster_sum.kdsl").cluster_sum
    xs = torch.rand(10_000, device="cuda")
    out = torch.zeros(1, device="cuda")
    k2[4](xs, out, 10_000)
    torch.testing.assert_close(out, xs.sum().reshape(1), rtol=1e-5, atol=1e-5)


def test_hopper_gemm_bf16_tensor_maps_on_torch():
    torch = cuda_torch()
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the sm_90a GEMM needs a Hopper GPU")
    k = kdsl.compile(SAMPLES / "hopper_gemm.kdsl", target="sm_90a").hopper_gemm
    m, n, kk = 1000, 600, 520
    a = (torch.randint(0, 256, (m, kk), device="cuda") / 256).to(torch.bfloat16)
    b = (torch.randint(0, 256, (n, kk), device="cuda") / 256).to(torch.bfloat16)
    c = torch.zeros(m * n, dtype=torch.bfloat16, device="cuda")
    k[math.ceil(n / 256), math.ceil(m / 128)](a, b, c, m, n, kk)
    want = (a.double() @ b.double().T).float().to(torch.bfloat16).reshape(-1)
    assert torch.equal(c, want)
    with pytest.raises(ValueError, match=r"argument `a` .* is a rank-2 tensor"):
        k[1, 1](a.reshape(-1), b, c, m, n, kk)
    with pytest.raises(TypeError, match=r"argument `b` .* needs bfloat16 elements, not float32"):
        k[1, 1](a, b.float(), c, m, n, kk)
    shifted = torch.zeros(m * kk + 1, dtype=torch.bfloat16, device="cuda")[1:].view(m, kk)
    with pytest.raises(ValueError, match=r"argument `a` .* multiple of 16 bytes"):
        k[1, 1](shifted, b, c, m, n, kk)
