"""The NumPy dtype of each kdsl element type (docs/python.md has the table).

bf16 and the 8-bit floats are ml_dtypes' types (`pip install ml_dtypes`),
imported only when a kernel uses them. The packed pairs `f16x2`/`bf16x2`
are arrays of their halves, two per element, low first.
"""

from __future__ import annotations

import numpy as np

# kdsl element type -> NumPy dtype name (a NumPy dtype, or ml_dtypes').
DTYPES = {
    "bool": "bool",
    "i8": "int8",
    "u8": "uint8",
    "i16": "int16",
    "u16": "uint16",
    "i32": "int32",
    "u32": "uint32",
    "i64": "int64",
    "u64": "uint64",
    "f16": "float16",
    "bf16": "ml_dtypes.bfloat16",
    "f32": "float32",
    "f64": "float64",
    "tf32": "float32",
    "e4m3": "ml_dtypes.float8_e4m3fn",
    "e5m2": "ml_dtypes.float8_e5m2",
    "f16x2": "float16",
    "bf16x2": "ml_dtypes.bfloat16",
}


def dtype_name(elem: str) -> str:
    """The dtype as messages name it (`float32`, `ml_dtypes.bfloat16`)."""
    name = DTYPES.get(elem, "?")
    if elem in ("f16x2", "bf16x2"):
        return f"{name} (two per {elem})"
    return name


def numpy_dtype(elem: str) -> np.dtype:
    """The NumPy dtype of kdsl element type `elem` (little-endian)."""
    name = DTYPES.get(elem)
    if name is None:
        raise ValueError(f"no NumPy dtype for the kdsl type `{elem}`")
    if name.startswith("ml_dtypes."):
        try:
            import ml_dtypes
        except ImportError:
            raise ImportError(
                f"kdsl's {elem} arrays are ml_dtypes' {name[10:]}: pip install ml_dtypes"
            ) from None
        return np.dtype(getattr(ml_dtypes, name[10:]))
    return np.dtype(name).newbyteorder("<")
