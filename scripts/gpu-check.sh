#!/usr/bin/env bash
# gpu-check.sh: proves on an NVIDIA GPU what the simulator and ptxas suggest.
#
#  1. Every sample (samples/*.kdsl) and the nvcc twin of each bench kernel
#     (bench/kernels/NAME.cu compiled with `nvcc -ptx`; its kdsl source is
#     samples/NAME.kdsl) runs
#     with `kdslc run --check-sim`: the GPU's outputs must match the simulator's
#     (exact for integers, a relative tolerance for floats; docs/run.md). The
#     tensor-core GEMM (samples/hopper_gemm.kdsl, sm_90a) runs at 1024^3 on
#     integer-valued inputs, which --check-sim compares bit for bit; so do its
#     variants: the persistent cluster GEMM (samples/hopper_gemm_persistent
#     .kdsl, on 8 CTAs: four clusters of two, four pairs of tiles each) and
#     the fp8 instantiation hopper_gemm__ELEM_e4m3 (`--const ELEM=e4m3`).
#  2. Each bench kernel and its nvcc twin are timed with `kdslc run --bench`,
#     on the same inputs, and a table is printed:
#         kernel, kdslc time, nvcc time, ratio (kdslc / nvcc), bandwidth.
#  3. The GEMM's TFLOP/s at 4096^3 and 8192^3, kdslc and its nvcc twin, beside
#     cuBLAS (torch.matmul, when torch with CUDA is installed), and the share
#     of cuBLAS's speed kdslc's reaches; then its variants' (kdslc only): the
#     persistent cluster GEMM on GEMM_PERSISTENT_CTAS CTAs and the fp8 GEMM.
#  4. The Python package's launches on torch tensors (when torch with CUDA
#     is installed): saxpy, softmax and cluster_sum against the simulator,
#     the GEMM's bf16 tensor maps, the argument checks on device arrays.
#  5. Attention's TFLOP/s (samples/flash_attention_fwd.kdsl, HEAD_DIM 128,
#     not causal) at seq_len 4096, kdslc and its nvcc twin, beside torch's
#     scaled_dot_product_attention on the same shape (n/a without torch);
#     its step-1 check runs the default instantiation (HEAD_DIM 64) on two
#     heads of 200 rows, a full and a partial KV tile.
#  6. Host programs launch saxpy and the GEMM through generated launchers and
#     check them against CPU references: examples/host (C and C++, from the
#     header of `kdslc --emit header`, built by its Makefile with cc and c++)
#     and examples/cudarc-saxpy (Rust, cudarc; cargo, or KDSL_CUDARC_SAXPY=BIN).
#
# usage: scripts/gpu-check.sh [--sim] [--only KERNEL]...
#   --sim          no GPU needed: run every check launch (step 1's inputs,
#                  kernels and nvcc twins) in `kdslc sim` instead, and build
#                  each timing launch of steps 2, 3 and 5 (its arguments parsed,
#                  its arrays made) without running it
#   --only KERNEL  only this sample and its twin (repeatable)
#
# Exit status: 0 all matched; 1 a mismatch, a fault or a failed compile (the
# tables are still printed for what ran); 2 a usage error, or this machine
# cannot run the check (no GPU or driver, no nvcc, no bench/kernels/).
#
# Environment: KDSLC (default: target/release/kdslc, built if missing), NVCC
# (default: scripts/cuda-tools.sh's nvcc, then PATH), BENCH_LAUNCHES (50),
# GPU_CHECK_SM (default: the GPU's compute capability, e.g. sm_90; sm_90
# with --sim), GEMM_CHECK_SIZE (the GEMM's m = n = k in step 1: 1024),
# GEMM_BENCH_SIZES (step 3's: "4096 8192"), GEMM_PERSISTENT_CTAS (the
# persistent GEMM's grid in step 3: 132, one CTA per SM of an H100/H200; an
# even number), ATTN_SEQ and ATTN_HEADS (step 5's seq_len and batch x
# heads: 4096 and 16), PYTHON (python3, for the GEMM's inputs and torch).
#
# Designed to finish within 5 minutes on an H100/H200-class GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

die() {
	echo "gpu-check: $*" >&2
	exit 2
}

usage() {
	sed -n '/^# usage:/,/^#   --only/p' "$0" | sed 's/^# \{0,1\}//'
}

# The instantiations of samples' kernel constants that the check runs beside
# the samples themselves (language.md §2.6): NAME SAMPLE CONST...
VARIANTS=(
	"hopper_gemm__ELEM_e4m3 hopper_gemm ELEM=e4m3"
)

# variant_of K: "SAMPLE CONST..." of variant K, nothing (status 1) for a kernel
# that is not one.
variant_of() {
	local v
	for v in "${VARIANTS[@]}"; do
		[ "${v%% *}" = "$1" ] && echo "${v#* }" && return 0
	done
	return 1
}

# sample_of K: the sample kernel K comes from (a variant's, or its own name).
sample_of() {
	local v
	if v=$(variant_of "$1"); then echo "${v%% *}"; else echo "$1"; fi
}

