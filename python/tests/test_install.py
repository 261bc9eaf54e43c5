"""The package under test is the one `pip install .` installed
(scripts/python-test.sh), as a user gets it: a wheel's files in the
environment's site-packages, not the repository's python/ directory, and
not an editable install."""

from __future__ import annotations

import json
import sysconfig
from importlib import metadata
from pathlib import Path

import kdsl

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_wheel_is_what_is_tested():
    here = Path(kdsl.__file__).resolve()
    site = Path(sysconfig.get_paths()["platlib"]).resolve()
    assert here.parent == site / "kdsl", f"kdsl imported from {here}, not from {site}"
    assert ROOT / "python" not in here.parents
    dist = metadata.distribution("kdsl")
    assert dist.version == kdsl.__version__ == "0.1.0"
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    assert not direct.get("dir_info", {}).get("editable", False), direct
    files = {str(f) for f in dist.files or []}
    for name in ("kdsl/__init__.py", "kdsl/_gpu.py", "kdsl/_dtypes.py", "kdsl/py.typed"):
        assert name in files, sorted(files)
    native = [f for f in files if f.startswith("kdsl/_kdsl") and f.endswith(".so")]
    assert len(native) == 1 and native[0].endswith(".abi3.so"), sorted(files)
    assert "numpy>=1.22" in (dist.requires or [])


def test_the_python_sources_are_the_installed_ones():
    """The wheel carries python/kdsl as it is in the repository (a stale
    install would test old code)."""
    for name in ("__init__.py", "_gpu.py", "_dtypes.py"):
        installed = Path(kdsl.__file__).parent / name
        assert installed.read_bytes() == (ROOT / "python" / "kdsl" / name).read_bytes(), name
