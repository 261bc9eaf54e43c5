"""kdsl from Python: compile kernels, run them on the CPU simulator with
NumPy arrays, launch them on a GPU with torch / CuPy / JAX arrays.

    import numpy as np, kdsl

    m = kdsl.compile("samples/saxpy.kdsl")
    x = np.arange(1024, dtype=np.float32)
    y = np.ones(1024, dtype=np.float32)
    out = m.saxpy.sim(grid=4, a=2.0, x=x, y=y, n=1024)
    assert np.array_equal(out["y"], 2 * x + 1)          # y itself is untouched

    m.saxpy[4](2.0, x_gpu, y_gpu, 1024)                  # on a GPU, in place

The documentation is docs/python.md in the kdsl repository.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _kdsl
from ._dtypes import DTYPES, numpy_dtype, dtype_name

__all__ = [
    "compile",
    "Module",
    "Kernel",
    "Param",
    "Diagnostic",
    "KdslError",
    "CompileError",
    "SimError",
    "SimWarning",
    "GpuError",
    "GpuUnavailable",
    "DTYPES",
    "numpy_dtype",
]

__version__ = _kdsl.version()


class KdslError(Exception):
    """The base of kdsl's own exceptions."""


class CompileError(KdslError):
    """The source has errors. `diagnostics` lists them (each with its code,
    message and span); `str(e)` is their rendering, as kdslc prints it."""

    def __init__(self, rendered: str, diagnostics: List["Diagnostic"]):
        super().__init__(rendered)
        self.rendered = rendered
        self.diagnostics = diagnostics

    @property
    def codes(self) -> List[str]:
        """The codes of the errors, in order (`["E0301"]`)."""
        return [d.code for d in self.diagnostics if d.severity == "error"]


class SimError(KdslError):
    """A simulated launch faulted: a deadlock, an out-of-bounds access, a
    barrier protocol violation. `reports` are the simulator's diagnostics
    (codes `S0001`...), `str(e)` their rendering against the source."""

    def __init__(self, kernel: str, rendered: str, reports: List["Diagnostic"]):
        super().__init__(f"kernel `{kernel}` faulted in the simulator:\n{rendered}")
        self.kernel = kernel
        self.rendered = rendered
        self.reports = reports

    @property
    def codes(self) -> List[str]:
        return [d.code for d in self.reports]


class SimWarning(UserWarning):
    """The simulator reported something that did not stop the run."""


class GpuError(KdslError):
    """A GPU launch failed (a CUDA error, a fault, a timeout)."""


class GpuUnavailable(GpuError):
    """No CUDA driver or no such device: the launch could not start."""


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of the compiler or report of the simulator: the fields
    of kdslc's JSON diagnostics (docs/json-diagnostics.md)."""

    code: str
    severity: str
    message: str
    file: Optional[str]
    span: Optional[Tuple[int, int]]
    """Byte offsets of the primary label in `file`."""
    line: Optional[int]
    """1-based line of the span's start."""
    column: Optional[int]
    """1-based column (Unicode characters) of the span's start."""
    labels: List[dict] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    help: List[str] = field(default_factory=list)
    rendered: str = ""

    @staticmethod
    def _from_json(d: dict) -> "Diagnostic":
        span = d.get("span")
        start = (d.get("range") or {}).get("start") or {}
        return Diagnostic(
            code=d.get("code", ""),
            severity=d.get("severity", "error"),
            message=d.get("message", ""),
            file=d.get("file"),
            span=(span["start"], span["end"]) if span else None,
            line=start.get("line"),
            column=start.get("column"),
            labels=list(d.get("labels") or []),
            notes=list(d.get("notes") or []),
            help=list(d.get("help") or []),
            rendered=d.get("rendered", ""),
        )

    def __str__(self) -> str:
        return self.rendered or f"{self.severity}[{self.code}]: {self.message}"


def _diagnostics(text: str) -> List[Diagnostic]:
    return [Diagnostic._from_json(d) for d in json.loads(text)]


# --------------------------------------------------------------- compiling


def _const_args(consts: Optional[Mapping[str, Any]]) -> List[str]:
    """`{"BM": 64, "gemm.BN": [64, 128], "T": "f32"}` as kdslc's
    `--const` arguments (a list of values: one instantiation each)."""
    out: List[str] = []
    if not consts:
        return out
    if not isinstance(consts, Mapping):
        raise TypeError(
            "consts= takes a dict of constant values, such as {'BM': 64} or {'gemm.BN': [64, 128]}"
        )
    for key, value in consts.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if isinstance(v, bool):
                text = "true" if v else "false"
            elif isinstance(v, (int, np.integer)):
                text = str(int(v))
            elif isinstance(v, str):
                text = v
            else:
                raise TypeError(
                    f"the constant `{key}`: {v!r} is no constant value (an int, a bool or a type name such as 'f32')"
                )
            out.append(f"{key}={text}")
    return out


