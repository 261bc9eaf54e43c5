"""Stand-ins for device arrays, for the GPU path's tests on machines without
a GPU: they describe memory (an address, a shape, a dtype) through
`__cuda_array_interface__` or DLPack as torch, CuPy and JAX do, and own
none. Nothing reads the memory unless a real driver runs the kernel: the
tests launch them only against tests/driver/libcuda_stub.c.

Imported by test_gpu.py, and by the Python processes it starts with the
stub driver (PYTHONPATH: this directory)."""

from __future__ import annotations

import ctypes
from typing import Optional, Sequence

# DLPack (dlpack.h): device types and data type codes.
DL_CPU, DL_CUDA = 1, 2
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_BOOL = 0, 1, 2, 4, 6
DL_F8_E4M3FN, DL_F8_E5M2 = 10, 12


class CudaArray:
    """An object with `__cuda_array_interface__` (version 3): `strides` in
    bytes, None for C order."""

    def __init__(self, shape: Sequence[int], typestr: str, address: int = 0x7000_0000_0000,
                 strides: Optional[Sequence[int]] = None, readonly: bool = False,
                 device: Optional[int] = None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "strides": tuple(strides) if strides is not None else None,
            "data": (address, readonly),
            "version": 3,
        }
        self._device = device

    def __dlpack_device__(self):
        if self._device is None:
            raise AttributeError("__dlpack_device__")
        return (DL_CUDA, self._device)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_DLTENSOR = b"dltensor"  # the capsule keeps a pointer to its name: alive here


class DLPackArray:
    """An object with `__dlpack__`: a DLManagedTensor (no deleter) in a
    capsule named "dltensor", as a producer hands it out. `strides` in
    elements (DLPack's), None for C order."""

    def __init__(self, shape: Sequence[int], code: int, bits: int, address: int = 0x7100_0000_0000,
                 strides: Optional[Sequence[int]] = None, byte_offset: int = 0,
                 device_type: int = DL_CUDA, device_id: int = 0, lanes: int = 1):
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = (ctypes.c_int64 * max(len(shape), 1))(*strides) if strides is not None else None
        self.tensor = _DLManagedTensor(
            data=address,
            device=_DLDevice(device_type, device_id),
            ndim=len(shape),
            dtype=_DLDataType(code, bits, lanes),
            shape=ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)),
            strides=(ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
                     if self.strides is not None else None),
            byte_offset=byte_offset,
        )

    def __dlpack__(self, stream=None, **kw):
        return _capsule_new(ctypes.addressof(self.tensor), _DLTENSOR, None)

    def __dlpack_device__(self):
        return (self.tensor.device.device_type, self.tensor.device.device_id)
