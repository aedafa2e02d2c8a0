#!/bin/bash
# The GPU backend's suites and benchmarks on a lent GPU host that lacks BLIS, LAPACKE and
# cmocka (docs/gpu.md): build here, carry the folder, run there.
#   bench/gpu_dev.sh build      -> build-gpudev/: test_gpu_loader, test_gpu_conformance,
#                                  bench_gpu, bench_gpu_ew (-O2 -march=x86-64-v3, the units
#                                  `make test-gpu` builds) and the shared libraries they load;
#                                  LINALG=1: bench_gpu_linalg too
#   build-gpudev/run.sh linalg   -> conformance (TFE_GPU_CASES, TFE_GPU_LA_CASES), loader,
#                                  bench_linalg.txt, bench_linalg_peer.txt (torch), memcheck
#   build-gpudev/run.sh         -> in $OUT: env.txt, loader.txt, conformance.txt,
#                                  bench_ew_cold.txt, bench_ew_warm.txt, bench_gpu.txt,
#                                  memcheck.txt (compute-sanitizer, when installed)
set -e
if [ "${1:-}" = build ]; then
  mkdir -p build-gpudev
  F="-std=c11 -O2 -march=x86-64-v3 -fopenmp -g -Iinclude -Itests"
  L="-lcmocka -L/usr/lib/x86_64-linux-gnu/blis-openmp -lblis -llapacke -lm -fopenmp -ldl -lpthread"
  CC=${CC:-gcc}
  $CC $F -o build-gpudev/test_gpu_loader tests/test_gpu_loader.c tests/test_gpu_loader.companion__part.c $L &
  $CC $F -o build-gpudev/test_gpu_conformance tests/test_gpu_conformance.c tests/test_gpu_conformance.companion__part.c $L
  wait
  if [ "${LINALG:-0}" = 1 ]; then $CC $F -o build-gpudev/bench_gpu_linalg bench/bench_gpu_linalg.c $L; fi
  if [ "${BENCH_HERE:-0}" = 1 ]; then
    $CC $F -o build-gpudev/bench_gpu_ew bench/bench_gpu_ew.c $L &
    $CC $F -o build-gpudev/bench_gpu bench/bench_gpu.c $L
    wait
  fi
  for l in libcmocka.so.0 blis-openmp/libblis.so.4 liblapacke.so.3 libblas.so.3 liblapack.so.3 libtmglib.so.3 \
           libgfortran.so.5 libquadmath.so.0 libgomp.so.1; do
    cp -L /usr/lib/x86_64-linux-gnu/$l build-gpudev/ 2>/dev/null || cp -L /lib/x86_64-linux-gnu/$l build-gpudev/
  done
  mkdir -p build-gpudev/inc
  cp /usr/include/cmocka.h /usr/include/lapacke*.h /usr/include/lapack.h build-gpudev/inc/ 2>/dev/null ||
    cp /usr/include/x86_64-linux-gnu/lapacke*.h build-gpudev/inc/
  cp "$0" build-gpudev/gpu_dev.sh
  printf '#!/bin/bash\nexec bash "$(dirname "$0")/gpu_dev.sh" run "$@"\n' > build-gpudev/run.sh
  chmod +x build-gpudev/run.sh
  exit 0
fi
# the suites and benchmarks are compiled there when not carried (the lent host's 16 cores),
# from the tree that holds build-gpudev/ (include/, tests/, bench/)
if [ ! -x "$(dirname "$0")/bench_gpu_ew" ] && [ -f "$(dirname "$0")/../bench/bench_gpu_ew.c" ] && [ "${2:-all}" != linalg ]; then
  (cd "$(dirname "$0")/.." && B=build-gpudev &&
   F="-std=c11 -O2 -march=native -fopenmp -g -Iinclude -Itests -I$B/inc" &&
   L="-L$B -l:libcmocka.so.0 -l:libblis.so.4 -l:liblapacke.so.3 -lm -fopenmp -ldl -lpthread" &&
   { gcc $F -o $B/bench_gpu_ew bench/bench_gpu_ew.c $L & gcc $F -o $B/bench_gpu bench/bench_gpu.c $L &
     gcc $F -o $B/test_gpu_loader tests/test_gpu_loader.c tests/test_gpu_loader.companion__part.c $L &
     gcc $F -o $B/test_gpu_emulated tests/test_gpu_emulated.c tests/test_gpu_emulated.companion__part.c $L &
     gcc $F -o $B/test_gpu_conformance tests/test_gpu_conformance.c tests/test_gpu_conformance.companion__part.c $L; wait; }
  ) 2>&1 | tail -20