SIM=0
ONLY=()
while [ $# -gt 0 ]; do
	case $1 in
	--sim) SIM=1 ;;
	--only)
		[ $# -gt 1 ] || die "--only needs a kernel name (a sample: samples/KERNEL.kdsl)"
		shift
		[ -f "samples/$1.kdsl" ] || [ -f "bench/kernels/$1.cu" ] || variant_of "$1" >/dev/null ||
			die "--only $1: no samples/$1.kdsl or bench/kernels/$1.cu"
		ONLY+=("$1")
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument \`$1\` (usage: scripts/gpu-check.sh [--sim] [--only KERNEL]...)" ;;
	esac
	shift
done

# wanted K: whether kernel K is checked (every kernel without --only).
wanted() {
	[ ${#ONLY[@]} -eq 0 ] && return 0
	local o
	for o in "${ONLY[@]}"; do [ "$o" = "$1" ] && return 0; done
	return 1
}

GEMM_N=${GEMM_CHECK_SIZE:-1024}
ATTN_SEQ=${ATTN_SEQ:-4096}
ATTN_BH=${ATTN_HEADS:-16}
for v in $ATTN_SEQ $ATTN_BH; do
	case $v in
	'' | *[!0-9]* | 0*) die "ATTN_SEQ and ATTN_HEADS must be positive integers, not \`$v\`" ;;
	esac
done
GEMM_CTAS=${GEMM_PERSISTENT_CTAS:-132}
case $GEMM_CTAS in
'' | *[!0-9]* | 0*) die "GEMM_PERSISTENT_CTAS must be a positive even number, not \`$GEMM_CTAS\`" ;;
esac
[ $((GEMM_CTAS % 2)) -eq 0 ] || die "GEMM_PERSISTENT_CTAS must be a positive even number (clusters of two), not $GEMM_CTAS"
GEMM_SIZES=${GEMM_BENCH_SIZES:-4096 8192}
for v in $GEMM_N $GEMM_SIZES; do
	case $v in
	'' | *[!0-9]* | 0*) die "GEMM sizes must be positive multiples of 8 (TMA's 16-byte rows), not \`$v\`" ;;
	esac
	[ $((v % 8)) -eq 0 ] || die "GEMM sizes must be positive multiples of 8 (TMA's 16-byte rows), not $v"
done

# --- what the check needs ---------------------------------------------------
if [ "$SIM" = 0 ] && { ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; }; then
	die "no NVIDIA GPU or driver here (\`nvidia-smi -L\` failed); run this on a machine with a GPU, or use \`kdslc sim\` on the CPU (\`scripts/gpu-check.sh --sim\` runs the check's launches there)"
fi
[ -d bench/kernels ] || die "bench/kernels/ is missing: the CUDA twins of the bench kernels are needed"

KDSLC=${KDSLC:-target/release/kdslc}
if [ ! -x "$KDSLC" ]; then
	command -v cargo >/dev/null 2>&1 || die "no kdslc at $KDSLC and no cargo to build it; set KDSLC"
	cargo build --release --locked >&2 || die "cannot build kdslc"
fi

if [ -z "${NVCC:-}" ]; then
	if root=$(scripts/cuda-tools.sh 2>/dev/null) && [ -x "$root/bin/nvcc" ]; then
		NVCC="$root/bin/nvcc"
	elif command -v nvcc >/dev/null 2>&1; then
		NVCC=$(command -v nvcc)
	else
		die "no nvcc (set NVCC, or run scripts/cuda-tools.sh)"
	fi
fi
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null 2>&1 || die "no $PYTHON (set PYTHON): it writes the GEMM's inputs"

if [ -z "${GPU_CHECK_SM:-}" ]; then
	if [ "$SIM" = 1 ]; then
		GPU_CHECK_SM=sm_90
	else
		cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -n1 | tr -d ' .')
		GPU_CHECK_SM="sm_${cc:-90}"
	fi
fi
LAUNCHES=${BENCH_LAUNCHES:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$SIM" = 1 ]; then
	echo "gpu-check: --sim: the check's launches in kdslc sim, no GPU; kdslc $KDSLC; nvcc $NVCC; target $GPU_CHECK_SM" >&2
else
	echo "gpu-check: $(nvidia-smi -L | head -n1); kdslc $KDSLC; nvcc $NVCC; target $GPU_CHECK_SM" >&2
fi

failures=0
fail() {
	echo "gpu-check: FAIL: $*" >&2
	failures=$((failures + 1))
}

# The target a sample (or a variant's sample) needs (a `// target: sm_90a`
# line: the tensor-core GEMM), else the GPU's.
sample_target() {
	local t
	t=$(sed -n 's|^// target: \(sm_[0-9a-z]*\).*|\1|p' "samples/$(sample_of "$1").kdsl" 2>/dev/null | head -n1)
	echo "${t:-$GPU_CHECK_SM}"
}

# Whether this GPU runs code for target T: an architecture-specific target
# (sm_90a) only on its own compute capability.
runs_here() {
	case $1 in
	*a) [ "${1%a}" = "${GPU_CHECK_SM%a}" ] ;;
	*) return 0 ;;
	esac
}

