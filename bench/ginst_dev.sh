#!/bin/bash
# Issue 16, session 12: where the device time of the slow shared instances goes (TFE_GPU_DEVPROF)
# and their times with CUDA graphs, old and new binaries side by side, on a lent GPU host.
#   there: OUT=... bench/ginst_dev.sh [conf] [prof] [acc] [peers]
# Builds $B/tfe-einsum (and $B/tfe-einsum-old from the tree OLD=old/ when present) if absent, then:
#   conf   test_gpu_conformance with the small-GEMM kernel on and off (TFE_GPU_SMALL_GEMM)
#   prof   TFE_GPU_DEVPROF=1 per instance and dtype (devprof_*.txt: one line per device call)
#   acc    c128 results of each EXTRA setting against the default and the CPU (numpy on the host)
#   always ROUNDS rounds of old, new, and new with each EXTRA setting (VAR=1 or VAR=1,VAR2=1), graphs on
#   peers  torch and JAX (bench/bench_gpu_instances.py) on the inputs the new binary saves
# NAMES=instances (default lm_batch and mera); SHARED=dir of the shared bench data (default
# shared-bench/); B=build dir holding the libraries of `bench/gpu_bench.sh libs`.
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
t0=$(date +%s)
if [ -d "${OLD:-old}/include" ] && [ ! -x $B/tfe-einsum-old ]; then # the old tree (OLD=dir): the baseline binary
  gcc ${F/-Iinclude/-I${OLD:-old}/include} -o $B/tfe-einsum-old ${OLD:-old}/tools/tfe-einsum.c $L &
fi
case " $* " in *" conf "*) [ -x $B/test_gpu_conformance ] ||
  gcc $F -o $B/test_gpu_conformance tests/test_gpu_conformance.c tests/test_gpu_conformance.companion__part.c $L &;; esac
[ -x $B/tfe-einsum ] || gcc $F -o $B/tfe-einsum tools/tfe-einsum.c $L
wait
echo "compiled in $(( $(date +%s) - t0 )) s"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; uptime;
  command -v nsys ncu compute-sanitizer; ls /usr/local/cuda*/bin 2>/dev/null | grep -i "nsys\|ncu" | head -3; } > "$out/env.txt" 2>&1
cat "$out/env.txt"
NAMES=${NAMES:-lm_batch_likelihood_sentence_4_4d str_nw_mera_open_26}
run1() { # bin name dtype [env...]
  local bin=$1 n=$2 dt=$3; shift 3
  env "$@" timeout 40 $bin --instance "$S/instances/$n.json" --dtype $dt --path instance:opt_flops --device cuda:0 --warmup \
    --repeat ${REPS:-20} --max-time ${MAXT:-1} --quiet 2>&1
}
case " $* " in *" conf "*) # the conformance suite: small GEMMs on (default) and off (cuBLAS for every GEMM)
  for sg in 1 0; do
    (time TFE_GPU_SMALL_GEMM=$sg TFE_GPU_CASES=${CASES:-24} TFE_GPU_LA_CASES=2 TFE_GPU_REQUIRED=1 timeout 120 \
      $B/test_gpu_conformance) > "$out/conformance_sg$sg.txt" 2>&1 || echo "CONFORMANCE FAILED" >> "$out/conformance_sg$sg.txt"
    echo "conformance TFE_GPU_SMALL_GEMM=$sg:"; grep -E "PASSED|FAILED|real" "$out/conformance_sg$sg.txt" | head -8
  done;;
esac
case " $* " in *" prof "*)
  for n in $NAMES; do for dt in f64 c128; do
    run1 $B/tfe-einsum $n $dt TFE_GPU_DEVPROF=1 > "$out/devprof_${n}_$dt.txt"
    grep "devprof sum\|median_ms" "$out/devprof_${n}_$dt.txt" | sed "s/^/$n $dt: /" | cut -c1-200
  done; done;;
esac
case " $* " in *" acc "*) # results of the GEMM settings against the default and the CPU (c128)
  for n in $NAMES; do
    dt=c128
    a() { timeout 60 $B/tfe-einsum --instance "$S/instances/$n.json" --dtype $dt --path instance:opt_flops "$@" --quiet 2>&1 | cut -c1-150; }
    a --device cpu -o $out/acc_${n}_cpu.npy
    a --device cuda:0 -o $out/acc_${n}_def.npy
    for ex in ${EXTRA:-}; do env ${ex//,/ } $B/tfe-einsum --instance "$S/instances/$n.json" --dtype $dt --path instance:opt_flops \
      --device cuda:0 -o $out/acc_${n}_${ex//[=,]/_}.npy --quiet > /dev/null 2>&1; done
  done
  python3 - "$out" <<'PY'
import glob, sys, numpy as np
d = sys.argv[1]
for f in sorted(glob.glob(d + "/acc_*_cpu.npy")):
    ref = np.load(f); base = f[:-8]
    for g in sorted(glob.glob(base + "_*.npy")):
        x = np.load(g)
        print("acc", g.split("/")[-1], "max|x-cpu|/max|cpu| = %.3e" % (np.abs(x - ref).max() / np.abs(ref).max()),
              "max rel elem = %.3e" % (np.abs(x - ref) / np.maximum(np.abs(ref), 1e-300)).max())
PY
  rm -f $out/acc_*.npy;;
esac
# graphs on, each binary (and each EXTRA setting of the new one), alternating, ROUNDS rounds
for r in $(seq ${ROUNDS:-3}); do
  for n in $NAMES; do for dt in f64 c128; do
    for bin in $B/tfe-einsum-old $B/tfe-einsum; do
      [ -x $bin ] || continue
      for ex in TFE_NONE=1 ${EXTRA:-}; do
        case "$ex,$bin,$dt" in *ZGEMM3M*old*|*ZGEMM3M*f64) continue;; esac
        echo "round=$r bin=$(basename $bin) env=$ex $(run1 $bin $n $dt ${ex//,/ } | grep -o "name=[^ ]* dtype=[^ ]*\|median_ms=[^ ]*\|checksum=[^ ]*" | paste -sd' ')"
      done
    done
  done; done
done | tee "$out/times.txt"
case " $* " in *" peers "*) # torch and JAX on the same inputs (saved by the new binary)
  IN=$B/inputs
  for n in $NAMES; do for dt in f64 c128; do
    mkdir -p "$IN/$n-$dt"
    timeout 40 $B/tfe-einsum --instance "$S/instances/$n.json" --dtype $dt --path instance:opt_flops --device cuda:0 \
      --save-inputs "$IN/$n-$dt" --quiet > /dev/null 2>&1
  done; done
  for lib in torch jax; do
    timeout ${PEER_TIMEOUT:-120} python3 bench/bench_gpu_instances.py --libs $lib --instances "$S/instances" --inputs "$IN" \
      --reps ${REPS:-20} --budget 1 $NAMES > "$out/peers_$lib.txt" 2>&1 || echo "peers exit $?" >> "$out/peers_$lib.txt"
    grep "name=\|version\|jax\|torch" "$out/peers_$lib.txt" | cut -c1-200 | head -12
  done;;
esac
date -u
