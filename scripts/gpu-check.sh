#!/usr/bin/env bash
# gpu-check.sh: proves on an NVIDIA GPU what the simulator and ptxas suggest.
#
#  1. Every sample (samples/*.kdsl) and the nvcc twin of each bench kernel
#     (bench/kernels/NAME.cu compiled with `nvcc -ptx`; its kdsl source is
#     samples/NAME.kdsl) runs
#     with `kdslc run --check-sim`: the GPU's outputs must match the simulator's
#     (exact for integers, a relative tolerance for floats; docs/run.md).
#  2. Each bench kernel and its nvcc twin are timed with `kdslc run --bench`,
#     on the same inputs, and a table is printed:
#         kernel, kdslc time, nvcc time, ratio (kdslc / nvcc), bandwidth.
#
# Exit status: 0 all matched; 1 a mismatch, a fault or a failed compile (the
# table is still printed for what ran); 2 this machine cannot run the check
# (no GPU or driver, no nvcc, no bench/kernels/).
#
# Environment: KDSLC (default: target/release/kdslc, built if missing), NVCC
# (default: scripts/cuda-tools.sh's nvcc, then PATH), BENCH_LAUNCHES (50),
# GPU_CHECK_SM (default: the GPU's compute capability, e.g. sm_90).
#
# It needs bench/kernels/ (the CUDA twins of the bench kernels), which lands
# with the comparison benchmark. Designed to finish within 5 minutes on an
# H100/H200-class GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

die() {
	echo "gpu-check: $*" >&2
	exit 2
}

# --- what the check needs ---------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	die "no NVIDIA GPU or driver here (\`nvidia-smi -L\` failed); run this on a machine with a GPU, or use \`kdslc sim\` on the CPU"
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

if [ -z "${GPU_CHECK_SM:-}" ]; then
	cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -n1 | tr -d ' .')
	GPU_CHECK_SM="sm_${cc:-90}"
fi
LAUNCHES=${BENCH_LAUNCHES:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "gpu-check: $(nvidia-smi -L | head -n1); kdslc $KDSLC; nvcc $NVCC; target $GPU_CHECK_SM" >&2

failures=0
fail() {
	echo "gpu-check: FAIL: $*" >&2
	failures=$((failures + 1))
}

# --- the kernels and their inputs ---------------------------------------------
# Arguments are positional with an element-type prefix on every array, so the
# same line serves the .kdsl kernel and its nvcc twin's PTX (whose pointers
# carry no type). `check` sizes keep the simulator quick; `bench` sizes are
# large enough to be bandwidth- or compute-bound on the GPU.
#
# args KERNEL SIZE: prints "GRID|BLOCK|ARGS..." for that size.
args() {
	local k=$1 size=$2 n rows cols chunks grid mnk
	case "$k:$size" in
	saxpy:check) n=$((1 << 20)) ;;
	saxpy:bench) n=$((1 << 24)) ;;
	reduce_sum:check | cluster_sum:check) n=$((1 << 20)) grid=64 ;;
	reduce_sum:bench | cluster_sum:bench) n=$((1 << 24)) grid=1056 ;;
	pipeline_sum:check | ws_pipeline:check | big_pipeline:check) grid=16 chunks=4 ;;
	pipeline_sum:bench | ws_pipeline:bench | big_pipeline:bench) grid=1024 chunks=16 ;;
	sgemm_tiled:check) mnk=256 ;;
	sgemm_tiled:bench) mnk=2048 ;;
	softmax_rows:check | blend_rows:check) rows=256 cols=1024 ;;
	softmax_rows:bench | blend_rows:bench) rows=4096 cols=4096 ;;
	transpose:check) rows=512 cols=256 ;;
	transpose:bench) rows=4096 cols=4096 ;;
	histogram:check | histogram_v4:check) n=$(((1 << 20) - 3)) grid=64 ;;
	histogram:bench | histogram_v4:bench) n=$((1 << 26)) grid=1056 ;;
	# bf16 `rand` values are multiples of 2^-8 below 1: with k <= 256 every
	# partial sum is exact in f32, so the GPU and the simulator agree bit
	# for bit whatever the order of the tensor cores' sums.
	hopper_gemm:check) rows=1024 cols=1024 mnk=256 ;;
	hopper_gemm:bench) rows=4096 cols=4096 mnk=4096 ;;
	*) return 1 ;;
	esac
	case $k in
	saxpy) echo "$((n / 256))|256|0=2.5 1=f32:rand:$n:1 2=f32:rand:$n:2 3=$n" ;;
	reduce_sum) echo "$grid|256|0=f32:rand:$n:1 1=f32:zeros:1 2=$n" ;;
	cluster_sum) echo "$grid|128|0=f32:rand:$n:1 1=f32:zeros:1 2=$n" ;;
	pipeline_sum) echo "$grid|128|0=f32:rand:$((grid * chunks * 1024)):1 1=f32:zeros:1 2=$chunks" ;;
	ws_pipeline) echo "$grid|160|0=f32:rand:$((grid * chunks * 1024)):1 1=f32:zeros:1 2=$chunks" ;;
	big_pipeline) echo "$grid|160|0=f32:rand:$((grid * chunks * 8192)):1 1=f32:zeros:1 2=$chunks" ;;
	sgemm_tiled) echo "$((mnk / 16)),$((mnk / 16))|16,16|0=f32:rand:$((mnk * mnk)):1 1=f32:rand:$((mnk * mnk)):2 2=f32:zeros:$((mnk * mnk)) 3=$mnk 4=$mnk 5=$mnk" ;;
	softmax_rows) echo "$rows|256|0=f32:rand:$((rows * cols)):1 1=f32:zeros:$((rows * cols)) 2=$cols" ;;
	blend_rows) echo "$rows|256|0=f32:rand:$((rows * cols)):1 1=f32:rand:$((rows * cols)):2 2=f32:rand:$rows:3 3=f32:zeros:$((rows * cols)) 4=$cols" ;;
	transpose) echo "$((cols / 32)),$((rows / 32))|32,8|0=f32:iota:$((rows * cols)) 1=f32:zeros:$((rows * cols)) 2=$rows 3=$cols" ;;
	histogram | histogram_v4) echo "$grid|256|0=u8:rand:$n:1 1=u32:zeros:256 2=$n" ;;
	# C[rows x cols] = A[rows x k] . B[cols x k]^T: tensor maps (boxes 128x64,
	# 256x64, 128B swizzle), 196672 bytes of dynamic shared memory.
	hopper_gemm) echo "$(((cols + 255) / 256)),$(((rows + 127) / 128))|384|0=tmap:bf16:rand:$rows,$mnk:1:box=128,64:swizzle=128 1=tmap:bf16:rand:$cols,$mnk:2:box=256,64:swizzle=128 2=bf16:zeros:$((rows * cols)) 3=$rows 4=$cols 5=$mnk|196672" ;;
	*) return 1 ;;
	esac
}

