#!/bin/bash
# bench/run_chain_host.sh KIT — issue 18's chain and permutation tables on another x86-64 Linux
# host with gcc (the lent GPU host's CPUs), in one short run. KIT is a folder with libblis.so.4
# (the build host's /usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4), permutation_patterns.json
# (../shared/bench/'s), old_include/ (the
# include/ folder of the tree to compare against, e.g. from `git worktree add`) and optionally
# old_bench/ (that tree's bench/ sources, for the permutation benches). Builds there:
#   chain_new  bench/bench_chain.c, -march=native          (AVX-512 where the host has it)
#   chain_old                the same of KIT's tree
#   chain_new3 / chain_old3  the same at -march=x86-64-v3  (the AVX2 path, this tree / KIT's)
#   permute, sweep (permute_old, sweep_old)  bench_permute, bench_permute_sweep (-march=native)
# then runs, in $OUT (or KIT): chain_ab.txt (old3, new3, old, new, alternately, twice), chain_naive.txt
# (contract_naive_work 512 / 128 / 0 on the smallest bonds), chain_peers.txt
# (torch eager and jax.jit in the same run: bench_chain --peers), permute.txt (old, new, old, new),
# sweep.txt (old and new alternating: seeds 0 and 7, all sizes; seed 0, 1- and 2-byte kinds), cpu.txt.
# Everything 1-thread runs pinned to one core (taskset), the 2-thread columns to two. PARTS (default
# "chain naive permute peers sweep") picks what runs, so that two calls can share the work; ROUNDS
# (2) the alternations of the chain and the patterns; SWEEPS the sweep's argument sets (";" between).
# Part "cases" runs the new sweep on the lines of KIT/ab_cases.txt with CASE_ARGS (cases.txt).
# Part "hptt" (KIT/libpeer_hptt.so, or KIT/hptt: HPTT's src/ and include/ to build it there) runs
# the new sweep with --peer on HPTT_SWEEPS and on KIT/pattern_cases.txt (lines "id ES:DIMS:PERM"),
# into hptt.txt.
kit=$(cd "${1:?usage: $0 KIT [PARTS]}" && pwd); out=${OUT:-$kit}
parts=${2:-chain naive permute peers sweep} # a subset keeps one call within a time limit
has() { case " $parts " in *" $1 "*) return 0;; esac; return 1; }
rounds=$(seq ${ROUNDS:-2}) # ROUNDS=1: one old/new alternation of the chain and the patterns
IFS=';' read -r -a sweeps <<< "${SWEEPS:---seed 0;--seed 7;--seed 0 --sizes 1,2 --cases 16}"
export LD_LIBRARY_PATH=$kit:${LD_LIBRARY_PATH:-} OMP_WAIT_POLICY=passive
(nproc; grep -m1 "model name" /proc/cpuinfo; grep -o -m1 avx512f /proc/cpuinfo; uptime) > "$out/cpu.txt" 2>&1
cat "$out/cpu.txt"
L="-L$kit -l:libblis.so.4 -Wl,-rpath,$kit -lm"
b=/tmp/tfe_host; mkdir -p $b
gcc -std=c11 -O3 -march=native -fopenmp -Iinclude -o $b/chain_new bench/bench_chain.c $L &
gcc -std=c11 -O3 -march=x86-64-v3 -fopenmp -Iinclude -o $b/chain_new3 bench/bench_chain.c $L &
ob=bench; [ -f "$kit/old_bench/bench_chain.c" ] && ob="$kit/old_bench" # (its knob list matches its headers)
gcc -std=c11 -O3 -march=x86-64-v3 -fopenmp -I"$kit/old_include" -o $b/chain_old3 $ob/bench_chain.c $L &
gcc -std=c11 -O3 -march=native -fopenmp -I"$kit/old_include" -o $b/chain_old $ob/bench_chain.c $L &
for v in "" _old; do # (KIT/old_bench: the old tree's bench sources, whose knob lists match its headers)
  inc=include src=bench; [ -z "$v" ] || { inc="$kit/old_include"; [ -d "$kit/old_bench" ] && src="$kit/old_bench"; }
  gcc -std=c11 -O3 -march=native -fopenmp -I"$inc" -o $b/permute$v $src/bench_permute.c -lm &
  gcc -std=c11 -O3 -march=native -fopenmp -I"$inc" -o $b/sweep$v $src/bench_permute_sweep.c -lm -ldl &
