#!/usr/bin/env bash
# Runs each cargo-fuzz target in fuzz/ for a bounded time:
#     scripts/fuzz.sh SECONDS [TARGET...]     # default: every target, one after the other
#
# The targets (fuzz/fuzz_targets/): `pipeline` (arbitrary bytes through the
# whole compiler: every --emit kind, every diagnostics format) and `lsp`
# (the language server's document handling: opens, edits, hovers,
# definitions, code actions on arbitrary text).
#
# libFuzzer needs compiler flags that are unstable (-Z flags for the
# coverage instrumentation); cargo-fuzz passes them, and RUSTC_BOOTSTRAP=1
# lets the stable toolchain accept them, so no nightly is needed.
# cargo-fuzz itself is installed from crates.io when missing. The targets
# are built optimised with debug assertions and, by default, without a
# sanitizer: kdslc's code is safe Rust (panics, stack overflows and hangs
# are what there is to find, and libFuzzer catches those), and
# AddressSanitizer made the pipeline target about ten times slower;
# FUZZ_SANITIZER=address brings it back. The corpus grows in
# fuzz/corpus/TARGET (seeded with the samples, the valid programs and the
# UI tests); a crash (a panic, even one the language server catches), a
# hang (a run over 30 s) or an input that needs more than 4 GiB is written
# to fuzz/artifacts/TARGET/ and makes the script fail, with the command
# that reproduces it.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}"
shift
targets=("$@")
((${#targets[@]})) || targets=(pipeline lsp)

command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz.sh: installing cargo-fuzz (once)" >&2
  cargo install --locked cargo-fuzz
fi
export RUSTC_BOOTSTRAP=1
flags=(-O --debug-assertions --sanitizer "${FUZZ_SANITIZER:-none}")

cd fuzz
echo "fuzz.sh: building the targets (${flags[*]})" >&2
cargo fuzz build "${flags[@]}"

# Seeds: kdsl files. The pipeline reads an input's first byte as options,
# the language server target as the length of the session's description.
for t in pipeline lsp; do
  mkdir -p "corpus/$t"
  for f in ../samples/*.kdsl ../tests/ui/*.kdsl ../tests/valid/*.kdsl; do
    [ -f "$f" ] && cp -n "$f" "corpus/$t/" 2>/dev/null || true
  done
done

status=0
for t in "${targets[@]}"; do
  echo "fuzz.sh: $t for ${seconds}s" >&2
  start=$SECONDS
  if ! cargo fuzz run "${flags[@]}" "$t" "corpus/$t" -- \
    -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len=65536 \
    -len_control=0 -print_final_stats=1; then
    status=1
    echo "fuzz.sh: $t FAILED after $((SECONDS - start))s; inputs in fuzz/artifacts/$t/:" >&2
    ls -l "artifacts/$t" >&2 || true
    echo "reproduce: (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run ${flags[*]} $t artifacts/$t/FILE)" >&2
  else
    echo "fuzz.sh: $t ran $((SECONDS - start))s, no failure; corpus: $(ls "corpus/$t" | wc -l) inputs" >&2
  fi
done
exit $status
