#!/bin/bash
# bench/ab.sh OLD_TREE [OUTDIR] — the same-run A/B of a change: builds the benchmark programs
# and the tool in an older checkout (OLD_TREE, e.g. `git worktree add /tmp/old <commit>`) and in
# this one, then runs each benchmark alternately old, new, old, new (1 thread unless said) and
# keeps every log in OUTDIR (default build/ab). Compare the tables side by side; the README of
# docs/benchmarks.md says which numbers each program prints.
set -euo pipefail
old=$(cd "$1" && pwd); new=$(cd "$(dirname "$0")/.." && pwd); out=${2:-$new/build/ab}
mkdir -p "$out"
progs="bench/bench_permute bench/bench_kernels bench/bench_contract bench/bench_linalg bench/bench_ad tfe-einsum"
for t in old new; do
  dir=$([ $t = old ] && echo "$old" || echo "$new")
  make -C "$dir" BUILD="$out/build-$t" $(for p in $progs; do echo "$out/build-$t/$p"; done) >/dev/null
done
pat=$new/../shared/bench/permutation_patterns.json
inst=$new/data/str_nw_mera_open_26.json
run() { # name, command (with @ for the build folder)
  for r in 1 2; do for t in old new; do
    echo "== $1 $t run $r" >> "$out/$1.txt"
    ( cd "$new" && eval "${2//@/$out/build-$t}" ) >> "$out/$1.txt" 2>&1
  done; done
}
export OMP_WAIT_POLICY=passive
run permute "OMP_NUM_THREADS=1 @/bench/bench_permute $pat --reps 5 --no-numpy"
run kernels "OMP_NUM_THREADS=1 @/bench/bench_kernels --reps 7 --set transpose"
run contract "OMP_NUM_THREADS=1 @/bench/bench_contract 1"
run linalg "OMP_NUM_THREADS=1 @/bench/bench_linalg 512 5"
run ad "OMP_NUM_THREADS=1 @/bench/bench_ad 96 5"
run einsum "@/tfe-einsum --instance $inst --path auto --repeat 5 --threads 1"
echo "logs in $out"
