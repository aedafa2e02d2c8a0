#!/bin/bash
# CUDA graphs of einsum plans on a lent GPU host (docs/benchmarks.md, session 11), one call:
# the conformance suite (test_graphs on the real driver), where the host time of a plan's steps
# goes without graphs (TFE_GPU_HOSTPROF=1, TFE_GPU_GRAPHS=0), every shared instance with graphs
# (tfe-einsum --device cuda:0) and the many-step ones without (TFE_GPU_GRAPHS=0) in the same
# call, then torch and JAX on the many-step instances. Binaries built on the build host:
#   here:  bench/graph_dev.sh build      (tfe-einsum, test_gpu_conformance into build-gpudev/,
#                                         against the libraries of `bench/gpu_bench.sh libs`)
#   there: OUT=... bench/graph_dev.sh run
# SHARED=dir of the shared bench data (default shared-bench/ in the tree).
set -u
cd "$(dirname "$0")/.."
B=build-gpudev
if [ "${1:-}" = build ]; then
  F="-std=c11 -O2 -march=x86-64-v3 -fopenmp -g -Iinclude -Itests -I$B/inc"
  L="-L$B -l:libcmocka.so.0 -l:libblis.so.4 -l:liblapacke.so.3 -lm -fopenmp -ldl -lpthread"
  gcc $F -O3 -o $B/tfe-einsum tools/tfe-einsum.c $L || exit 1
  gcc $F -o $B/test_gpu_conformance tests/test_gpu_conformance.c tests/test_gpu_conformance.companion__part.c $L || exit 1
  exit 0
fi
[ "${1:-}" = run ] || { echo "usage: bench/graph_dev.sh build | run" >&2; exit 2; }
if [ ! -x $B/tfe-einsum ] || [ ! -x $B/test_gpu_conformance ]; then # there: 16 cores, two units at once
  F="-std=c11 -O2 -march=native -fopenmp -g -Iinclude -Itests -I$B/inc"
  L="-L$B -l:libcmocka.so.0 -l:libblis.so.4 -l:liblapacke.so.3 -lm -fopenmp -ldl -lpthread"
  t0=$(date +%s)
  gcc $F -o $B/tfe-einsum tools/tfe-einsum.c $L &
  gcc $F -o $B/test_gpu_conformance tests/test_gpu_conformance.c tests/test_gpu_conformance.companion__part.c $L
  wait
  echo "compiled in $(( $(date +%s) - t0 )) s"
fi
export LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
out=${OUT:-$B/out}
mkdir -p "$out"
S=${SHARED:-shared-bench}
export XDG_CACHE_HOME=$PWD/$B/xdg-cache
MANY="lm_batch_likelihood_sentence_4_4d str_matrix_chain_multiplication_100 str_nw_mera_open_26 nary_matmul_chain_64"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; uptime;
  python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1;
  python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__)' 2>&1 | tail -1; } > "$out/env.txt" 2>&1
cat "$out/env.txt"
# 1. the conformance suite (test_graphs: real captures and replays, bit for bit against no graphs)
(time TFE_GPU_CASES=${CASES:-6} TFE_GPU_LA_CASES=2 TFE_GPU_REQUIRED=1 timeout 90 $B/test_gpu_conformance) > "$out/conformance.txt" 2>&1 ||
  echo "CONFORMANCE FAILED" >> "$out/conformance.txt"
tail -n 8 "$out/conformance.txt"
# One instance, f64 and c128, with graphs (inputs saved for the peers); without them too when
# the name is in the list $2.
run_instance() {
  local n=$1 nograph=$2 f=$S/instances/$1.json dt
  for dt in f64 c128; do
    mkdir -p "$IN/$n-$dt"
    timeout 40 $B/tfe-einsum --instance "$f" --dtype $dt --path instance:opt_flops --device cuda:0 --warmup --repeat ${REPS:-10} \
      --max-time ${MAXT:-0.5} --quiet --save-inputs "$IN/$n-$dt" >> "$out/tfe_instances.txt" 2>&1 ||
      echo "name=$n dtype=$dt FAILED" >> "$out/tfe_instances.txt"
    case " $nograph " in *" $n "*)
      TFE_GPU_GRAPHS=0 timeout 40 $B/tfe-einsum --instance "$f" --dtype $dt --path instance:opt_flops --device cuda:0 --warmup \
        --repeat ${REPS:-10} --max-time ${MAXT:-0.5} --quiet >> "$out/tfe_nograph.txt" 2>&1 ||
        echo "name=$n dtype=$dt FAILED" >> "$out/tfe_nograph.txt";;
    esac
  done
}
# The summary lines of both tables so far.
tables() {
  grep -o "name=[^ ]* dtype=[^ ]*\|median_ms=[^ ]*\|median_ms_transfers=[^ ]*\|checksum=[^ ]*" "$out/tfe_instances.txt" | paste -sd' ' |
    sed 's/ name=/\nname=/g'
  echo "-- graphs off"
  grep -o "name=[^ ]* dtype=[^ ]*\|median_ms=[^ ]*\|checksum=[^ ]*" "$out/tfe_nograph.txt" | paste -sd' ' | sed 's/ name=/\nname=/g'
}
# 2. the many-step instances with graphs and without, in the same call
IN=$B/inputs
: > "$out/tfe_instances.txt"
: > "$out/tfe_nograph.txt"
for n in $MANY; do run_instance $n "$MANY"; done
tables
# 3. the peers on the many-step instances (same inputs)
for lib in torch jax; do
  timeout ${PEER_TIMEOUT:-100} python3 bench/bench_gpu_instances.py --libs $lib --instances "$S/instances" --inputs "$IN" \
    --reps ${REPS:-10} --budget ${BUDGET:-0.5} ${PEER_NAMES:-$MANY} > "$out/peers_$lib.txt" 2>&1 || echo "peers exit $?" >> "$out/peers_$lib.txt"
  grep "name=" "$out/peers_$lib.txt" | cut -c1-200
done
# 4. the host's time per step without graphs
: > "$out/hostprof.txt"
[ "${SKIP_PROF:-0}" = 1 ] || for n in lm_batch_likelihood_sentence_4_4d str_matrix_chain_multiplication_100 str_nw_mera_open_26; do
  echo "== $n f64 graphs off" >> "$out/hostprof.txt"
  TFE_GPU_GRAPHS=0 TFE_GPU_HOSTPROF=1 timeout 30 $B/tfe-einsum --instance "$S/instances/$n.json" --dtype f64 \
    --path instance:opt_flops --device cuda:0 --warmup --repeat 20 --max-time 1 --quiet >> "$out/hostprof.txt" 2>&1
  echo "== $n f64 graphs on" >> "$out/hostprof.txt"
  TFE_GPU_HOSTPROF=1 timeout 30 $B/tfe-einsum --instance "$S/instances/$n.json" --dtype f64 \
    --path instance:opt_flops --device cuda:0 --warmup --repeat 20 --max-time 1 --quiet >> "$out/hostprof.txt" 2>&1
done
grep -v "^ " "$out/hostprof.txt" | grep -E "^==|hostprof (steps|slot|enter|cuLaunch|cuMemcpy|cuBLAS|cuGraph)|median_ms" | cut -c1-160
# 5. the other instances (graphs on; the two largest also without)
for f in "$S"/instances/*.json; do
  n=$(basename "$f" .json)
  case " $MANY " in *" $n "*) continue;; esac
  run_instance $n "${NOGRAPH_REST-tensornetwork_permutation_light_415 gm_queen5_5_3.wcsp}"
done
tables
date -u
