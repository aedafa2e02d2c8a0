#!/usr/bin/env bash
# Compile times of the three linkage modes (make bench-compile; docs/benchmarks.md).
#
# Each row is one translation unit compiled (-c, no link) at -O2 with the flags the Makefile
# uses (-std=c11 -O2 -march=native -fopenmp), CPU time of the compiler (user + system; WALL=1
# for wall time), the median of REPEAT runs (3). The
# last column is the same unit in the tree before the redesign (BASE, /work/base by default;
# read only: its objects go to a temporary directory), where it exists there: its readme.c in
# the default mode is the number the issue calls today's.
#
#   bench/bench_compile.sh              every row
#   QUICK=1 bench/bench_compile.sh      without the three slow rows (implementation unit, tool)
#   REPEAT=5 BASE=/path/to/old/tree CC=clang bench/bench_compile.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CC=${CC:-cc}
CXX=${CXX:-g++}
REPEAT=${REPEAT:-3}
BASE=${BASE:-/work/base}
QUICK=${QUICK:-0}
FLAGS="-std=c11 -O2 -march=native -fopenmp"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median of REPEAT times of the command "$@": CPU seconds (user + system) of the compiler, which
# other work on a shared machine disturbs less than wall time (WALL=1: wall time instead)
time_median() {
  local ts=()
  for _ in $(seq "$REPEAT"); do
    local t
    if [ "${WALL:-0}" = 1 ]; then
      t=$( { TIMEFORMAT='%3R'; time "$@" >/dev/null 2>"$tmp/err"; } 2>&1 ) || { echo "failed: $*" >&2; cat "$tmp/err" >&2; echo error; return; }
    else
      t=$( { TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>"$tmp/err"; } 2>&1 ) || { echo "failed: $*" >&2; cat "$tmp/err" >&2; echo error; return; }
      t=$(echo "$t" | awk '{ printf "%.3f", $1 + $2 }')
    fi
    ts+=("$t")
  done
  printf '%s\n' "${ts[@]}" | sort -g | awk '{ a[NR] = $1 } END { printf "%.2f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# row LABEL MODE CMD-IN-THIS-TREE [CMD-IN-BASE]
row() {
  local label=$1 mode=$2 here=$3 base=${4:-}
  local a b="–"
  a=$(time_median bash -c "$here")
  if [ -n "$base" ] && [ -d "$BASE" ]; then b=$(cd "$BASE" && time_median bash -c "$base"); fi
  printf '| %s | %s | %s | %s |\n' "$label" "$mode" "$a" "$b"
}

O="-o $tmp/out.o"
OPT_OUTS="-DTFE_NO_AD -DTFE_NO_LINALG -DTFE_NO_IO -DTFE_ONLY_KIND_F64"
echo "Compile time, seconds (median of $REPEAT, -O2, $([ "${WALL:-0}" = 1 ] && echo wall || echo 'CPU: user + system')): $($CC --version | head -1); $(nproc) cores; $(date -u +%Y-%m-%d)"
echo
echo "| unit | mode | this tree | before (${BASE}) |"
echo "|---|---|---:|---:|"
row "examples/readme.c" "declarations (-DTFE_HEADER)" "$CC $FLAGS -DTFE_HEADER -Iinclude -c examples/readme.c $O" \
  "$CC $FLAGS -DTFE_EXTERN -Iinclude -c examples/readme.c $O"
row "examples/readme.c" "default (include and compile)" "$CC $FLAGS -Iinclude -c examples/readme.c $O" \
  "$CC $FLAGS -Iinclude -c examples/readme.c $O"
row "examples/readme.c" "default, opt-outs ($OPT_OUTS)" "$CC $FLAGS $OPT_OUTS -Iinclude -c examples/readme.c $O"
row "tests/test_cxx.cpp" "C++17 declarations ($CXX)" "$CXX -std=c++17 -O2 -Iinclude -c tests/test_cxx.cpp $O"
if [ "$QUICK" = 0 ]; then
  row "lib/tenferro.c" "implementation (make lib: -fPIC)" \
    "$CC $FLAGS -fPIC -fvisibility=hidden -Iinclude -c lib/tenferro.c $O" \
    "printf '#define TFE_IMPLEMENTATION\\n#include <tenferro.h>\\n' | $CC $FLAGS -fPIC -Iinclude -x c -c - $O"
  row "tools/tfe-einsum.c" "default" "$CC $FLAGS -Iinclude -c tools/tfe-einsum.c $O" \
    "$CC $FLAGS -Iinclude -c tools/tfe-einsum.c $O"
fi
echo
echo "Before the redesign, the declarations row is the old tree's TFE_EXTERN mode (it parsed every body) and"
echo "the implementation row a unit that defines TFE_IMPLEMENTATION and includes <tenferro.h> (extern inline)."