fi
set +e
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
out=${OUT:-$PWD}
what=${2:-all}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; uname -a; nproc;
  python3 -c 'import torch, sys; print("torch", torch.__version__, torch.version.cuda)' 2>&1 | tail -1;
  python3 -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -1;
  python3 -c 'import jax; print("jax", jax.__version__)' 2>&1 | tail -1; } > "$out/env.txt" 2>&1
export XDG_CACHE_HOME=$PWD/xdg-cache
rm -rf "$XDG_CACHE_HOME"
if [ "$what" = all ] || [ "$what" = test ]; then
  (time ./test_gpu_loader) > "$out/loader.txt" 2>&1 || echo "LOADER FAILED" >> "$out/loader.txt"
  (time TFE_GPU_CASES=${CASES:-400} TFE_GPU_REQUIRED=1 ./test_gpu_conformance) > "$out/conformance.txt" 2>&1 || echo "CONFORMANCE FAILED" >> "$out/conformance.txt"
  [ -x ./test_gpu_emulated ] && { (time TFE_GPU_CASES=${CASES:-400} ./test_gpu_emulated) > "$out/emulated.txt" 2>&1 || echo "EMULATED FAILED" >> "$out/emulated.txt"; }
  tail -n 3 "$out/loader.txt" "$out/conformance.txt" "$out/emulated.txt"
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  rm -rf "$XDG_CACHE_HOME"
  ./bench_gpu_ew ${N:-4096} ${REPS:-10} > "$out/bench_ew_cold.txt" 2>&1 || echo "BENCH FAILED" >> "$out/bench_ew_cold.txt"
  ./bench_gpu_ew 1024 3 > "$out/bench_ew_warm.txt" 2>&1 || echo "BENCH FAILED" >> "$out/bench_ew_warm.txt"
  ls -la "$XDG_CACHE_HOME/tenferro" >> "$out/bench_ew_warm.txt" 2>&1
  ./bench_gpu ${N:-4096} ${REPS:-10} > "$out/bench_gpu.txt" 2>&1 || echo "BENCH FAILED" >> "$out/bench_gpu.txt"
  cat "$out/bench_ew_cold.txt"
fi
if [ "$what" = linalg ]; then
  (time TFE_GPU_CASES=${CASES:-40} TFE_GPU_LA_CASES=${LA_CASES:-12} TFE_GPU_REQUIRED=1 ./test_gpu_conformance) > "$out/conformance.txt" 2>&1 || echo "CONFORMANCE FAILED" >> "$out/conformance.txt"
  ./test_gpu_loader > "$out/loader.txt" 2>&1 || echo "LOADER FAILED" >> "$out/loader.txt"
  tail -n 4 "$out/loader.txt" "$out/conformance.txt"
  timeout ${BENCH_TIMEOUT:-150} ./bench_gpu_linalg ${N:-4096} ${REPS:-3} > "$out/bench_linalg.txt" 2>&1 || echo "BENCH exit $?" >> "$out/bench_linalg.txt"
  cat "$out/bench_linalg.txt"
  timeout ${PEER_TIMEOUT:-90} python3 ../bench/bench_gpu_linalg_peer.py ${N:-4096} ${REPS:-3} > "$out/bench_linalg_peer.txt" 2>&1 || echo "PEER exit $?" >> "$out/bench_linalg_peer.txt"
  cat "$out/bench_linalg_peer.txt"
  what=memcheck MC_CASES=${MC_CASES:-3} MC_LA=${MC_LA:-2}
fi
if [ "$what" = all ] || [ "$what" = memcheck ]; then
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  if [ -n "$CS" ]; then
    TFE_GPU_CASES=${MC_CASES:-20} TFE_GPU_LA_CASES=${MC_LA:-3} TFE_GPU_REQUIRED=1 timeout ${MC_TIMEOUT:-180} "$CS" --tool memcheck --leak-check full \
      ./test_gpu_conformance > "$out/memcheck.txt" 2>&1 || echo "memcheck exit $?" >> "$out/memcheck.txt"
  else echo "no compute-sanitizer" > "$out/memcheck.txt"; fi
  tail -5 "$out/memcheck.txt"
fi
