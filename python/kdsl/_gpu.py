"""`kernel[grid](*args)`: launches on device arrays.

An array argument is any object that offers `__cuda_array_interface__`
(PyTorch, CuPy, Numba) or DLPack (`__dlpack__`: PyTorch, CuPy, JAX); its
dtype, contiguity and (for a tensor) rank are checked against the kernel's
signature before anything runs, and the kernel gets its device address. The
launch goes through the CUDA driver (the Rust runner of `kdslc run`,
`kdsl::driver::device`) on the legacy default stream, and is waited for.
"""

from __future__ import annotations

import ctypes
from typing import Any, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import _kdsl

# DLPack (dlpack.h): device types and data type codes.
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_BOOL = 0, 1, 2, 4, 6
_DL_F8_E4M3FN, _DL_F8_E5M2 = 10, 12

# kdsl element type -> (DLPack code, bits) of the elements it takes.
_DLPACK = {
    "bool": [(_DL_BOOL, 8)],
    "i8": [(_DL_INT, 8)],
    "u8": [(_DL_UINT, 8)],
    "i16": [(_DL_INT, 16)],
    "u16": [(_DL_UINT, 16)],
    "i32": [(_DL_INT, 32)],
    "u32": [(_DL_UINT, 32)],
    "i64": [(_DL_INT, 64)],
    "u64": [(_DL_UINT, 64)],
    "f16": [(_DL_FLOAT, 16)],
    "bf16": [(_DL_BFLOAT, 16)],
    "f32": [(_DL_FLOAT, 32)],
    "f64": [(_DL_FLOAT, 64)],
    "tf32": [(_DL_FLOAT, 32)],
    "e4m3": [(_DL_F8_E4M3FN, 8)],
    "e5m2": [(_DL_F8_E5M2, 8)],
    "f16x2": [(_DL_FLOAT, 16)],
    "bf16x2": [(_DL_BFLOAT, 16)],
}

# kdsl element type -> the `__cuda_array_interface__` typestr it takes
# (bf16 and fp8 have none: those arrays come through DLPack).
_TYPESTR = {
    "bool": "|b1",
    "i8": "|i1",
    "u8": "|u1",
    "i16": "<i2",
    "u16": "<u2",
    "i32": "<i4",
    "u32": "<u4",
    "i64": "<i8",
    "u64": "<u8",
    "f16": "<f2",
    "f32": "<f4",
    "f64": "<f8",
    "tf32": "<f4",
    "f16x2": "<f2",
}

_DL_NAMES = {
    _DL_INT: "int",
    _DL_UINT: "uint",
    _DL_FLOAT: "float",
    _DL_BFLOAT: "bfloat",
    _DL_BOOL: "bool",
    _DL_F8_E4M3FN: "float8_e4m3fn",
    _DL_F8_E5M2: "float8_e5m2",
}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class DeviceArray:
    """What a launch needs of one argument: its device address and size,
    shape, and the device it lives on (None when it does not say)."""

    def __init__(self, address: int, nbytes: int, shape: Tuple[int, ...], device: Optional[int], keep: Any):
        self.address = address
        self.nbytes = nbytes
        self.shape = shape
        self.device = device
        self._keep = keep  # the DLPack capsule, alive until the launch ends


def _contiguous(shape: Sequence[int], strides: Optional[Sequence[int]], itemsize: int) -> bool:
    """C order; `strides` in bytes (None: C order by definition)."""
    if strides is None:
        return True
    expected = itemsize
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != expected:
            return False
        expected *= d
    return True


def _describe(p, kernel: str) -> str:
    return f"argument `{p.name}` ({p.type}) of kernel `{kernel}`"


def _device_array(p, v: Any, kernel: str) -> DeviceArray:
    what = _describe(p, kernel)
    if isinstance(v, np.ndarray):
        raise TypeError(
            f"{what} is a NumPy array, in host memory: kernel[grid](...) launches on the GPU and "
            "takes device arrays (torch on cuda, CuPy, JAX); kernel.sim(...) runs NumPy arrays on the CPU"
        )
    cai = None
    if hasattr(v, "__cuda_array_interface__"):
        try:
            cai = v.__cuda_array_interface__
        except Exception:  # torch: no interface for bf16 and fp8; DLPack has them
            cai = None
    if cai is not None and p.elem in _TYPESTR:
        return _from_cai(p, v, cai, what)
    if hasattr(v, "__dlpack__"):
        return _from_dlpack(p, v, what)
    if cai is not None:
        raise TypeError(
            f"{what} needs {p.elem} elements, which `__cuda_array_interface__` cannot describe; "
            f"pass an object with DLPack (`__dlpack__`)"
        )
    raise TypeError(
        f"{what} takes a device array (an object with `__cuda_array_interface__` or `__dlpack__`: "
        f"torch, CuPy, JAX), not {type(v).__name__}"
    )


def _device_of(v: Any) -> Optional[int]:
    try:
        kind, ordinal = v.__dlpack_device__()
    except Exception:
        return None
    return int(ordinal) if int(kind) in (_DL_CUDA, _DL_CUDA_MANAGED) else None


