"""Fixtures shared by the tests: the stand-in CUDA driver."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUB_SOURCE = ROOT / "tests" / "driver" / "libcuda_stub.c"


@pytest.fixture(scope="session")
def stub_driver(tmp_path_factory):
    """tests/driver/libcuda_stub.c built as DIR/libcuda.so: first in
    LD_LIBRARY_PATH, the dynamic loader gives it to the package in place of
    any real driver (the Rust runner opens `libcuda.so` by name), as in
    tests/it/cli/launch.rs."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the stand-in driver is a Linux shared library")
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.fail(f"`{cc}` (the C compiler that links Rust) is needed to build {STUB_SOURCE}")
    d = tmp_path_factory.mktemp("stub-driver")
    built = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(d / "libcuda.so"), str(STUB_SOURCE)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return d


@pytest.fixture
def stub(stub_driver, tmp_path):
    """`stub(code, **env)` runs `code` in a Python process of its own (a
    driver a process loaded stays loaded) whose CUDA driver is the stub,
    from the repository root, with `env` (the stub's switches:
    KDSL_STUB_PARAMS=N logs N parameters, KDSL_STUB_ENCODE=N fails the
    encoding, ...) and fakes.py importable; returns the finished process
    and the stub's log, line by line (the launch configuration is logged
    too: KDSL_STUB_CONFIG)."""

    def run(code: str, **env: str):
        log = tmp_path / "stub.log"
        if log.exists():
            log.unlink()
        e = {k: v for k, v in os.environ.items() if not k.startswith("KDSL_STUB_")}
        paths = [str(stub_driver)] + ([os.environ["LD_LIBRARY_PATH"]] if os.environ.get("LD_LIBRARY_PATH") else [])
        e["LD_LIBRARY_PATH"] = os.pathsep.join(paths)
        e["PYTHONPATH"] = str(Path(__file__).parent)
        e["KDSL_STUB_LOG"] = str(log)
        e["KDSL_STUB_CONFIG"] = "1"
        e.update(env)
        p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=e,
                           capture_output=True, text=True, timeout=300)
        return p, (log.read_text().splitlines() if log.exists() else [])

    return run
