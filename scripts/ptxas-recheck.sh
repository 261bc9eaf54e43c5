#!/usr/bin/env bash
# Re-checks the ptxas bugs kdslc routes around (docs/architecture.md,
# "ptxas workarounds") on a ptxas, for instance a newer release:
#     scripts/ptxas-recheck.sh [PTXAS]
# Each tests/fixtures/ptxas-crash/*.ptx is a module that crashed ptxas 13.5
# (the pinned release, the default here: scripts/cuda-tools.sh). It is
# assembled for sm_80 and sm_90 at -O0 to -O3 and each run is reported as
# `ok` or `CRASH` (killed by a signal). A module that no longer crashes
# anywhere means the workaround it names may be retired: remove it, then
# `tests/fixtures/ptxas-crash/*.kdsl` and the generator
# (`scripts/fuzz-long.sh`) tell whether the new ptxas takes the plain shape.
#
# Exit status: 0 every run crashed or assembled; 1 ptxas rejected a module
# (an error, not a crash: the module is no longer a reproducer); 2 no ptxas.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
if [ $# -gt 0 ]; then
	ptxas="$1"
else
	root="$(scripts/cuda-tools.sh)" || exit 2
	ptxas="$root/bin/ptxas"
fi
[ -x "$ptxas" ] || { echo "ptxas-recheck: $ptxas is not executable" >&2; exit 2; }
"$ptxas" --version | tail -1
status=0
for ptx in tests/fixtures/ptxas-crash/*.ptx; do
	line="$(basename "$ptx"):"
	crashes=0
	for arch in sm_80 sm_90; do
		for level in 0 1 2 3; do
			# The subshell reaps ptxas, so a crash is reported here, not by bash.
			rc="$( ("$ptxas" -arch="$arch" -O"$level" "$ptx" -o /dev/null >/dev/null 2>&1
				echo $?) 2>/dev/null)"
			if [ "$rc" -eq 0 ]; then
				line+=" $arch/-O$level ok"
			elif [ "$rc" -gt 128 ]; then
				line+=" $arch/-O$level CRASH"
				crashes=$((crashes + 1))
			else
				line+=" $arch/-O$level error($rc)"
				status=1
			fi
		done
	done
	echo "$line"
	if [ "$crashes" -eq 0 ]; then
		echo "  no crash: this ptxas may not need the workaround $ptx names"
	fi
done
exit "$status"