# gemm_ints PATH ROWS COLS SEED [e4m3]: a .npy of ROWS x COLS bf16 (their bits,
# `<u2`), or e4m3 (their bits, `|u1`), holding integers from -2 to 2: every
# product and sum of the GEMM is then exact in f32, in any order, so the GPU
# and the simulator agree bit for bit.
gemm_ints() {
	[ -f "$1" ] && return 0
	"$PYTHON" - "$@" <<'PY'
import struct, sys
path, rows, cols, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
fp8 = sys.argv[5:] == ["e4m3"]
x = (seed * 0x9E3779B97F4A7C15) & (2**64 - 1) | 1
if fp8:
    # e4m3: sign, exponent (bias 7), 3 fraction bits: 1 = 0x38, 2 = 0x40.
    bits = {-2: 0xC0, -1: 0xB8, 0: 0x00, 1: 0x38, 2: 0x40}
else:
    bits = {v: struct.unpack("<I", struct.pack("<f", float(v)))[0] >> 16 for v in range(-2, 3)}
out = bytearray()
for _ in range(rows * cols):
    x ^= (x << 13) & (2**64 - 1); x ^= x >> 7; x ^= (x << 17) & (2**64 - 1)
    out += struct.pack("<B" if fp8 else "<H", bits[x % 5 - 2])
header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % ("|u1" if fp8 else "<u2", rows, cols)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(out))
PY
}