def compile(
    path_or_source: Union[str, "os.PathLike[str]"],
    target: str = "sm_90",
    consts: Optional[Mapping[str, Any]] = None,
    *,
    name: Optional[str] = None,
    deny_warnings: bool = False,
) -> "Module":
    """Compiles a kdsl program.

    `path_or_source` is a path (a `pathlib.Path`, or a one-line string that
    ends in `.kdsl`) or the source text itself (imports are then resolved
    from the current directory; `name` is what diagnostics call it,
    `<source>` by default). `target` is a PTX target such as `"sm_90a"`;
    `consts` gives kernel constants (`{"BM": 64}`, `{"gemm.BN": [64, 128]}`
    for two instantiations). Errors raise `CompileError`; warnings are in
    `Module.diagnostics`.
    """
    if isinstance(path_or_source, os.PathLike):
        path, source = os.fspath(path_or_source), None
    elif isinstance(path_or_source, str):
        is_path = "\n" not in path_or_source and path_or_source.strip().endswith(".kdsl")
        path, source = (path_or_source, None) if is_path else (None, path_or_source)
    else:
        raise TypeError(
            f"compile() takes a path or the source text, not {type(path_or_source).__name__}"
        )
    if not isinstance(target, str):
        raise TypeError(f"target= is a name such as 'sm_90a', not {target!r}")
    if path is not None:
        native = _kdsl.compile(path, None, target, _const_args(consts), deny_warnings)
    else:
        native = _kdsl.compile(name or "<source>", source, target, _const_args(consts), deny_warnings)
    diagnostics = _diagnostics(native.diagnostics)
    if not native.ok:
        raise CompileError(native.rendered, diagnostics)
    return Module(native, diagnostics, target)


# ---------------------------------------------------------------- modules


@dataclass(frozen=True)
class Param:
    """One kernel parameter: `kind` is "scalar", "array" or "tensor";
    `elem` the kdsl element type ("f32", "bf16", ...); `type` as kdsl
    writes it ("global mut [f32]")."""

    name: str
    kind: str
    elem: str
    writable: bool
    type: str
    rank: int = 0
    box: Tuple[int, ...] = ()

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype its arrays (or scalar) take."""
        return numpy_dtype(self.elem)


class Module:
    """A compiled module: `ptx`, `manifest` (the launch manifest as a dict,
    docs/manifest.md), `diagnostics` (warnings), and one `Kernel` per
    kernel as an attribute (`module.saxpy`) or item (`module["saxpy"]`)."""

    def __init__(self, native: Any, diagnostics: List[Diagnostic], target: str):
        self._native = native
        self.target = target
        self.ptx: str = native.ptx
        self.manifest: dict = json.loads(native.manifest)
        self.diagnostics: List[Diagnostic] = diagnostics
        self.kernels: Dict[str, Kernel] = {}
        for k in json.loads(native.kernels):
            self.kernels[k["name"]] = Kernel(self, k)
        self._gpu: Dict[Tuple[int, int], Any] = {}
        self._gpu_lock = threading.Lock()

    def __getitem__(self, name: str) -> "Kernel":
        k = self.kernels.get(name)
        if k is not None:
            return k
        # A kernel with constants, compiled once: its kdsl name.
        instances = [k for k in self.kernels.values() if k.kernel == name]
        if len(instances) == 1:
            return instances[0]
        if instances:
            names = ", ".join(k.name for k in instances)
            raise KeyError(
                f"kernel `{name}` has {len(instances)} instantiations here ({names}): name one"
            )
        raise KeyError(
            f"the module has no kernel `{name}` (it has {', '.join(self.kernels) or 'none'})"
        )

    def __getattr__(self, name: str) -> "Kernel":
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(e.args[0]) from None

    def __dir__(self):
        return list(super().__dir__()) + list(self.kernels)

    def __repr__(self) -> str:
        return f"<kdsl.Module for {self.target}: {', '.join(self.kernels)}>"

    def _gpu_session(self, device: int):
        """The module loaded on `device` for the calling thread (a CUDA
        context is current per thread)."""
        key = (threading.get_ident(), device)
        with self._gpu_lock:
            s = self._gpu.get(key)
            if s is None:
                s = _kdsl.Gpu(device, self.ptx)  # loaded by its first launch
                self._gpu[key] = s
            return s


def _for_python(message: str) -> str:
    """The runner's advice, as a Python user follows it."""
    return message.replace("use `kdslc sim` to run on the CPU", "kernel.sim(...) runs on the CPU")


