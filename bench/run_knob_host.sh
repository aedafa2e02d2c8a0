#!/bin/bash
# bench/run_knob_host.sh — in-process A/B of kernel knobs on another x86-64 Linux host with gcc
# (the lent GPU host's CPU): builds bench_permute_sweep and bench_permute there (-march=native,
# no BLIS needed), then, pinned to one core, runs for each "knob=value" in KNOBS (";" between;
# several "--ab k=v" in one entry combine) the sweeps of SWEEPS (";" between) and the cases of
# CASES (" " between, ES:DIMS:PERM) with --ab, and the ten patterns (PATTERNS, a json) once.
# Output in $OUT: cpu.txt, sweep_<n>_<m>.txt, cases.txt, permute.txt.
set -u
out=${OUT:-.}; b=/tmp/tfe_knob; mkdir -p $b "$out"
(nproc; grep -m1 "model name" /proc/cpuinfo; grep -o -m1 avx512f /proc/cpuinfo; uptime) > "$out/cpu.txt" 2>&1
gcc -std=c11 -O3 -march=native -fopenmp -Iinclude -o $b/sweep bench/bench_permute_sweep.c -lm -ldl &
gcc -std=c11 -O3 -march=native -fopenmp -Iinclude -o $b/permute bench/bench_permute.c -lm &
wait
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
one="taskset -c 2"; command -v taskset > /dev/null || one=""
IFS=';' read -r -a knobs <<< "${KNOBS:?KNOBS: knob=value entries, ; between}"
IFS=';' read -r -a sweeps <<< "${SWEEPS:---seed 11 --cases 40}"
for i in "${!knobs[@]}"; do
  for j in "${!sweeps[@]}"; do
    timeout 300 $one $b/sweep ${sweeps[$j]} --reps 3 ${knobs[$i]} > "$out/sweep_${i}_$j.txt" 2>&1
  done
  for c in ${CASES:-}; do
    echo "== ${knobs[$i]} $c"; timeout 60 $one $b/sweep --case "$c" --reps 5 ${knobs[$i]} | grep "^case\|^ab"
  done >> "$out/cases.txt" 2>&1
done
[ -f "${PATTERNS:-}" ] && timeout 300 $one $b/permute "$PATTERNS" --reps 3 --no-numpy > "$out/permute.txt" 2>&1
tail -n 2 "$out"/sweep_*.txt