# --- the kernels and their inputs ---------------------------------------------
# Arguments are positional with an element-type prefix on every array, so the
# same line serves the .kdsl kernel and its nvcc twin's PTX (whose pointers
# carry no type). `check` sizes keep the simulator quick; `bench` sizes are
# large enough to be bandwidth- or compute-bound on the GPU.
#
# args KERNEL SIZE FORM: prints "GRID|BLOCK|ARGS...|SHARED" for that size;
# FORM is `kdsl` or `ptx` (the GEMM's tensor maps are written differently).
args() {
	local k=$1 size=$2 form=${3:-kdsl} n rows cols chunks grid mnk a b seq bh hd
	case "$k:$size" in
	saxpy:check) n=$((1 << 20)) ;;
	saxpy:bench) n=$((1 << 24)) ;;
	reduce_sum:check | cluster_sum:check) n=$((1 << 20)) grid=64 ;;
	reduce_sum:bench | cluster_sum:bench) n=$((1 << 24)) grid=1056 ;;
	pipeline_sum:check | ws_pipeline:check | big_pipeline:check | ws_named:check) grid=16 chunks=4 ;;
	pipeline_sum:bench | ws_pipeline:bench | big_pipeline:bench | ws_named:bench) grid=1024 chunks=16 ;;
	ticket_sum:check) n=$(((1 << 20) - 5)) grid=64 ;;
	ticket_sum:bench) n=$((1 << 24)) grid=1056 ;;
	sgemm_tiled:check) mnk=256 ;;
	sgemm_tiled:bench) mnk=2048 ;;
	sgemm_regtile:check) mnk=256 ;;
	sgemm_regtile:bench) mnk=2048 ;;
	softmax_rows:check | blend_rows:check) rows=256 cols=1024 ;;
	softmax_rows:bench | blend_rows:bench) rows=4096 cols=4096 ;;
	transpose:check) rows=512 cols=256 ;;
	transpose:bench) rows=4096 cols=4096 ;;
	histogram:check | histogram_v4:check) n=$(((1 << 20) - 3)) grid=64 ;;
	histogram:bench | histogram_v4:bench) n=$((1 << 26)) grid=1056 ;;
	# Integer-valued inputs at GEMM_CHECK_SIZE^3 (1024 by default): compared
	# bit for bit by --check-sim. The timed sizes take `rand` inputs.
	hopper_gemm:check)
		mnk=$GEMM_N a="@$work/gemm_a_$mnk.npy" b="@$work/gemm_b_$mnk.npy"
		gemm_ints "${a#@}" "$mnk" "$mnk" 1 && gemm_ints "${b#@}" "$mnk" "$mnk" 2 || return 1
		;;
	# Step 3's sizes (GEMM_BENCH_SIZES).
	hopper_gemm:[1-9]*) mnk=$size a="rand:$size,$size:1" b="rand:$size,$size:2" ;;
	# The default instantiation (HEAD_DIM 64) on a full and a partial KV
	# tile; step 5's (HEAD_DIM 128) at ATTN_SEQ.
	flash_attention_fwd:check) seq=200 bh=2 hd=64 ;;
	flash_attention_fwd:attn) seq=$ATTN_SEQ bh=$ATTN_BH hd=128 ;;
	# The persistent GEMM: 8 CTAs in step 1 (at 1024^3, four pairs of tiles
	# per cluster: the ring and its phases carried across tiles), one per SM
	# in step 3 (no more than the pairs of tiles need).
	hopper_gemm_persistent:check)
		mnk=$GEMM_N a="@$work/gemm_a_$mnk.npy" b="@$work/gemm_b_$mnk.npy" grid=8
		gemm_ints "${a#@}" "$mnk" "$mnk" 1 && gemm_ints "${b#@}" "$mnk" "$mnk" 2 || return 1
		;;
	hopper_gemm_persistent:[1-9]*)
		mnk=$size a="rand:$size,$size:1" b="rand:$size,$size:2" grid=$GEMM_CTAS
		local pairs=$((((size + 255) / 256) * ((size + 255) / 256)))
		[ "$grid" -le $((2 * pairs)) ] || grid=$((2 * pairs))
		;;
	# fp8: e4m3 rows are 16-byte aligned when k is a multiple of 16.
	hopper_gemm__ELEM_e4m3:check)
		mnk=$GEMM_N a="@$work/gemm8_a_$mnk.npy" b="@$work/gemm8_b_$mnk.npy"
		[ $((mnk % 16)) -eq 0 ] || {
			echo "gpu-check: fp8 GEMM sizes must be multiples of 16 (TMA's 16-byte rows of e4m3), not $mnk" >&2
			return 1
		}
		gemm_ints "${a#@}" "$mnk" "$mnk" 1 e4m3 && gemm_ints "${b#@}" "$mnk" "$mnk" 2 e4m3 || return 1
		;;
	hopper_gemm__ELEM_e4m3:[1-9]*)
		mnk=$size a="rand:$size,$size:1" b="rand:$size,$size:2"
		[ $((mnk % 16)) -eq 0 ] || return 1
		;;
	*) return 1 ;;
	esac
	case $k in
	saxpy) echo "$((n / 256))|256|0=2.5 1=f32:rand:$n:1 2=f32:rand:$n:2 3=$n|" ;;
	reduce_sum) echo "$grid|256|0=f32:rand:$n:1 1=f32:zeros:1 2=$n|" ;;
	cluster_sum) echo "$grid|128|0=f32:rand:$n:1 1=f32:zeros:1 2=$n|" ;;
	pipeline_sum) echo "$grid|128|0=f32:rand:$((grid * chunks * 1024)):1 1=f32:zeros:1 2=$chunks|" ;;
	ws_pipeline) echo "$grid|160|0=f32:rand:$((grid * chunks * 1024)):1 1=f32:zeros:1 2=$chunks|" ;;
	big_pipeline) echo "$grid|160|0=f32:rand:$((grid * chunks * 8192)):1 1=f32:zeros:1 2=$chunks|" ;;
	ws_named) echo "$grid|288|0=f32:rand:$((grid * chunks * 8192)):1 1=f32:zeros:$((grid * chunks)) 2=$chunks|" ;;
	ticket_sum) echo "$grid|128|0=f32:rand:$n:1 1=f32:zeros:$grid 2=u32:zeros:1 3=f32:zeros:1 4=$n|" ;;
	sgemm_tiled) echo "$((mnk / 16)),$((mnk / 16))|16,16|0=f32:rand:$((mnk * mnk)):1 1=f32:rand:$((mnk * mnk)):2 2=f32:zeros:$((mnk * mnk)) 3=$mnk 4=$mnk 5=$mnk|" ;;
	sgemm_regtile) echo "$(((mnk + 127) / 128)),$(((mnk + 127) / 128))|256|0=f32:rand:$((mnk * mnk)):1 1=f32:rand:$((mnk * mnk)):2 2=f32:zeros:$((mnk * mnk)) 3=$mnk 4=$mnk 5=$mnk|" ;;
	softmax_rows) echo "$rows|256|0=f32:rand:$((rows * cols)):1 1=f32:zeros:$((rows * cols)) 2=$cols|" ;;
	blend_rows) echo "$rows|256|0=f32:rand:$((rows * cols)):1 1=f32:rand:$((rows * cols)):2 2=f32:rand:$rows:3 3=f32:zeros:$((rows * cols)) 4=$cols|" ;;
	transpose) echo "$((cols / 32)),$((rows / 32))|32,8|0=f32:iota:$((rows * cols)) 1=f32:zeros:$((rows * cols)) 2=$rows 3=$cols|" ;;
	histogram | histogram_v4) echo "$grid|256|0=u8:rand:$n:1 1=u32:zeros:256 2=$n|" ;;
	# C[m x n] = A[m x k] . B[n x k]^T, m = n = k = mnk. The kdsl kernel's
	# tensor parameters take the arrays (box, swizzle and shared memory are
	# the kernel's); the twin's take maps (boxes 128x64 and 256x64, 128B
	# swizzle) and the 196,672 bytes of dynamic shared memory it uses.
	hopper_gemm)
		local grid2="$(((mnk + 255) / 256)),$(((mnk + 127) / 128))" rest="2=bf16:zeros:$((mnk * mnk)) 3=$mnk 4=$mnk 5=$mnk"
		if [ "$form" = ptx ]; then
			echo "$grid2|384|0=tmap:bf16:$a:box=128,64:swizzle=128 1=tmap:bf16:$b:box=256,64:swizzle=128 $rest|196672"
		else
			echo "$grid2|384|0=$a 1=$b $rest|"
		fi
		;;
	# q, k, v: [bh * seq, hd] bf16; the kdsl kernel's tensor parameters take
	# the arrays, the twin's maps of boxes 128 x 64 with the 128B swizzle and
	# its dynamic shared memory (Q, two stages of K and V, the barriers).
	flash_attention_fwd)
		local g="$(((seq + 127) / 128)),$bh" r=$((bh * seq)) rest="3=bf16:zeros:$((bh * seq * hd)) 4=$seq 5=0.125"
		if [ "$form" = ptx ]; then
			local m=":box=128,64:swizzle=128"
			echo "$g|384|0=tmap:bf16:rand:$r,$hd:1$m 1=tmap:bf16:rand:$r,$hd:2$m 2=tmap:bf16:rand:$r,$hd:3$m $rest|$((5 * 128 * hd * 2 + 1024))"
		else
			echo "$g|384|0=rand:$r,$hd:1 1=rand:$r,$hd:2 2=rand:$r,$hd:3 $rest|"
		fi
		;;
	# The variants: kdsl kernels only (no twin); tensor parameters as above.
	hopper_gemm__ELEM_e4m3)
		echo "$(((mnk + 255) / 256)),$(((mnk + 127) / 128))|384|0=$a 1=$b 2=bf16:zeros:$((mnk * mnk)) 3=$mnk 4=$mnk 5=$mnk|"
		;;
	hopper_gemm_persistent)
		echo "$grid|384|0=$a 1=$b 2=bf16:zeros:$((mnk * mnk)) 3=$mnk 4=$mnk 5=$mnk|"
		;;
	*) return 1 ;;
	esac
}

