#!/usr/bin/env bash
# Runs the whole test suite the way CI does: installs the pinned ptxas/nvdisasm
# (scripts/cuda-tools.sh, cached after the first run), points the tests at them,
# and runs `cargo test --locked` with any extra arguments passed through:
#     scripts/test.sh                      # everything
#     scripts/test.sh ptx::harness          # one module of tests/it
#     scripts/test.sh sim::                 # one folder (stage) of tests/it
# The whole suite (no arguments) first builds examples/cudarc-saxpy, the Rust
# example whose build script compiles a kernel with kdsl::host::Build.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(scripts/cuda-tools.sh)"
export KDSL_CUDA_TOOLS_ROOT="$root"
export KDSL_PTXAS="$root/bin/ptxas"
export KDSL_NVDISASM="$root/bin/nvdisasm"
echo "test.sh: using $("$KDSL_PTXAS" --version | grep -m1 release) at $KDSL_PTXAS" >&2
if [ $# -eq 0 ]; then
  echo "test.sh: cargo build -p kdsl-cudarc-saxpy (examples/cudarc-saxpy)" >&2
  cargo build --locked -p kdsl-cudarc-saxpy
fi
exec cargo test --locked "$@"
