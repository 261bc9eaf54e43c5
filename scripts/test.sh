#!/usr/bin/env bash
# Runs the whole test suite the way CI does: installs the pinned ptxas/nvdisasm
# (scripts/cuda-tools.sh, cached after the first run), points the tests at them,
# and runs `cargo test --locked` with any extra arguments passed through,
# then, for the whole suite, the Python package's tests
# (scripts/python-test.sh: builds it with maturin, runs pytest):
#     scripts/test.sh                      # everything
#     scripts/test.sh ptx::harness          # one module of tests/it
#     scripts/test.sh sim::                 # one folder (stage) of tests/it
#     scripts/test.sh --python [ARGS]       # only the Python tests (pytest ARGS)
# The whole suite (no arguments) first builds examples/cudarc-saxpy, the Rust
# example whose build script compiles a kernel with kdsl::host::Build.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(scripts/cuda-tools.sh)"
export KDSL_CUDA_TOOLS_ROOT="$root"
export KDSL_PTXAS="$root/bin/ptxas"
export KDSL_NVDISASM="$root/bin/nvdisasm"
echo "test.sh: using $("$KDSL_PTXAS" --version | grep -m1 release) at $KDSL_PTXAS" >&2
if [ "${1-}" = "--python" ]; then
	shift
	exec scripts/python-test.sh "$@"
fi
if [ $# -eq 0 ]; then
	echo "test.sh: cargo build -p kdsl-cudarc-saxpy (examples/cudarc-saxpy)" >&2
	cargo build --locked -p kdsl-cudarc-saxpy
fi
cargo test --locked "$@"
if [ $# -eq 0 ]; then
	echo "test.sh: the Python package (scripts/python-test.sh)" >&2
	scripts/python-test.sh
fi
