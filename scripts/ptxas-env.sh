# Source this file (bash/zsh) to install the pinned CUDA tools if needed and point
# the tests and kdslc at them:
#     . scripts/ptxas-env.sh
# Exports KDSL_CUDA_TOOLS_ROOT (folder holding bin/), KDSL_PTXAS, KDSL_NVDISASM,
# and PTXAS (the variable `kdslc --emit cubin` reads).
#
# How tests find ptxas (tests/common/ptxas.rs), first hit wins:
#   1. $KDSL_PTXAS   2. $PTXAS
#   3. ${KDSL_CUDA_TOOLS:-$HOME/.cache/kdsl-cuda-13.5}/nvidia/cu13/bin/ptxas
#      (where scripts/cuda-tools.sh installs it)
#   4. ptxas on $PATH
# Locally a test that finds none prints "SKIPPED: ptxas not found"; under CI=... it fails.
if KDSL_CUDA_TOOLS_ROOT="$("$(dirname "${BASH_SOURCE[0]:-$0}")/cuda-tools.sh")"; then
  export KDSL_CUDA_TOOLS_ROOT
  export KDSL_PTXAS="$KDSL_CUDA_TOOLS_ROOT/bin/ptxas"
  export KDSL_NVDISASM="$KDSL_CUDA_TOOLS_ROOT/bin/nvdisasm"
  export PTXAS="$KDSL_PTXAS"
else
  echo "ptxas-env.sh: scripts/cuda-tools.sh failed; ptxas is not set up" >&2
fi