# launch FILE KERNEL SIZE EXTRA...: `kdslc run` with the kernel's inputs.
launch() {
	local file=$1 k=$2 size=$3 spec grid block a
	shift 3
	spec=$(args "$k" "$size") || {
		echo "gpu-check: no inputs defined for kernel $k" >&2
		return 3
	}
	local shared
	IFS='|' read -r grid block a shared <<<"$spec"
	local argv=()
	for x in $a; do argv+=(--arg "$x"); done
	# A .ptx input's dynamic shared memory (kdslc lays out a kdsl kernel's).
	if [ -n "$shared" ] && [[ $file == *.ptx ]]; then argv+=(--shared-bytes "$shared"); fi
	"$KDSLC" run "$file" --kernel "$k" --grid "$grid" --block "$block" --target "$GPU_CHECK_SM" \
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

# --- 1. correctness: the GPU against the simulator --------------------------------
echo "== --check-sim: every sample and bench kernel, and each nvcc twin ==" >&2
check() {
	local file=$1 k=$2 log="$work/check.log"
	if launch "$file" "$k" check --check-sim >"$log" 2>&1; then
		echo "ok    $k ($file)" >&2
	else
		sed 's/^/      /' "$log" >&2
		fail "$k ($file): --check-sim"
	fi
}
for f in samples/*.kdsl; do
	k=$(basename "$f" .kdsl)
	check "$f" "$k"
done
for cu in bench/kernels/*.cu; do
	k=$(basename "$cu" .cu)
	if ptx=$(twin_ptx "$k"); then check "$ptx" "$k"; else fail "$k: nvcc -ptx"; fi
done

# --- 2. speed: kdslc against nvcc ---------------------------------------------
# bench FILE KERNEL: prints "MEDIAN_US GB_PER_S" from the JSON bench line.
bench() {
	local line
	line=$(launch "$1" "$2" bench --bench "$LAUNCHES" --message-format json 2>"$work/bench.err" |
		grep '"type":"bench"') || {
		sed 's/^/      /' "$work/bench.err" >&2
		return 1
	}
	local median bw
	median=$(sed -E 's/.*"median_us":([-0-9.eE+]+).*/\1/' <<<"$line")
	bw=$(sed -E 's/.*"gb_per_s":([-0-9.eE+]+|null).*/\1/' <<<"$line")
	echo "$median $bw"
}

echo "== --bench $LAUNCHES: kdslc against nvcc (median of each) ==" >&2
printf '%-14s %14s %14s %8s %14s\n' kernel "kdslc (us)" "nvcc (us)" ratio "kdslc GB/s"
for cu in bench/kernels/*.cu; do
	k=$(basename "$cu" .cu)
	f="samples/$k.kdsl"
	# A twin whose kdsl kernel is not written yet is timed alone.
	if [ ! -f "$f" ]; then
		mine="- -"
	elif ! mine=$(bench "$f" "$k"); then
		fail "$k: kdslc --bench"
		continue
	fi
	theirs="- -"
	if [ -f "bench/kernels/$k.cu" ] && ptx=$(twin_ptx "$k"); then
		theirs=$(bench "$ptx" "$k") || {
			fail "$k: nvcc twin --bench"
			theirs="- -"
		}
	fi
	read -r t_k bw_k <<<"$mine"
	read -r t_n _ <<<"$theirs"
	ratio=$(awk -v a="$t_k" -v b="$t_n" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }')
	t_n=$(awk -v b="$t_n" 'BEGIN { if (b + 0 > 0) printf "%.2f", b; else print "-" }')
	bw_k=$(awk -v b="$bw_k" 'BEGIN { if (b + 0 > 0) printf "%.1f", b; else print "-" }')
	t_k=$(awk -v b="$t_k" 'BEGIN { if (b + 0 > 0) printf "%.2f", b; else print "-" }')
	printf '%-14s %14s %14s %8s %14s\n' "$k" "$t_k" "$t_n" "$ratio" "$bw_k"
done

if [ "$failures" -gt 0 ]; then
	echo "gpu-check: $failures failure(s)" >&2
	exit 1
fi
echo "gpu-check: all kernels match the simulator" >&2
