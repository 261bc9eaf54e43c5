"""Bad input gives a clear exception that names what is wrong: compile
errors with their codes and spans, and launch arguments by parameter."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import kdsl

ROOT = Path(__file__).resolve().parents[2]
SAXPY = ROOT / "samples" / "saxpy.kdsl"


@pytest.fixture(scope="module")
def saxpy():
    return kdsl.compile(SAXPY).saxpy


def args(**over):
    a = dict(a=2.0, x=np.ones(512, np.float32), y=np.zeros(512, np.float32), n=512)
    a.update(over)
    return a


def test_compile_error_carries_codes_spans_and_rendering():
    src = "kernel k(out: global mut [u32]) block(32) {\n    out[0] = 1.5;\n}\n"
    with pytest.raises(kdsl.CompileError) as e:
        kdsl.compile(src, name="bad.kdsl")
    err = e.value
    assert err.codes == ["E0110"]
    d = err.diagnostics[0]
    assert (d.code, d.severity, d.file, d.line, d.column) == ("E0110", "error", "bad.kdsl", 2, 14)
    assert src[d.span[0]:d.span[1]] == "1.5"
    assert "error[E0110]" in str(err) and "bad.kdsl:2:14" in str(err)
    assert "error[E0110]" in d.rendered


def test_the_flagship_barrier_error():
    src = """
kernel k(out: global mut [u32]) block(64) cluster(2) {
    barrier ready: cluster(arrivals = 1);
    if thread_idx.x == 0 {
        ready.arrive(0);
    }
    ready.wait(0);
}
"""
    with pytest.raises(kdsl.CompileError) as e:
        kdsl.compile(src)
    assert "E0301" in e.value.codes
    assert "Can only await on CTA-local barriers" in str(e.value)


def test_compile_from_a_missing_file_and_bad_options():
    with pytest.raises(OSError, match="cannot read `nowhere.kdsl`"):
        kdsl.compile("nowhere.kdsl")
    with pytest.raises(ValueError, match="unknown target `sm_42`: the targets are sm_80"):
        kdsl.compile(SAXPY, target="sm_42")
    with pytest.raises(ValueError, match="BM"):
        kdsl.compile(SAXPY, consts={"BM": 64})
    with pytest.raises(TypeError, match="consts= takes a dict"):
        kdsl.compile(SAXPY, consts=[64])


def test_warnings_are_kept_and_can_be_denied():
    src = "kernel k(out: global mut [u32]) block(32) {\n    let unused = 1u32;\n    out[0] = 1u32;\n}\n"
    m = kdsl.compile(src)
    assert m.diagnostics and all(d.severity == "warning" for d in m.diagnostics)
    code = m.diagnostics[0].code
    assert re.fullmatch(r"W\d{4}", code)
    with pytest.raises(kdsl.CompileError) as e:
        kdsl.compile(src, deny_warnings=True)
    assert [d.code for d in e.value.diagnostics] == [code]


def test_wrong_dtype_names_the_parameter(saxpy):
    with pytest.raises(TypeError, match=r"argument `x` \(global \[f32\]\) of kernel `saxpy` needs dtype float32, not float64"):
        saxpy.sim(grid=2, **args(x=np.ones(512)))


def test_too_short_array_is_a_sim_error_naming_the_array(saxpy):
    with pytest.raises(kdsl.SimError) as e:
        saxpy.sim(grid=2, **args(y=np.zeros(100, np.float32)))
    assert set(e.value.codes) == {"S0002"}
    assert "of the array argument `y`, which has 100 elements" in str(e.value)
    assert e.value.reports[0].line == 5


def test_missing_unknown_and_repeated_arguments(saxpy):
    a = args()
    del a["y"]
    with pytest.raises(TypeError, match=r"kernel `saxpy`: missing argument `y` \(global mut \[f32\]\)"):
        saxpy.sim(grid=2, **a)
    with pytest.raises(TypeError, match="kernel `saxpy` has no parameter `z` .its parameters are a, x, y, n."):
        saxpy.sim(grid=2, z=1, **args())
    with pytest.raises(TypeError, match="grid= is required"):
        saxpy.sim(**args())


def test_non_contiguous_array(saxpy):
    x = np.ones(1024, np.float32)[::2]
    with pytest.raises(ValueError, match=r"argument `x` .* not C-contiguous .*np.ascontiguousarray"):
        saxpy.sim(grid=2, **args(x=x))


def test_scalars_are_range_and_type_checked(saxpy):
    with pytest.raises(ValueError, match=r"argument `n` \(u32\): `-1` is out of range for u32"):
        saxpy.sim(grid=2, **args(n=-1))
    with pytest.raises(ValueError, match=r"argument `n` \(u32\): `2.5` is not a u32 literal"):
        saxpy.sim(grid=2, **args(n=2.5))
    with pytest.raises(TypeError, match=r"argument `a` \(f32\) is a scalar, and was given an array"):
        saxpy.sim(grid=2, **args(a=np.ones(3, np.float32)))
    with pytest.raises(TypeError, match=r"argument `x` \(global \[f32\]\) of kernel `saxpy` takes a NumPy array, not list"):
        saxpy.sim(grid=2, **args(x=[1.0, 2.0]))
    # NumPy scalars and 0-d arrays are scalars.
    out = saxpy.sim(grid=2, **args(a=np.float32(3), n=np.uint32(512)))
    assert np.all(out["y"] == 3)


def test_grid_and_block(saxpy):
    with pytest.raises(ValueError, match="each dimension is at least 1"):
        saxpy.sim(grid=0, **args())
    with pytest.raises(TypeError, match="grid= takes ints"):
        saxpy.sim(grid=1.5, **args())
    with pytest.raises(ValueError, match=r"declares block\(256, 1, 1\)"):
        saxpy.sim(grid=2, block=128, **args())


def test_tensor_rank_and_dtype():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    k = kdsl.compile(ROOT / "samples" / "hopper_gemm.kdsl", target="sm_90a").hopper_gemm
    a = np.zeros((128, 64), ml_dtypes.bfloat16)
    b = np.zeros((256, 64), ml_dtypes.bfloat16)
    c = np.zeros(128 * 256, ml_dtypes.bfloat16)
    good = dict(a=a, b=b, c=c, m=128, n=256, k=64)
    with pytest.raises(ValueError, match=r"argument `a` .* is a rank-2 tensor; the array has shape \(8192,\)"):
        k.sim(grid=1, **{**good, "a": a.reshape(-1)})
    with pytest.raises(TypeError, match=r"argument `b` .* needs dtype ml_dtypes.bfloat16, not float32"):
        k.sim(grid=1, **{**good, "b": b.astype(np.float32)})
    # A row of 4 bf16 is 8 bytes: the map's strides must be multiples of 16.
    with pytest.raises(ValueError, match=r"argument `a` \(tensor \[bf16; 128, 64\]\): .*16"):
        k.sim(grid=1, **{**good, "a": np.zeros((128, 4), ml_dtypes.bfloat16)})


def test_a_tensor_is_as_long_as_its_shape_says():
    """A too-short array is found before anything runs where the signature
    knows the length: a tensor's dimensions are its array's shape, so it is
    never shorter than its map, and a shape the map cannot describe (an
    empty dimension) is an error naming it, in the simulator and before a
    GPU launch alike. A `global` array's length is the kernel's business:
    a read past its end is the simulator's S0002 (above)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import fakes

    k = kdsl.compile(ROOT / "samples" / "hopper_gemm.kdsl", target="sm_90a").hopper_gemm
    b = np.zeros((256, 64), ml_dtypes.bfloat16)
    c = np.zeros(256, ml_dtypes.bfloat16)
    empty = r"argument `a` \(tensor \[bf16; 128, 64\]\): globalDim: dimension 0 of the tensor is 0; each must be 1 to 2\^31"
    with pytest.raises(ValueError, match=empty):
        k.sim(grid=1, a=np.zeros((0, 64), ml_dtypes.bfloat16), b=b, c=c, m=0, n=256, k=64)
    dev = [fakes.DLPackArray(s, fakes.DL_BFLOAT, 16, address=0x10000) for s in [(0, 64), (256, 64), (256,)]]
    with pytest.raises(ValueError, match=empty):
        k[1](*dev, 0, 256, 64)
    # One row of A and of B, and a C of one element: every byte the maps
    # reach is the arrays' (the boxes past their ends are zero-filled).
    out = k.sim(grid=1, a=np.ones((1, 64), ml_dtypes.bfloat16), b=np.ones((1, 64), ml_dtypes.bfloat16),
                c=np.zeros(1, ml_dtypes.bfloat16), m=1, n=1, k=64)
    assert out["c"].astype(np.float32).tolist() == [64.0]