def _from_cai(p, v: Any, cai: Mapping[str, Any], what: str) -> DeviceArray:
    typestr = cai.get("typestr", "?")
    want = _TYPESTR[p.elem]
    if typestr != want:
        raise TypeError(f"{what} needs elements of typestr {want}, not {typestr}")
    shape = tuple(int(d) for d in cai.get("shape", ()))
    itemsize = np.dtype(want).itemsize
    strides = cai.get("strides")
    if not _contiguous(shape, strides, itemsize):
        raise ValueError(
            f"{what}: the array is not C-contiguous (strides {tuple(strides)} bytes for shape {shape}); "
            "pass a contiguous copy (.contiguous() in torch)"
        )
    address = int(cai["data"][0])
    if cai["data"][1] and p.writable:
        raise ValueError(f"{what} is written by the kernel, and the array is read-only")
    nbytes = itemsize * int(np.prod(shape, dtype=np.int64))
    return DeviceArray(address, nbytes, shape, _device_of(v), None)


def _from_dlpack(p, v: Any, what: str) -> DeviceArray:
    try:
        capsule = v.__dlpack__()
    except Exception as e:
        raise TypeError(f"{what}: the array cannot be exported through DLPack ({e})") from None
    ptr = _capsule_pointer(capsule, b"dltensor")
    t = _DLTensor.from_address(ptr)  # DLManagedTensor starts with its DLTensor
    kind = t.device.device_type
    if kind not in (_DL_CUDA, _DL_CUDA_MANAGED):
        where = "host memory" if kind in (_DL_CPU, _DL_CUDA_HOST) else f"DLPack device type {kind}"
        raise TypeError(
            f"{what} is in {where}: kernel[grid](...) launches on the GPU and takes device arrays; "
            "kernel.sim(...) runs NumPy arrays on the CPU"
        )
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    if lanes != 1 or (code, bits) not in _DLPACK[p.elem]:
        got = f"{_DL_NAMES.get(code, f'code {code}')}{bits}" + (f"x{lanes}" if lanes != 1 else "")
        want = " or ".join(f"{_DL_NAMES[c]}{b}" for c, b in _DLPACK[p.elem])
        raise TypeError(f"{what} needs {want} elements, not {got}")
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    itemsize = bits // 8
    strides = (
        None if not t.strides else tuple(int(t.strides[i]) * itemsize for i in range(t.ndim))
    )
    if not _contiguous(shape, strides, itemsize):
        raise ValueError(
            f"{what}: the array is not C-contiguous (strides {strides} bytes for shape {shape}); "
            "pass a contiguous copy (.contiguous() in torch)"
        )
    nbytes = itemsize * int(np.prod(shape, dtype=np.int64))
    return DeviceArray(int(t.data or 0) + int(t.byte_offset), nbytes, shape, int(t.device.device_id), capsule)


def launch(kernel, grid, block, device, timeout, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    from . import GpuError, GpuUnavailable, _for_python, _scalar_text

    values = kernel._bind(args, kwargs)
    if block is not None and kernel.block is not None and block != kernel.block:
        raise ValueError(
            f"kernel `{kernel.name}` declares block{kernel.block}; block={block!r} contradicts it (leave it out)"
        )
    wire: List[Tuple[str, Any, List[int]]] = []
    devices = set()
    keep = []
    for p, v in zip(kernel.params, values):
        if p.kind == "scalar":
            wire.append(("scalar", _scalar_text(p, v), []))
            continue
        if p.kind not in ("array", "tensor"):
            raise TypeError(f"parameter `{p.name}` ({p.type}) cannot be given from Python")
        a = _device_array(p, v, kernel.name)
        if p.kind == "tensor" and len(a.shape) != p.rank:
            raise ValueError(
                f"{_describe(p, kernel.name)} is a rank-{p.rank} tensor; the array has shape {a.shape}"
            )
        if p.kind == "tensor" and a.address % 16:
            raise ValueError(
                f"{_describe(p, kernel.name)}: a tensor map's base address must be a multiple of 16 bytes "
                f"(cuTensorMapEncodeTiled), and the array starts at {a.address:#x}"
            )
        if p.elem in ("f16x2", "bf16x2") and (a.nbytes // 2) % 2:
            raise ValueError(f"{_describe(p, kernel.name)} holds two halves per element; the array has an odd number")
        if a.device is not None:
            devices.add(a.device)
        keep.append(a)
        dims = list(a.shape) if p.kind == "tensor" else []
        wire.append((p.kind, (a.address, a.nbytes), dims))
    if device is None:
        if len(devices) > 1:
            raise ValueError(
                f"kernel `{kernel.name}`: the arrays are on different devices ({sorted(devices)})"
            )
        device = devices.pop() if devices else 0
    elif devices - {device}:
        raise ValueError(
            f"kernel `{kernel.name}`: device={device}, but arrays are on device {sorted(devices - {device})}"
        )
    session = kernel._module._gpu_session(int(device))
    try:
        session.launch(kernel._module._native, kernel.name, grid, block, wire, timeout)
    except _kdsl.GpuUnavailableError as e:
        raise GpuUnavailable(_for_python(str(e))) from None
    except _kdsl.GpuFailure as e:
        raise GpuError(str(e)) from None
    finally:
        del keep
