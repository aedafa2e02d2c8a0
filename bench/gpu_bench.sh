#!/bin/bash
# The GPU benchmarks of issue 16 on a lent GPU host (docs/benchmarks.md, session 10): the shared
# einsum instances through `tfe-einsum --device cuda:0` against torch and JAX
# (bench/bench_gpu_instances.py), the shared permutation patterns against the device-to-device
# copy (bench/bench_gpu_perm.c), and the conformance suite of the backend.
#   bench/gpu_bench.sh libs         here: the shared libraries and headers the lent host lacks
#                                   (BLIS, LAPACKE, cmocka) into build-gpudev/ (nothing compiled)
#   bench/gpu_bench.sh run [what]   there, from the tree's root: compiles what is missing (16
#                                   cores: tfe-einsum, bench_gpu_perm, bench_gpu, the conformance
#                                   suite; gcc -O2/-O3 -march=native), then runs; what = all | test |
#                                   perm | inst | prof | gemm (default all); logs under $OUT
# SHARED=dir of the shared bench data (default ../shared/bench, else shared-bench/ in the tree).
set -e
cd "$(dirname "$0")/.."
B=build-gpudev
if [ "${1:-}" = libs ]; then
  mkdir -p $B/inc
  for l in libcmocka.so.0 blis-openmp/libblis.so.4 liblapacke.so.3 libblas.so.3 liblapack.so.3 libtmglib.so.3 \
           libgfortran.so.5 libquadmath.so.0 libgomp.so.1; do
    cp -L /usr/lib/x86_64-linux-gnu/$l $B/ 2>/dev/null || cp -L /lib/x86_64-linux-gnu/$l $B/
  done
  cp /usr/include/cmocka.h /usr/include/lapacke*.h /usr/include/lapack.h $B/inc/ 2>/dev/null ||
    cp /usr/include/x86_64-linux-gnu/lapacke*.h $B/inc/
  exit 0
fi
[ "${1:-}" = run ] || { echo "usage: bench/gpu_bench.sh libs | run [all|test|perm|inst|prof|gemm]" >&2; exit 2; }
what=${2:-all}
case "$what" in all|test|perm|inst|prof|gemm) ;; *) echo "gpu_bench.sh: unknown part '$what' (all, test, perm, inst, prof, gemm)" >&2; exit 2;; esac
if [ ! -x $B/tfe-einsum ]; then
  F="-std=c11 -O2 -march=native -fopenmp -g -Iinclude -Itests -I$B/inc"
  L="-L$B -l:libcmocka.so.0 -l:libblis.so.4 -l:liblapacke.so.3 -lm -fopenmp -ldl -lpthread"
  t0=$(date +%s)
  gcc $F -O3 -o $B/tfe-einsum tools/tfe-einsum.c $L & gcc $F -O3 -o $B/bench_gpu_perm bench/bench_gpu_perm.c $L &
  [ "${2:-}" = gemm ] && gcc $F -o $B/bench_gpu bench/bench_gpu.c $L &
  gcc $F -o $B/test_gpu_conformance tests/test_gpu_conformance.c tests/test_gpu_conformance.companion__part.c $L
  wait
  echo "compiled in $(( $(date +%s) - t0 )) s"
fi
set +e
export LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
out=${OUT:-$B/out}
mkdir -p "$out"
S=${SHARED:-../shared/bench}
[ -d "$S" ] || S=shared-bench
export XDG_CACHE_HOME=$PWD/$B/xdg-cache
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; uname -a; nproc; uptime;
  python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1;
  python3 -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -1;
  python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())' 2>&1 | tail -1; } > "$out/env.txt" 2>&1
if [ "$what" = all ] || [ "$what" = perm ]; then
  $B/bench_gpu_perm "$S/permutation_patterns.json" ${REPS:-10} > "$out/perm.txt" 2>&1 || echo "PERM exit $?" >> "$out/perm.txt"
  cat "$out/perm.txt"
fi
if [ "$what" = all ] || [ "$what" = inst ]; then
  IN=$B/inputs
  : > "$out/tfe_instances.txt"
  for f in "$S"/instances/*.json; do
    n=$(basename "$f" .json)
    for dt in ${DTYPES:-f64 c128}; do
      mkdir -p "$IN/$n-$dt"
      $B/tfe-einsum --instance "$f" --dtype $dt --path instance:opt_flops --device cuda:0 --warmup --repeat ${REPS:-10} \
        --max-time ${MAXT:-1} --quiet --save-inputs "$IN/$n-$dt" >> "$out/tfe_instances.txt" 2>&1 || echo "name=$n dtype=$dt FAILED" >> "$out/tfe_instances.txt"
    done
  done
  cat "$out/tfe_instances.txt"
  for lib in torch jax; do
    timeout ${PEER_TIMEOUT:-150} python3 bench/bench_gpu_instances.py --libs $lib --instances "$S/instances" --inputs "$IN" \
      --reps ${REPS:-10} --budget ${BUDGET:-0.5} $PEER_NAMES > "$out/peers_$lib.txt" 2>&1 || echo "peers exit $?" >> "$out/peers_$lib.txt"
    cat "$out/peers_$lib.txt"
  done
fi
if [ "$what" = all ] || [ "$what" = test ]; then
  (time TFE_GPU_CASES=${CASES:-100} TFE_GPU_REQUIRED=1 timeout ${TEST_TIMEOUT:-120} $B/test_gpu_conformance) > "$out/conformance.txt" 2>&1 || echo "CONFORMANCE FAILED" >> "$out/conformance.txt"
  tail -n 25 "$out/conformance.txt"
fi
if [ "$what" = gemm ]; then
  $B/bench_gpu 4096 ${REPS:-10} > "$out/gemm.txt" 2>&1 || echo "GEMM exit $?" >> "$out/gemm.txt"
  cat "$out/gemm.txt"
fi
if [ "$what" = all ] || [ "$what" = prof ]; then
  : > "$out/profile.txt"
  for n in ${PROF:-str_matrix_chain_multiplication_100 lm_batch_likelihood_sentence_4_4d str_nw_mera_open_26 tensornetwork_permutation_light_415 gm_queen5_5_3.wcsp}; do
    echo "== $n" >> "$out/profile.txt"
    $B/tfe-einsum --instance "$S/instances/$n.json" --path instance:opt_flops --device cuda:0 --warmup --repeat 3 --quiet \
      --profile-layouts >> "$out/profile.txt" 2>&1
  done
  head -c 20000 "$out/profile.txt" | head -120
fi