def _dims(value: Any, what: str) -> Tuple[int, int, int]:
    """A grid or block: an int or a tuple of one to three ints."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(items) <= 3:
        raise ValueError(f"{what}= takes one to three dimensions, not {len(items)}")
    out = []
    for d in items:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{what}= takes ints, such as {what}=(4, 2), not {value!r}")
        if not 1 <= int(d) < 2**32:
            raise ValueError(f"{what}={value!r}: each dimension is at least 1 (and below 2^32)")
        out.append(int(d))
    while len(out) < 3:
        out.append(1)
    return (out[0], out[1], out[2])


def _scalar_text(p: Param, v: Any) -> str:
    """A Python or NumPy scalar as the literal kdslc parses for `p`."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if p.elem in ("f16x2", "bf16x2"):
        if isinstance(v, (tuple, list)) and len(v) == 2:
            return f"{_scalar_text(Param(p.name, 'scalar', 'f32', False, 'f32'), v[0])}/" + _scalar_text(
                Param(p.name, "scalar", "f32", False, "f32"), v[1]
            )
        raise TypeError(
            f"argument `{p.name}` ({p.type}) takes its two halves as a pair, (low, high), not {v!r}"
        )
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, np.ndarray):
        raise TypeError(
            f"argument `{p.name}` ({p.type}) is a scalar, and was given an array of shape {v.shape}"
        )
    raise TypeError(f"argument `{p.name}` ({p.type}) is a scalar, and was given {type(v).__name__}")


def _host_array(p: Param, v: Any, kernel: str) -> np.ndarray:
    """Checks a NumPy array for parameter `p`: its dtype, layout, rank."""
    if not isinstance(v, np.ndarray):
        hint = ""
        if hasattr(v, "__dlpack__") or hasattr(v, "__cuda_array_interface__"):
            hint = " (a device array: .sim() runs on the CPU and takes NumPy arrays; launch with kernel[grid](...) for the GPU)"
        raise TypeError(
            f"argument `{p.name}` ({p.type}) of kernel `{kernel}` takes a NumPy array, not {type(v).__name__}{hint}"
        )
    want = p.dtype
    if v.dtype != want:
        raise TypeError(
            f"argument `{p.name}` ({p.type}) of kernel `{kernel}` needs dtype {dtype_name(p.elem)}, not {v.dtype}"
        )
    if not v.flags.c_contiguous:
        raise ValueError(
            f"argument `{p.name}` ({p.type}) of kernel `{kernel}`: the array is not C-contiguous "
            f"(strides {v.strides} for shape {v.shape}); pass np.ascontiguousarray(...)"
        )
    if p.kind == "tensor" and v.ndim != p.rank:
        raise ValueError(
            f"argument `{p.name}` ({p.type}) of kernel `{kernel}` is a rank-{p.rank} tensor; "
            f"the array has shape {v.shape}"
        )
    if p.elem in ("f16x2", "bf16x2") and v.size % 2:
        raise ValueError(
            f"argument `{p.name}` ({p.type}) of kernel `{kernel}` holds two halves per element; "
            f"the array has an odd number of them ({v.size})"
        )
    return v