done
hp=$kit/libpeer_hptt.so # (KIT/libpeer_hptt.so: one built beforehand, e.g. HPTT_MARCH=x86-64-v3)
if has hptt && [ ! -f "$hp" ]; then hp=$b/libpeer_hptt.so; bench/peer_hptt.sh "$kit/hptt" $hp > "$out/hptt.txt" 2>&1 & fi
wait
ls $b
one="taskset -c 2"; two="taskset -c 2,3"
command -v taskset >/dev/null || { one=""; two=""; }
pat=$kit/permutation_patterns.json; [ -f "$pat" ] || pat=../shared/bench/permutation_patterns.json
dims=2,4,8,10,16,24,32,40,48,60,64,96,128
has chain && for r in $rounds; do for t in old3 new3 old new; do
  echo "== chain_$t run $r"; OMP_NUM_THREADS=1 timeout 40 $one $b/chain_$t --reps 11 --dims $dims
done; done > "$out/chain_ab.txt" 2>&1
# part "cases": the sweep on given cases (CASES, default KIT/ab_cases.txt: lines "ES:DIMS:PERM"),
# each with CASE_ARGS (e.g. "--tune K=a --ab K=b": an in-process A/B), into cases.txt
has cases && while read -r c; do
  OMP_NUM_THREADS=1 timeout 60 $one $b/sweep --case "$c" --reps ${CASE_REPS:-5} ${CASE_ARGS:-} | grep "^case\|^ab"
done < "${CASES:-$kit/ab_cases.txt}" > "$out/cases.txt" 2>&1
# the naive engine's threshold on the smallest steps (contract_naive_work: 512 default)
has naive && for r in 1 2; do for w in 512 128 0; do
  echo "== contract_naive_work $w run $r"; OMP_NUM_THREADS=1 timeout 10 $one $b/chain_new --reps 21 --dims 3,4,5,6,8 --tune contract_naive_work $w
done; done > "$out/chain_naive.txt" 2>&1
has permute && for r in $rounds; do for v in _old ""; do
  echo "== permute$v run $r"; OMP_NUM_THREADS=1 timeout 60 $two $b/permute$v "$pat" --reps 5 --threads2 --no-numpy
done; done > "$out/permute.txt" 2>&1
# peers: the host's torch and jax (CPU platform; XLA's own flags left at their defaults)
has peers && JAX_PLATFORMS=cpu XLA_FLAGS= OMP_NUM_THREADS=1 timeout 75 $one $b/chain_new --reps 11 --dims 4,8,10,16,24,32,48,60,96 --peers --python python3 > "$out/chain_peers.txt" 2>&1
has sweep && for a in "${sweeps[@]}"; do for v in _old ""; do
  echo "== sweep$v $a"; OMP_NUM_THREADS=1 timeout 40 $one $b/sweep$v --cases 24 --reps 3 $a
done; done > "$out/sweep.txt" 2>&1
if has hptt; then
  IFS=';' read -r -a hs <<< "${HPTT_SWEEPS:---seed 0 --sizes 4,8,16 --cases 40;--seed 36 --sizes 4,8,16 --cases 40}"
  for a in "${hs[@]}"; do
    echo "== sweep+hptt $a"; OMP_NUM_THREADS=1 timeout 120 $one $b/sweep --reps 3 --peer $hp $a
  done >> "$out/hptt.txt" 2>&1
  [ -f "$kit/pattern_cases.txt" ] && while read -r id c; do
    echo "== pattern $id"; OMP_NUM_THREADS=1 timeout 60 $one $b/sweep --reps 5 --peer $hp --case "$c" | grep "^case"
  done < "$kit/pattern_cases.txt" >> "$out/hptt.txt" 2>&1
  grep -h "^==\|cases: median\|hptt ran\|^case" "$out/hptt.txt" | grep -v "^case [1-9]" | tail -n 40
fi
tail -n 20 "$out"/chain_ab.txt "$out"/chain_peers.txt 2>/dev/null
grep -h "^==\|cases: median" "$out/sweep.txt" 2>/dev/null
