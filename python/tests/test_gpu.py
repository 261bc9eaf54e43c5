"""`kernel[grid](*args)`: arguments are checked against the signature before
the driver is touched (tested anywhere); without a CUDA driver the launch
raises GpuUnavailable; with torch and a GPU, kernels run on torch tensors
and match the simulator (scripts/gpu-check.sh runs these when lent one)."""

from __future__ import annotations

import ctypes
import math
from pathlib import Path

import numpy as np
import pytest

import kdsl

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


class FakeDeviceArray:
    """An object that says it is a device array (nothing is read from it
    unless a driver launches the kernel, which the tests below prevent)."""

    def __init__(self, shape, typestr, strides=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "strides": strides,
            "data": (0x7000_0000_0000, False),
            "version": 3,
        }


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
    x = FakeDeviceArray((512,), "<f4")
    y = FakeDeviceArray((512,), "<f4")
    with pytest.raises(TypeError, match=r"argument `x` \(global \[f32\]\) of kernel `saxpy` is a NumPy array, in host memory"):
        saxpy[2](2.0, np.ones(512, np.float32), y, 512)
    with pytest.raises(TypeError, match=r"argument `x` .* is in host memory"):
        saxpy[2](2.0, HostDLPack(np.ones(512, np.float32)), y, 512)
    with pytest.raises(TypeError, match=r"argument `y` .* needs elements of typestr <f4, not <f8"):
        saxpy[2](2.0, x, FakeDeviceArray((512,), "<f8"), 512)
    with pytest.raises(ValueError, match=r"argument `x` .* not C-contiguous"):
        saxpy[2](2.0, FakeDeviceArray((512,), "<f4", strides=(8,)), y, 512)
    with pytest.raises(TypeError, match=r"kernel `saxpy`: missing argument `n` \(u32\)"):
        saxpy[2](2.0, x, y)
    with pytest.raises(TypeError, match=r"argument `x` .* takes a device array .* not list"):
        saxpy[2](2.0, [1.0], y, 512)
    with pytest.raises(ValueError, match=r"argument `n` \(u32\): `-5` is out of range"):
        saxpy[2](2.0, x, y, -5)


def test_bf16_tensors_need_dlpack():
    k = kdsl.compile(SAMPLES / "hopper_gemm.kdsl", target="sm_90a").hopper_gemm
    a = FakeDeviceArray((128, 64), "<u2")
    with pytest.raises(TypeError, match=r"argument `a` \(tensor \[bf16; 128, 64\]\) .* needs bf16 elements, which `__cuda_array_interface__` cannot describe"):
        k[1, 1](a, a, a, 128, 256, 64)


@pytest.mark.skipif(has_driver(), reason="this machine has a CUDA driver")
def test_without_a_driver_the_launch_says_so(saxpy):
    x = FakeDeviceArray((512,), "<f4")
    with pytest.raises(kdsl.GpuUnavailable, match=r"no CUDA driver found .*kernel.sim\(...\) runs on the CPU"):
        saxpy[2](2.0, x, FakeDeviceArray((512,), "<f4"), 512)
    with pytest.raises(kdsl.GpuUnavailable):
        saxpy.launch(2, 2.0, x, x, 512, device=0)


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