def test_a_deadlock_is_a_sim_error():
    k = kdsl.compile(ROOT / "tests" / "sim" / "broken" / "missing_arrival.kdsl").missing_arrival
    with pytest.raises(kdsl.SimError) as e:
        k.sim(grid=1, out=np.zeros(128, np.float32))
    assert e.value.codes == ["S0001"]
    assert "deadlock: no thread can make progress" in str(e.value)
    assert "128 threads wait here on `done`" in str(e.value)
    assert e.value.reports[0].line == 8


def test_module_lookup():
    m = kdsl.compile(SAXPY)
    assert m["saxpy"] is m.saxpy
    with pytest.raises(AttributeError, match="no kernel `nope` .it has saxpy."):
        m.nope
    assert "saxpy" in dir(m)
    assert m.saxpy.params[1].dtype == np.float32


def test_instances_by_kernel_name():
    path = ROOT / "samples" / "sgemm_tiled.kdsl"
    m = kdsl.compile(path, consts={"TILE": [8, 16]})
    # The instantiation with the default values keeps the kernel's name.
    assert list(m.kernels) == ["sgemm_tiled__TILE_8", "sgemm_tiled"]
    assert m.sgemm_tiled__TILE_8.block == (8, 8, 1)
    assert m.sgemm_tiled__TILE_8.kernel == "sgemm_tiled"
    m = kdsl.compile(path, consts={"TILE": [8, 32]})
    with pytest.raises(KeyError, match="has 2 instantiations here"):
        m["sgemm_tiled"]
    assert kdsl.compile(path, consts={"sgemm_tiled.TILE": 8}).sgemm_tiled.block == (8, 8, 1)
