"""docs/python.md's examples, run: the example under "## Example" (its CPU
half in this process, each `print(...)  # OUTPUT` line's output compared
with the comment; its GPU half, on torch tensors, against the stand-in
driver of test_gpu.py with a stand-in `torch` module, and on a real GPU when
torch has one), and the pytest example of "CPU simulation in a test suite"
on the softmax sample."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kdsl

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "python.md"


def python_block(section: str) -> str:
    """The first ```python block of the `## section` of docs/python.md."""
    text = DOC.read_text()
    m = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert m, f"docs/python.md has no section `## {section}`"
    block = re.search(r"^```python\n(.*?)^```", m.group(1), re.S | re.M)
    assert block, f"the section `## {section}` of docs/python.md has no python block"
    return block.group(1)


def example_halves():
    """The example's CPU half and its GPU half (from `import torch` on)."""
    code = python_block("Example")
    cpu, sep, gpu = code.partition("import torch")
    assert sep, "the example launches on torch tensors after `import torch`"
    return cpu, sep + gpu


def expected_prints(code: str):
    """What each `print(...)  # OUTPUT` line promises to print."""
    return [line.split("#", 1)[1].strip() for line in code.splitlines()
            if line.lstrip().startswith("print(") and "#" in line]


def test_the_example_runs_and_prints_what_it_says(monkeypatch):
    cpu, gpu = example_halves()
    assert len(python_block("Example").splitlines()) <= 20
    monkeypatch.chdir(ROOT)  # it names samples/saxpy.kdsl
    promised = expected_prints(cpu)
    assert len(promised) == 2, cpu
    out = io.StringIO()
    scope: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(cpu, str(DOC), "exec"), scope)
    assert out.getvalue().splitlines() == promised
    # "y itself is untouched"
    assert np.array_equal(scope["y"], np.ones(1000, np.float32))
    compile(gpu, str(DOC), "exec")  # the GPU half is Python, at least


FAKE_TORCH = '''
import sys, types, fakes, itertools
addresses = itertools.count(0x100000, 0x10000)
def tensor(n, device=None):
    assert device == "cuda", device
    return fakes.CudaArray((n,), "<f4", address=next(addresses), device=0)
sys.modules["torch"] = types.SimpleNamespace(rand=tensor, ones=tensor)
'''


def test_the_examples_gpu_launch_matches_the_kernel(stub):
    """The GPU half, on a stand-in `torch` (f32 device arrays, through
    `__cuda_array_interface__`) and the stand-in driver: the launch it
    writes is one the kernel takes, with the grid and the scalars given."""
    cpu, gpu = example_halves()
    p, log = stub(FAKE_TORCH + cpu + gpu, KDSL_STUB_PARAMS="4")
    assert p.returncode == 0, p.stderr
    assert log[0] == "launch grid=4,1,1 block=256,1,1 shared=0 attrs=0", log
    words = [int(line.split(" ")[2], 16) for line in log[1:5]]
    assert words[1:3] == [0x100000, 0x110000]
    assert (words[0] & 0xFFFF_FFFF, words[3] & 0xFFFF_FFFF) == (0x40000000, 1000)  # 2.0f, n


def test_the_example_on_a_gpu_with_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    cpu, gpu = example_halves()
    monkeypatch.chdir(ROOT)
    scope: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(cpu + gpu, str(DOC), "exec"), scope)
    torch.cuda.synchronize()
    torch.testing.assert_close(scope["ys"], 2.0 * scope["xs"] + 1)


def test_the_test_suite_example(tmp_path):
    """The softmax test of "CPU simulation in a test suite", run by pytest
    on samples/softmax_rows.kdsl (the kernel it names, with the same
    parameters) in place of kernels/softmax_rows.kdsl."""
    code = python_block("CPU simulation in a test suite")
    assert '"kernels/softmax_rows.kdsl"' in code
    code = code.replace('"kernels/softmax_rows.kdsl"', repr(str(ROOT / "samples" / "softmax_rows.kdsl")))
    (tmp_path / "test_softmax_doc.py").write_text(code)
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_softmax_doc.py"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"^4 passed", p.stdout, re.M), p.stdout
