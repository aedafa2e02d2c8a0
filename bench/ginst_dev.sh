#!/bin/bash
# Issue 16, session 12: where the device time of the slow shared instances goes (TFE_GPU_DEVPROF)
# and their times with CUDA graphs, old and new binaries side by side, on a lent GPU host.
#   there: OUT=... bench/ginst_dev.sh [prof|time]   (binaries $B/tfe-einsum[-old] built if absent)
# SHARED=dir of the shared bench data; B=build dir holding the libraries of `bench/gpu_bench.sh libs`.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpudev}
S=${SHARED:-shared-bench}
out=${OUT:-$B/out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
export XDG_CACHE_HOME=$PWD/$B/xdg-cache
F="-std=c11 -O2 -march=native -fopenmp -g -Iinclude -Itests -I$B/inc"
L="-L$B -l:libcmocka.so.0 -l:libblis.so.4 -l:liblapacke.so.3 -lm -fopenmp -ldl -lpthread"
if [ ! -x $B/tfe-einsum ]; then
  t0=$(date +%s)
  if [ -f $B/tfe-einsum.o ]; then gcc -o $B/tfe-einsum $B/tfe-einsum.o $L; else gcc $F -o $B/tfe-einsum tools/tfe-einsum.c $L; fi
  echo "compiled in $(( $(date +%s) - t0 )) s"
fi
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; uptime;
  command -v nsys ncu compute-sanitizer; ls /usr/local/cuda*/bin 2>/dev/null | grep -i "nsys\|ncu" | head -3; } > "$out/env.txt" 2>&1
cat "$out/env.txt"
NAMES=${NAMES:-lm_batch_likelihood_sentence_4_4d str_nw_mera_open_26}
run1() { # bin name dtype [env...]
  local bin=$1 n=$2 dt=$3; shift 3
  env "$@" timeout 40 $bin --instance "$S/instances/$n.json" --dtype $dt --path instance:opt_flops --device cuda:0 --warmup \
    --repeat ${REPS:-20} --max-time ${MAXT:-1} --quiet 2>&1
}
if [ "${1:-prof}" = prof ]; then
  for n in $NAMES; do for dt in f64 c128; do
    run1 $B/tfe-einsum $n $dt TFE_GPU_DEVPROF=1 > "$out/devprof_${n}_$dt.txt"
    grep "devprof sum\|median_ms" "$out/devprof_${n}_$dt.txt" | sed "s/^/$n $dt: /" | cut -c1-200
  done; done
fi
# graphs on (and off), each binary, alternating, three rounds
for r in 1 2 3; do
  for n in $NAMES; do for dt in f64 c128; do
    for bin in $B/tfe-einsum-old $B/tfe-einsum; do
      [ -x $bin ] || continue
      for ex in ${EXTRA:-TFE_NONE=1}; do
        echo "round=$r bin=$(basename $bin) env=$ex $(run1 $bin $n $dt $ex | grep -o "name=[^ ]* dtype=[^ ]*\|median_ms=[^ ]*\|checksum=[^ ]*" | paste -sd' ')"
      done
    done
  done; done
done | tee "$out/times.txt"
date -u