class Kernel:
    """One kernel of a compiled module.

    - `kernel.sim(grid=..., **args)` runs it in the CPU simulator with NumPy
      arrays and Python scalars, and returns the writable arrays after the
      run by parameter name (the inputs are left untouched);
    - `kernel[grid](*args)` launches it on a GPU with device arrays (torch,
      CuPy, JAX: DLPack or `__cuda_array_interface__`), in place.
    """

    def __init__(self, module: Module, info: dict):
        self._module = module
        self.name: str = info["name"]
        self.kernel: str = info["kernel"]
        self.block: Optional[Tuple[int, int, int]] = tuple(info["block"]) if info["block"] else None
        self.cluster: Optional[Tuple[int, int, int]] = (
            tuple(info["cluster"]) if info["cluster"] else None
        )
        self.dynamic_shared: int = info["dynamic_shared"]
        self.params: List[Param] = [
            Param(
                name=p["name"],
                kind=p["kind"],
                elem=p.get("elem", ""),
                writable=p.get("writable", False),
                type=p["type"],
                rank=p.get("rank", 0),
                box=tuple(p.get("box", ())),
            )
            for p in info["params"]
        ]

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.type}" for p in self.params)
        return f"<kdsl.Kernel {self.name}({params})>"

    # ------------------------------------------------------------ arguments

    def _bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> List[Any]:
        """Positional and keyword arguments, one per parameter in order."""
        names = [p.name for p in self.params]
        if len(args) > len(names):
            raise TypeError(
                f"kernel `{self.name}` takes {len(names)} arguments ({', '.join(names)}), {len(args)} were given"
            )
        bound: Dict[str, Any] = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(
                    f"kernel `{self.name}` has no parameter `{k}` (its parameters are {', '.join(names) or 'none'})"
                )
            if k in bound:
                raise TypeError(f"kernel `{self.name}`: argument `{k}` given twice")
            bound[k] = v
        missing = [p for p in self.params if p.name not in bound]
        if missing:
            listed = ", ".join(f"`{p.name}` ({p.type})" for p in missing)
            raise TypeError(f"kernel `{self.name}`: missing argument{'s' if len(missing) > 1 else ''} {listed}")
        return [bound[n] for n in names]

    # ------------------------------------------------------------ simulator

    def sim(
        self,
        grid: Any = None,
        *,
        block: Any = None,
        max_steps: Optional[int] = None,
        seed: Optional[int] = None,
        **args: Any,
    ) -> Dict[str, np.ndarray]:
        """Runs the kernel in the CPU simulator; see `simulate`. Parameters
        named `grid`, `block`, `max_steps` or `seed` are given through
        `simulate(grid, args={...})`."""
        if grid is None:
            raise TypeError(f"kernel `{self.name}`.sim(): grid= is required (the number of CTAs)")
        return self.simulate(grid, args, block=block, max_steps=max_steps, seed=seed)

    def simulate(
        self,
        grid: Any,
        args: Union[Sequence[Any], Mapping[str, Any]],
        *,
        block: Any = None,
        max_steps: Optional[int] = None,
        seed: Optional[int] = None,
    ) -> Dict[str, np.ndarray]:
        """Runs the kernel on the CPU: `grid` CTAs (an int or up to three
        dimensions) of the kernel's `block(...)` threads (`block=` only for a
        kernel that declares none), in its `cluster(...)`; `args` by
        parameter name (a dict) or in order (a sequence). Arrays are NumPy
        arrays of the parameter's dtype (`kdsl.DTYPES`), C-contiguous; a
        tensor's shape gives its dimensions. Returns a new array for each
        writable parameter (`global mut`, `tensor mut`), by name, shaped like
        its input. A fault raises `SimError`; `seed` interleaves the threads
        randomly (reproducibly); `max_steps` bounds the instructions run.
        """
        values = (
            self._bind((), args) if isinstance(args, Mapping) else self._bind(list(args), {})
        )
        wire: List[Tuple[str, Any, List[int]]] = []
        shapes: Dict[str, Tuple[Tuple[int, ...], np.dtype]] = {}
        for p, v in zip(self.params, values):
            if p.kind == "scalar":
                wire.append(("scalar", _scalar_text(p, v), []))
            elif p.kind in ("array", "tensor"):
                a = _host_array(p, v, self.name)
                dims = [int(d) for d in a.shape] if p.kind == "tensor" else []
                wire.append((p.kind, a.tobytes(), dims))
                shapes[p.name] = (a.shape, a.dtype)
            else:
                raise TypeError(f"parameter `{p.name}` ({p.type}) cannot be given from Python")
        block3 = _dims(block, "block") if block is not None else None
        if block3 is not None and self.block is not None and block3 != self.block:
            raise ValueError(
                f"kernel `{self.name}` declares block{self.block}; block={block!r} contradicts it (leave it out)"
            )
        faulted, rendered, reports, arrays = self._module._native.sim(
            self.name, _dims(grid, "grid"), block3, wire, max_steps, seed
        )
        if faulted:
            raise SimError(self.name, rendered, _diagnostics(reports))
        if rendered.strip():
            warnings.warn(SimWarning(rendered), stacklevel=3)
        out: Dict[str, np.ndarray] = {}
        for name, data in arrays:
            shape, dtype = shapes[name]
            out[name] = np.frombuffer(bytearray(data), dtype=dtype).reshape(shape)
        return out

    # ------------------------------------------------------------------ GPU

    def __getitem__(self, grid: Any) -> "Launcher":
        return Launcher(self, _dims(grid, "grid"))

    def launch(
        self,
        grid: Any,
        *args: Any,
        block: Any = None,
        device: Optional[int] = None,
        timeout: float = 10.0,
        **kwargs: Any,
    ) -> None:
        """`kernel[grid](*args)` with options: `block=` for a kernel without
        `block(...)`, `device=` the CUDA device (default: the arrays'),
        `timeout=` seconds to wait for the kernel before GpuError."""
        Launcher(self, _dims(grid, "grid"), block=block, device=device, timeout=timeout)(
            *args, **kwargs
        )


class Launcher:
    """`kernel[grid]`: call it with the kernel's arguments to launch."""

    def __init__(self, kernel: Kernel, grid, block=None, device=None, timeout=10.0):
        self.kernel = kernel
        self.grid = grid
        self.block = _dims(block, "block") if block is not None else None
        self.device = device
        self.timeout = float(timeout)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        from ._gpu import launch

        launch(self.kernel, self.grid, self.block, self.device, self.timeout, args, kwargs)