# launch FILE KERNEL SIZE EXTRA...: `kdslc run` with the kernel's inputs
# (`kdslc sim` with --sim, whose flags are the same).
launch() {
	local file=$1 k=$2 size=$3 spec grid block a shared form=kdsl target=$GPU_CHECK_SM entry=${ENTRY:-$2}
	shift 3
	[[ $file == *.ptx ]] && form=ptx
	[ "$form" = kdsl ] && target=$(sample_target "$k")
	spec=$(args "$k" "$size" "$form") || {
		echo "gpu-check: no inputs defined for kernel $k ($size)" >&2
		return 3
	}
	IFS='|' read -r grid block a shared <<<"$spec"
	local argv=() v c
	for x in $a; do argv+=(--arg "$x"); done
	# A variant's constants (language.md §2.6): its instantiation, by name.
	if v=$(variant_of "$k"); then
		for c in ${v#* }; do argv+=(--const "$c"); done
	fi
	# A .ptx input's dynamic shared memory (kdslc lays out a kdsl kernel's).
	if [ -n "$shared" ] && [ "$form" = ptx ]; then argv+=(--shared-bytes "$shared"); fi
	local cmd=run
	[ "$SIM" = 1 ] && cmd=sim
	"$KDSLC" "$cmd" "$file" --kernel "$entry" --grid "$grid" --block "$block" --target "$target" \
		"${argv[@]}" "$@"
}

# The nvcc twin of bench kernel K as PTX, or nothing when it does not compile;
# for the architecture its first line names (`// arch: sm_90a`), else the GPU's.
twin_ptx() {
	local k=$1 out="$work/$1.nvcc.ptx" arch first
	first=$(head -n1 "bench/kernels/$k.cu")
	arch=$GPU_CHECK_SM
	if [[ $first == "// arch: "* ]]; then arch=$(awk '{print $3}' <<<"$first"); fi
	[ -f "$out" ] || "$NVCC" -ptx -O3 -arch="$arch" "bench/kernels/$k.cu" -o "$out" >&2 || return 1
	echo "$out"
}

# Whether kernel K (its sample, else its twin) can run on this GPU.
runnable() {
	local t
	if [ -f "samples/$(sample_of "$1").kdsl" ]; then
		t=$(sample_target "$1")
	else
		t=$(head -n1 "bench/kernels/$1.cu" | sed -n 's|^// arch: \(sm_[0-9a-z]*\).*|\1|p')
		t=${t:-$GPU_CHECK_SM}
	fi
	runs_here "$t" || {
		echo "skip  $1: needs $t, this GPU is $GPU_CHECK_SM" >&2
		return 1
	}
}

# --- 1. correctness: the GPU against the simulator --------------------------------
if [ "$SIM" = 1 ]; then
	echo "== --sim: every sample and bench kernel, and each nvcc twin, in kdslc sim ==" >&2
else
	echo "== --check-sim: every sample and bench kernel, and each nvcc twin ==" >&2
fi
check() {
	local file=$1 k=$2 log="$work/check.log" extra=(--check-sim)
	[ "$SIM" = 1 ] && extra=()
	if launch "$file" "$k" check "${extra[@]}" >"$log" 2>&1; then
		echo "ok    $k ($file)" >&2
	else
		sed 's/^/      /' "$log" >&2
		fail "$k ($file): ${extra[*]:-kdslc sim}"
	fi
}
for f in samples/*.kdsl; do
	k=$(basename "$f" .kdsl)
	wanted "$k" && runnable "$k" || continue
	check "$f" "$k"
done
for v in "${VARIANTS[@]}"; do
	k=${v%% *}
	wanted "$k" && runnable "$k" || continue
	check "samples/$(sample_of "$k").kdsl" "$k"
done
for cu in bench/kernels/*.cu; do
	k=$(basename "$cu" .cu)
	wanted "$k" && runnable "$k" || continue
	if ptx=$(twin_ptx "$k"); then check "$ptx" "$k"; else fail "$k: nvcc -ptx"; fi
done

# --- 2. speed: kdslc against nvcc ---------------------------------------------
# bench FILE KERNEL SIZE [EXTRA...]: prints "MEDIAN_US GB_PER_S" from the JSON
# bench line (EXTRA: more flags for kdslc, `--const HEAD_DIM=128`).
bench() {
	local line
	line=$(launch "$1" "$2" "$3" "${@:4}" --bench "$LAUNCHES" --message-format json 2>"$work/bench.err" |
		grep '"type":"bench"') || {
		sed 's/^/      /' "$work/bench.err" >&2
		return 1
	}
	local median bw
	median=$(sed -E 's/.*"median_us":([-0-9.eE+]+).*/\1/' <<<"$line")
	bw=$(sed -E 's/.*"gb_per_s":([-0-9.eE+]+|null).*/\1/' <<<"$line")
	echo "$median $bw"
}

