#!/usr/bin/env bash
# Installs NVIDIA's CPU-side CUDA 13.5 compiler tools from their PyPI wheels, pinned
# to 13.5.37: ptxas and nvdisasm (what kdsl's tests need), plus nvcc with its front
# end (nvvm, crt), NVRTC and the runtime headers (what bench/peer.py needs), and
# the CCCL headers that cooperative_groups.h needs (what the simulator's tests of
# real CUDA need).
# No GPU and no system CUDA install needed. Idempotent: a second run does nothing.
#
#   usage: scripts/cuda-tools.sh [DIR]
#          DIR defaults to $KDSL_CUDA_TOOLS, else ~/.cache/kdsl-cuda-13.5
#
# Prints one line on stdout: the folder that holds bin/ptxas, bin/nvdisasm, lib/.
# Everything else (pip's progress, errors) goes to stderr, so
#     export KDSL_PTXAS="$(scripts/cuda-tools.sh)/bin/ptxas"
# works.
set -euo pipefail

ver=13.5.37
dir="${1:-${KDSL_CUDA_TOOLS:-$HOME/.cache/kdsl-cuda-13.5}}"
root="$dir/nvidia/cu13"
wheels=(
  "nvidia-cuda-nvcc==$ver" "nvidia-cuda-nvdisasm==$ver" "nvidia-cuda-nvrtc==$ver"
  "nvidia-nvvm==$ver" "nvidia-cuda-crt==$ver" "nvidia-cuda-runtime==$ver"
)

complete() {
  [ -x "$root/bin/ptxas" ] && [ -x "$root/bin/nvdisasm" ] && [ -x "$root/bin/nvcc" ] &&
    [ -e "$root/lib/libnvrtc.so.13" ] && [ -d "$root/nvvm/bin" ]
}

say() { echo "cuda-tools.sh: $*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else say "need root to run: $*"; return 1
  fi
}

ensure_pip() {
  python3 -m pip --version >/dev/null 2>&1 && return 0
  say "python3 has no pip; trying ensurepip, then apt's python3-pip"
  python3 -m ensurepip --upgrade >&2 2>/dev/null && python3 -m pip --version >/dev/null 2>&1 && return 0
  command -v apt-get >/dev/null 2>&1 || { say "no pip and no apt-get; install pip for python3"; return 1; }
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq >&2
  as_root apt-get install -y -qq python3-pip >&2
  python3 -m pip --version >/dev/null 2>&1
}

pip_install() {  # pip_install TARGET
  local args=(install -q --disable-pip-version-check --no-input --no-deps --target "$1" "${wheels[@]}")
  local log rc=0
  log=$(mktemp)
  export PIP_ROOT_USER_ACTION=ignore  # quiet "running pip as root" (CI runs as root)
  python3 -m pip "${args[@]}" 2>"$log" >&2 || rc=$?
  if [ "$rc" != 0 ] && grep -qi 'externally.managed' "$log"; then
    say "retrying with --break-system-packages (PEP 668 Python)"
    rc=0
    python3 -m pip "${args[@]}" --break-system-packages 2>"$log" >&2 || rc=$?
  fi
  cat "$log" >&2
  rm -f "$log"
  return "$rc"
}

if ! complete; then
  command -v python3 >/dev/null 2>&1 || { say "python3 is required"; exit 1; }
  ensure_pip
  mkdir -p "$dir"
  # Install into a staging folder and move it into place, so that an interrupted
  # download never leaves a half-installed tree that looks complete.
  stage=$(mktemp -d "$dir/.staging.XXXXXX")
  trap 'rm -rf "$stage"' EXIT
  say "installing CUDA $ver tools (ptxas, nvdisasm, nvcc, nvrtc) into $dir"
  pip_install "$stage"
  chmod +x "$stage"/nvidia/cu13/bin/* "$stage"/nvidia/cu13/nvvm/bin/* 2>/dev/null || true
  rm -rf "$dir/nvidia"
  mv "$stage/nvidia" "$dir/nvidia"
  complete || { say "install finished but $root/bin/ptxas is missing"; exit 1; }
fi

# The CUDA C++ core libraries' headers (CCCL: <nv/target>, <cuda/std/...>),
# which <cooperative_groups.h> and <cuda_pipeline.h> include and nvcc finds
# through nvcc.profile's -isystem include/cccl. Added on their own, so that
# an existing install gains them without the other tools being replaced
# under anyone using them. (No CCCL wheel carries the 13.5.37 number.)
cccl="nvidia-cuda-cccl==13.3.5.0.6"
if [ ! -e "$root/include/nv/target" ]; then
  ensure_pip
  stage_cccl=$(mktemp -d "$dir/.staging-cccl.XXXXXX")
  trap 'rm -rf "${stage:-}" "$stage_cccl"' EXIT
  say "installing the CCCL headers ($cccl) into $root/include"
  wheels=("$cccl")
  pip_install "$stage_cccl"
  for d in nv cccl; do
    if [ -d "$stage_cccl/nvidia/cu13/include/$d" ] && [ ! -e "$root/include/$d" ]; then
      mv "$stage_cccl/nvidia/cu13/include/$d" "$root/include/$d"
    fi
  done
  [ -e "$root/include/nv/target" ] || { say "the CCCL headers are missing after the install"; exit 1; }
fi

echo "$root"
