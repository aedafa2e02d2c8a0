#!/bin/bash
# The device side of the runtime (pool, pinned staging, runtime CUDA streams, plan cache) on a
# lent GPU host that lacks BLIS, LAPACKE and cmocka: run from the tree root with the libraries
# of bench/gpu_dev.sh in $LIBS (default build-gpudev/); builds there, results in $OUT:
#   env.txt loader.txt conformance.txt emulated.txt bench_gpu_rt.txt memcheck.txt
set +e
LIBS=${LIBS:-build-gpudev}
out=${OUT:-$PWD}
B=build-rtdev
mkdir -p $B
F="-std=c11 -O2 -march=native -fopenmp -g -Iinclude -Itests -I$LIBS/inc"
L="-L$LIBS -l:libcmocka.so.0 -l:libblis.so.4 -l:liblapacke.so.3 -lm -fopenmp -ldl -lpthread -Wl,-rpath,$PWD/$LIBS"
export LD_LIBRARY_PATH=$PWD/$LIBS:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
gcc $F -o $B/test_gpu_loader tests/test_gpu_loader.c tests/test_gpu_loader.companion__part.c $L &
gcc $F -o $B/test_gpu_conformance tests/test_gpu_conformance.c tests/test_gpu_conformance.companion__part.c $L &
gcc $F -o $B/test_gpu_emulated tests/test_gpu_emulated.c tests/test_gpu_emulated.companion__part.c $L &
gcc $F -o $B/bench_gpu_rt bench/bench_gpu_rt.c $L &
wait
echo "build $(( $(date +%s) - t0 )) s"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; uname -a; nproc; uptime; } > "$out/env.txt" 2>&1
export XDG_CACHE_HOME=$PWD/$B/xdg-cache
(time $B/test_gpu_loader) > "$out/loader.txt" 2>&1 || echo "LOADER FAILED" >> "$out/loader.txt"
(time TFE_GPU_CASES=${CASES:-300} TFE_GPU_REQUIRED=1 $B/test_gpu_conformance) > "$out/conformance.txt" 2>&1 || echo "CONFORMANCE FAILED" >> "$out/conformance.txt"
(time TFE_GPU_CASES=${CASES:-300} $B/test_gpu_emulated) > "$out/emulated.txt" 2>&1 || echo "EMULATED FAILED" >> "$out/emulated.txt"
tail -n 4 "$out/loader.txt" "$out/conformance.txt" "$out/emulated.txt"
$B/bench_gpu_rt ${REPS:-15} > "$out/bench_gpu_rt.txt" 2>&1 || echo "BENCH FAILED" >> "$out/bench_gpu_rt.txt"
cat "$out/bench_gpu_rt.txt"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$CS" ]; then
  TFE_GPU_CASES=${MC_CASES:-15} TFE_GPU_REQUIRED=1 timeout ${MC_TIMEOUT:-200} "$CS" --tool memcheck --leak-check full \
    $B/test_gpu_conformance > "$out/memcheck.txt" 2>&1 || echo "memcheck exit $?" >> "$out/memcheck.txt"
else echo "no compute-sanitizer" > "$out/memcheck.txt"; fi
tail -8 "$out/memcheck.txt"
echo "total $(( $(date +%s) - t0 )) s"