if [ "$SIM" = 1 ]; then
	# Each timing launch is built (every argument parsed, every array made)
	# and stopped after its first instruction: S0011, which is what --sim
	# expects of it.
	echo "== --sim: steps 2, 3 and 5 time on a GPU; their launches, built and stopped at once: ==" >&2
	for cu in bench/kernels/*.cu; do
		k=$(basename "$cu" .cu)
		wanted "$k" || continue
		sizes=bench
		[ "$k" = hopper_gemm ] && sizes=$GEMM_SIZES
		[ "$k" = flash_attention_fwd ] && sizes=attn
		for size in $sizes; do
			for file in "samples/$k.kdsl" ptx; do
				if [ "$file" = ptx ]; then file=$(twin_ptx "$k") || continue; fi
				[ -f "$file" ] || continue
				extra=()
				entry=$k
				if [ "$size" = attn ]; then
					entry=flash_attention_fwd__HEAD_DIM_128
					[[ $file == *.kdsl ]] && extra=(--const HEAD_DIM=128)
				fi
				ENTRY=$entry launch "$file" "$k" "$size" "${extra[@]}" --max-steps 1 --message-format short >"$work/built.log" 2>&1
				if grep -q 'error\[S0011\]' "$work/built.log"; then
					echo "built $k ($file, $size)" >&2
				else
					sed 's/^/      /' "$work/built.log" >&2
					fail "$k ($file, $size): the timing launch does not build"
				fi
			done
		done
	done
	# The GEMM's variants (kdsl only), at step 3's sizes.
	for k in hopper_gemm_persistent "${VARIANTS[@]%% *}"; do
		wanted "$k" || continue
		file="samples/$(sample_of "$k").kdsl"
		[ -f "$file" ] || continue
		for size in $GEMM_SIZES; do
			args "$k" "$size" >/dev/null 2>&1 || continue
			launch "$file" "$k" "$size" --max-steps 1 --message-format short >"$work/built.log" 2>&1
			if grep -q 'error\[S0011\]' "$work/built.log"; then
				echo "built $k ($file, $size)" >&2
			else
				sed 's/^/      /' "$work/built.log" >&2
				fail "$k ($file, $size): the timing launch does not build"
			fi
		done
	done
else
	echo "== --bench $LAUNCHES: kdslc against nvcc (median of each) ==" >&2
	printf '%-14s %14s %14s %8s %14s\n' kernel "kdslc (us)" "nvcc (us)" ratio "kdslc GB/s"
	for cu in bench/kernels/*.cu; do
		k=$(basename "$cu" .cu)
		f="samples/$k.kdsl"
		wanted "$k" && runnable "$k" || continue
		# The GEMM is timed in step 3, attention in step 5, in TFLOP/s.
		[ "$k" = hopper_gemm ] && continue
		[ "$k" = flash_attention_fwd ] && continue
		# A twin whose kdsl kernel is not written yet is timed alone.
		if [ ! -f "$f" ]; then
			mine="- -"
		elif ! mine=$(bench "$f" "$k" bench); then
			fail "$k: kdslc --bench"
			continue
		fi
		theirs="- -"
		if [ -f "bench/kernels/$k.cu" ] && ptx=$(twin_ptx "$k"); then
			theirs=$(bench "$ptx" "$k" bench) || {
				fail "$k: nvcc twin --bench"
				theirs="- -"
			}
		fi
		read -r t_k bw_k <<<"$mine"
		read -r t_n _ <<<"$theirs"
		ratio=$(awk -v a="$t_k" -v b="$t_n" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
		t_n=$(awk -v b="$t_n" 'BEGIN { if (b + 0 > 0) printf "%.2f", b; else print "-" }')
		bw_k=$(awk -v b="$bw_k" 'BEGIN { if (b + 0 > 0) printf "%.1f", b; else print "-" }')
		t_k=$(awk -v b="$t_k" 'BEGIN { if (b + 0 > 0) printf "%.2f", b; else print "-" }')
		printf '%-14s %14s %14s %8s %14s\n' "$k" "$t_k" "$t_n" "$ratio" "$bw_k"
	done
fi

# --- 3. the GEMM's TFLOP/s beside cuBLAS -----------------------------------------
# cuBLAS through torch: the same problem, C = A·Bᵀ with A and B row-major n x n
# bf16; prints "N MS" per size, nothing without torch or a GPU.
cublas_ms() {
	"$PYTHON" - "$@" <<'PY' 2>"$work/torch.err"
import sys
try:
    import torch
except ImportError:
    sys.exit("torch is not installed")
if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
for n in map(int, sys.argv[1:]):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    f = lambda: a @ b.T
    for _ in range(3):
        f()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    s.record()
    for _ in range(20):
        f()
    e.record()
    torch.cuda.synchronize()
    print(n, s.elapsed_time(e) / 20)
PY
}

# tflops N MEDIAN_US: 2 N^3 flops in that time, or "-".
tflops() {
	awk -v n="$1" -v us="$2" 'BEGIN { if (us + 0 > 0) printf "%.1f", 2 * n * n * n / (us * 1e-6) / 1e12; else print "-" }'
}

if [ "$SIM" = 0 ] && wanted hopper_gemm && [ -f samples/hopper_gemm.kdsl ] && runnable hopper_gemm; then
	echo "== the GEMM's TFLOP/s (bf16, C = A·Bᵀ, median of $LAUNCHES launches), beside cuBLAS ==" >&2
	declare -A cublas=()
	# shellcheck disable=SC2086
	if out=$(cublas_ms $GEMM_SIZES); then
		while read -r n ms; do cublas[$n]=$(awk -v ms="$ms" 'BEGIN { printf "%.1f", ms * 1000 }'); done <<<"$out"
	else
		echo "      cuBLAS: n/a ($(tail -n1 "$work/torch.err"))" >&2
	fi
	printf '%-8s %14s %14s %14s %14s\n' size "kdslc TFLOP/s" "nvcc TFLOP/s" "cuBLAS TFLOP/s" "kdslc/cuBLAS"
	for n in $GEMM_SIZES; do
		t_k=- t_n=-
		if r=$(bench samples/hopper_gemm.kdsl hopper_gemm "$n"); then t_k=${r%% *}; else fail "hopper_gemm $n^3: kdslc --bench"; fi
		if ptx=$(twin_ptx hopper_gemm) && r=$(bench "$ptx" hopper_gemm "$n"); then t_n=${r%% *}; else fail "hopper_gemm $n^3: nvcc twin --bench"; fi
		t_c=${cublas[$n]:--}
		ratio=$(awk -v a="$t_k" -v c="$t_c" 'BEGIN { if (a + 0 > 0 && c + 0 > 0) printf "%.0f%%", 100 * c / a; else print "-" }')
		printf '%-8s %14s %14s %14s %14s\n' "$n^3" "$(tflops "$n" "$t_k")" "$(tflops "$n" "$t_n")" "$(tflops "$n" "$t_c")" "$ratio"
	done
	echo "      (the aim: at least 70% of cuBLAS at 8192^3; docs/performance.md)" >&2
fi

# The GEMM's variants: the persistent cluster GEMM (bf16, $GEMM_CTAS CTAs)
# and the fp8 GEMM (e4m3 in, bf16 out), kdslc only, in TFLOP/s.
persistent_ok=0 fp8_ok=0
if [ "$SIM" = 0 ] && [ -f samples/hopper_gemm_persistent.kdsl ] && wanted hopper_gemm_persistent &&
	runnable hopper_gemm_persistent; then persistent_ok=1; fi
if [ "$SIM" = 0 ] && [ -f samples/hopper_gemm.kdsl ] && wanted hopper_gemm__ELEM_e4m3 &&
	runnable hopper_gemm__ELEM_e4m3; then fp8_ok=1; fi
if [ "$persistent_ok" = 1 ] || [ "$fp8_ok" = 1 ]; then
	echo "== the GEMM's variants, kdslc (median of $LAUNCHES launches) ==" >&2
	printf '%-8s %22s %18s\n' size "persistent TFLOP/s" "fp8 TFLOP/s"
	for n in $GEMM_SIZES; do
		t_p=- t_8=-
		if [ "$persistent_ok" = 1 ]; then
			if r=$(bench samples/hopper_gemm_persistent.kdsl hopper_gemm_persistent "$n"); then
				t_p=${r%% *}
			else fail "hopper_gemm_persistent $n^3: kdslc --bench"; fi
		fi
		if [ "$fp8_ok" = 1 ] && [ $((n % 16)) -eq 0 ]; then
			if r=$(bench samples/hopper_gemm.kdsl hopper_gemm__ELEM_e4m3 "$n"); then
				t_8=${r%% *}
			else fail "hopper_gemm__ELEM_e4m3 $n^3: kdslc --bench"; fi
		fi
		printf '%-8s %22s %18s\n' "$n^3" "$(tflops "$n" "$t_p")" "$(tflops "$n" "$t_8")"
	done
fi

# 4. The Python package on torch tensors (python/tests/test_gpu.py's launches,
#    `kernel[grid](...)`), when $PYTHON has torch with CUDA; skipped with a
#    note otherwise. Its virtual environment sees $PYTHON's packages.
if [ "$SIM" = 0 ] && [ ${#ONLY[@]} -eq 0 ]; then
	echo "== the Python package on torch tensors (scripts/python-test.sh -k torch) ==" >&2
	if "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
		if ! KDSL_PY_VENV="$PWD/target/py-venv-gpu" KDSL_PY_SYSTEM_SITE=1 PYTHON="$(command -v "$PYTHON")" \
			scripts/python-test.sh -k torch -rs; then
			fail "the Python package's launches on torch tensors"
		fi
	else
		echo "      skipped: $PYTHON has no torch with CUDA" >&2
	fi
fi

# --- 5. attention's TFLOP/s beside torch's scaled_dot_product_attention -------
# torch SDPA on q, k, v of [1, heads, seq, 128] bf16 (its fastest backend);
# prints "MS", nothing without torch or a GPU.
sdpa_ms() {
	"$PYTHON" - "$@" <<'PY' 2>"$work/sdpa.err"
import sys
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("torch is not installed")
if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
seq, bh = int(sys.argv[1]), int(sys.argv[2])
q, k, v = (torch.rand(1, bh, seq, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
f = lambda: F.scaled_dot_product_attention(q, k, v, scale=0.125)
for _ in range(3):
    f()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
torch.cuda.synchronize()
s.record()
for _ in range(20):
    f()
e.record()
torch.cuda.synchronize()
print(s.elapsed_time(e) / 20)
PY
}

if [ "$SIM" = 0 ] && wanted flash_attention_fwd && [ -f samples/flash_attention_fwd.kdsl ] && runnable flash_attention_fwd; then
	echo "== attention's TFLOP/s (bf16, HEAD_DIM 128, seq_len $ATTN_SEQ, $ATTN_BH heads, median of $LAUNCHES launches) ==" >&2
	# 4 seq^2 * 128 flops per head (two products of 2 seq^2 128).
	attn_tflops() {
		awk -v s="$ATTN_SEQ" -v h="$ATTN_BH" -v us="$1" 'BEGIN { if (us + 0 > 0) printf "%.1f", 4 * s * s * 128 * h / (us * 1e-6) / 1e12; else print "-" }'
	}
	t_k=- t_n=- t_t=-
	if r=$(ENTRY=flash_attention_fwd__HEAD_DIM_128 bench samples/flash_attention_fwd.kdsl flash_attention_fwd attn --const HEAD_DIM=128); then
		t_k=${r%% *}
	else fail "flash_attention_fwd: kdslc --bench"; fi
	if ptx=$(twin_ptx flash_attention_fwd) && r=$(ENTRY=flash_attention_fwd__HEAD_DIM_128 bench "$ptx" flash_attention_fwd attn); then
		t_n=${r%% *}
	else fail "flash_attention_fwd: nvcc twin --bench"; fi
	if ms=$(sdpa_ms "$ATTN_SEQ" "$ATTN_BH"); then
		t_t=$(awk -v ms="$ms" 'BEGIN { printf "%.1f", ms * 1000 }')
	else
		echo "      torch SDPA: n/a ($(tail -n1 "$work/sdpa.err"))" >&2
	fi
	printf '%-10s %14s %14s %14s %14s\n' seq_len "kdslc TFLOP/s" "nvcc TFLOP/s" "SDPA TFLOP/s" "kdslc/SDPA"
	ratio=$(awk -v a="$t_k" -v c="$t_t" 'BEGIN { if (a + 0 > 0 && c + 0 > 0) printf "%.0f%%", 100 * c / a; else print "-" }')
	printf '%-10s %14s %14s %14s %14s\n' "$ATTN_SEQ" "$(attn_tflops "$t_k")" "$(attn_tflops "$t_n")" "$(attn_tflops "$t_t")" "$ratio"
fi

# --- 6. host programs: the kernels launched from C, C++ and Rust ------------------
# examples/host/ (saxpy in C, the GEMM in C++, each from the header of
# `kdslc --emit header`, built by its Makefile) and examples/cudarc-saxpy/
# (Rust, through cudarc, from kdsl::host::Build), each checked against a CPU
# reference. Without a GPU, tests/it/host/ builds the C and C++ programs and
# runs them against a stub driver.
if [ "$SIM" = 0 ] && { wanted saxpy || wanted hopper_gemm; }; then
	echo "== host programs from generated launchers (examples/host, examples/cudarc-saxpy) ==" >&2
	case $KDSLC in
	*/*) kdslc_abs="$(cd "$(dirname "$KDSLC")" && pwd)/$(basename "$KDSLC")" ;;
	*) kdslc_abs=$KDSLC ;;
	esac
	cuda_root=${CUDA_HOME:-}
	[ -f "$cuda_root/include/cuda.h" ] || cuda_root=$(scripts/cuda-tools.sh 2>/dev/null)
	# The driver as the linker finds it: libcuda.so, or only the driver's libcuda.so.1.
	ldlibs=-lcuda
	ldconfig -p 2>/dev/null | grep -q 'libcuda\.so ' || ldlibs=-l:libcuda.so.1
	host="$work/host"
	mkdir -p "$host"
	cp examples/host/Makefile examples/host/saxpy.c examples/host/gemm.cpp "$host/"
	programs=()
	wanted saxpy && programs+=(saxpy)
	wanted hopper_gemm && runnable hopper_gemm && programs+=(gemm)
	if [ ${#programs[@]} -gt 0 ] && make -C "$host" KDSLC="$kdslc_abs" CUDA="$cuda_root" SAMPLES="$PWD/samples" \
		LDLIBS="$ldlibs" "${programs[@]}" >"$work/host.log" 2>&1; then
		for p in "${programs[@]}"; do
			if (cd "$host" && "./$p" check) >"$work/host.log" 2>&1; then
				echo "ok    $p (examples/host: $(tail -n1 "$work/host.log"))" >&2
			else
				sed 's/^/      /' "$work/host.log" >&2
				fail "examples/host: $p check"
			fi
		done
	elif [ ${#programs[@]} -gt 0 ]; then
		sed 's/^/      /' "$work/host.log" >&2
		fail "examples/host: make ${programs[*]}"
	fi
	if wanted saxpy; then
		# A prebuilt binary (KDSL_CUDARC_SAXPY) for a machine without cargo.
		if [ -n "${KDSL_CUDARC_SAXPY:-}" ]; then
			rust=("$KDSL_CUDARC_SAXPY")
		elif command -v cargo >/dev/null 2>&1; then
			rust=(cargo run --quiet --release --locked -p kdsl-cudarc-saxpy)
		else
			rust=()
			echo "skip  examples/cudarc-saxpy: no cargo here (set KDSL_CUDARC_SAXPY to a built binary)" >&2
		fi
		if [ ${#rust[@]} -gt 0 ]; then
			if "${rust[@]}" >"$work/host.log" 2>&1; then
				echo "ok    saxpy (examples/cudarc-saxpy: $(tail -n1 "$work/host.log"))" >&2
			else
				sed 's/^/      /' "$work/host.log" >&2
				fail "examples/cudarc-saxpy"
			fi
		fi
	fi
fi

if [ "$failures" -gt 0 ]; then
	echo "gpu-check: $failures failure(s)" >&2
	exit 1
fi
if [ "$SIM" = 1 ]; then
	echo "gpu-check: every check launch ran in the simulator" >&2
else
	echo "gpu-check: all kernels match the simulator" >&2
fi
