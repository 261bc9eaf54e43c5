#!/usr/bin/env bash
# Builds the Python package `kdsl` (python/, docs/python.md) into a virtual
# environment and runs its tests (python/tests, pytest), passing any
# arguments through to pytest:
#     scripts/python-test.sh                  # every test
#     scripts/python-test.sh -k saxpy         # those whose name matches
# The environment (${KDSL_PY_VENV:-target/py-venv}) gets the pinned tools
# of python/requirements-test.txt on first use and again whenever that file
# changes. The package is then built and installed the way a user installs
# it, `pip install .` from the repository root (pyproject.toml: maturin's
# PEP 517 backend builds one wheel, which pip installs), with two
# differences for speed that change neither the files the wheel holds nor
# how it installs: the build uses the environment's pinned maturin
# (`--no-build-isolation`), and cargo's dev profile (compiler and simulator
# at opt-level 1, python/Cargo.toml) into the main crate's target/ with
# python/Cargo.lock (`--locked`), so one incremental build serves every run;
# KDSL_PY_PROFILE=release builds the release profile a plain `pip install .`
# uses. The tests import the installed package (test_install.py checks
# that), and build tests/driver/libcuda_stub.c with the C compiler ($CC,
# else cc) for the GPU path's tests against a stand-in driver.
# scripts/test.sh runs this after `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
venv="${KDSL_PY_VENV:-$root/target/py-venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
	echo "python-test.sh: creating $venv" >&2
	# KDSL_PY_SYSTEM_SITE=1: the environment also sees $python's packages
	# (scripts/gpu-check.sh: torch).
	make_venv() { "$python" -m venv ${KDSL_PY_SYSTEM_SITE:+--system-site-packages} "$venv"; }
	if ! make_venv; then
		# Debian's python3 keeps venv's pip bootstrap in a package of its own.
		command -v apt-get >/dev/null 2>&1 || {
			echo "python-test.sh: $python cannot make a virtual environment (install its venv module)" >&2
			exit 1
		}
		echo "python-test.sh: installing Debian's python3-venv" >&2
		sudo_=()
		[ "$(id -u)" = 0 ] || sudo_=(sudo)
		rm -rf "$venv"
		DEBIAN_FRONTEND=noninteractive "${sudo_[@]}" apt-get install -y -qq --no-install-recommends python3-venv >&2
		make_venv
	fi
fi
stamp="$venv/.kdsl-requirements"
if ! cmp -s python/requirements-test.txt "$stamp"; then
	echo "python-test.sh: installing python/requirements-test.txt" >&2
	"$venv/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements-test.txt
	cp python/requirements-test.txt "$stamp"
fi
export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
profile="${KDSL_PY_PROFILE:-dev}"
echo "python-test.sh: pip install . (maturin, cargo profile $profile)" >&2
MATURIN_PEP517_ARGS="--locked --profile $profile" \
	"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation "$root" >&2
# Not from the source tree: python/ is never on the path (pytest's rootdir
# is the repository root, whose own directory holds no `kdsl` package).
cd "$root"
exec "$venv/bin/python" -m pytest -q python/tests "$@"
