#!/bin/bash
# The tropical suites and benchmarks in one device call (docs/benchmarks.md, session 11):
# environment, bench_gpu_ew (the max-plus peak microbenchmark, the tropical GEMM kernels side by
# side, the library's tropical calls, cuBLAS's DGEMM in the same run), the conformance suite, the
# loader, compute-sanitizer memcheck of the tropical tests. Expects build-gpudev/ next to it with
# the binaries and the libraries they load (bench/gpu_dev.sh build); logs under $OUT.
cd "$(dirname "$0")/../build-gpudev"
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
export XDG_CACHE_HOME=$PWD/xdg-cache
rm -rf "$XDG_CACHE_HOME"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm --format=csv; uname -a; nproc; date -u; } > "$OUT/env.txt" 2>&1
(time timeout ${BT:-120} ./bench_gpu_ew ${N:-4096} ${REPS:-7}) > "$OUT/bench.txt" 2>&1 || echo "BENCH exit $?" >> "$OUT/bench.txt"
grep -E "peak|max-plus|dgemm|min-plus|max-times|ijk->kji|ij->i|ij,ij|real" "$OUT/bench.txt" | head -60
(time TFE_GPU_CASES=${CASES:-100} TFE_GPU_LA_CASES=4 TFE_GPU_REQUIRED=1 timeout ${CT:-150} ./test_gpu_conformance) > "$OUT/conformance.txt" 2>&1 || echo "CONFORMANCE exit $?" >> "$OUT/conformance.txt"
grep -E "FAIL|PASSED|exit|real|tropical" "$OUT/conformance.txt" | tail -30
timeout 40 ./test_gpu_loader > "$OUT/loader.txt" 2>&1 || echo "LOADER exit $?" >> "$OUT/loader.txt"
tail -3 "$OUT/loader.txt"
if [ "${MC:-1}" = 1 ]; then
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  if [ -n "$CS" ]; then
    TFE_GPU_TEST_FILTER='test_tropical*' TFE_GPU_CASES=${MC_CASES:-20} TFE_GPU_REQUIRED=1 timeout ${MT:-120} "$CS" --tool memcheck --leak-check full ./test_gpu_conformance > "$OUT/memcheck.txt" 2>&1 || echo "memcheck exit $?" >> "$OUT/memcheck.txt"
  else echo "no compute-sanitizer" > "$OUT/memcheck.txt"; fi
  tail -4 "$OUT/memcheck.txt"
fi
