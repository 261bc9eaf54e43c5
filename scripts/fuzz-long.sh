#!/usr/bin/env bash
# Runs the long generated-program test for a bounded time:
#     scripts/fuzz-long.sh [SECONDS]      # default: $KDSL_FUZZ_SECONDS, else 60
#     KDSL_FUZZ_SEED=1234 scripts/fuzz-long.sh 600   # repeat a run (the seed is printed)
#
# `pipeline::generated::generated_programs_long` (tests/it/pipeline/generated.rs, #[ignore]d in
# a plain `cargo test`) generates valid programs that cover every construct
# and operand boundary of docs/language.md until the time is up: each must
# compile without diagnostics and assemble with ptxas (sm_90, and sm_80 when
# it needs nothing newer), each boundary stepped over by one must be exactly
# its error and write no PTX; after 64 programs every construct must have
# come up. CI runs it for 60 s (.ci/run). The pinned ptxas is installed and
# used as in scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${KDSL_FUZZ_SECONDS:-60}}"
case "$seconds" in
  '' | *[!0-9]*) echo "usage: scripts/fuzz-long.sh [SECONDS]" >&2; exit 2 ;;
esac
root="$(scripts/cuda-tools.sh)"
export KDSL_CUDA_TOOLS_ROOT="$root"
export KDSL_PTXAS="$root/bin/ptxas"
export KDSL_NVDISASM="$root/bin/nvdisasm"
export KDSL_FUZZ_SECONDS="$seconds"
exec cargo test --locked --test it -- --ignored --exact pipeline::generated::generated_programs_long --nocapture
