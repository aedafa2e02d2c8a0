#!/bin/bash
# The permutation and map/zip benchmarks on another x86-64 Linux host (the lent GPU host's
# CPUs, say) that has a C compiler or only a C library: bench_permute and bench_kernels need
# neither BLIS nor LAPACKE. Build here, carry the folder, run it there:
#   bench/run_cpu_host.sh build   -> build-dev/ (AVX-512 and AVX2 builds, libgomp, libcmocka,
#                                    the kernel test suite, patterns)
#   build-dev/run.sh              -> test.txt, permute.txt, permute_nopool.txt, k1.txt, k2.txt,
#                                    sweep0.txt, sweep7.txt (bench_permute_sweep, seeds 0 and 7)
#                                    and with AB=1 ab.txt, in $OUT (or the folder)
set -e
if [ "${1:-}" = build ]; then
  mkdir -p build-dev
  for v in 4 3; do
    s=$([ $v = 4 ] || echo _v3)
    for b in bench_permute bench_kernels bench_permute_ab bench_permute_sweep; do
      ${CC:-gcc} -std=c11 -O3 -march=x86-64-v$v -fopenmp -Iinclude -o build-dev/$b$s bench/$b.c -lm
    done
    ${CC:-gcc} -std=c11 -O2 -march=x86-64-v$v -fopenmp -Iinclude -Itests -o build-dev/test_kernel$s tests/test_kernel.c -lcmocka -lm
  done
  # baseline x86-64 (no -march): the run-time dispatch to the AVX2 kernels
  ${CC:-gcc} -std=c11 -O2 -fopenmp -Iinclude -Itests -o build-dev/test_kernel_v1 tests/test_kernel.c -lcmocka -lm
  cp "$(${CC:-gcc} -print-file-name=libgomp.so.1)" build-dev/
  cp -L /lib/x86_64-linux-gnu/libcmocka.so.0 build-dev/
  cp ../shared/bench/permutation_patterns.json build-dev/
  cp "$0" build-dev/run_cpu_host.sh
  printf '#!/bin/bash\nexec bash "$(dirname "$0")/run_cpu_host.sh" run\n' > build-dev/run.sh
  chmod +x build-dev/run.sh
  exit 0
fi
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
out=${OUT:-$PWD}
(nproc; grep -m1 "model name" /proc/cpuinfo; grep -o -m1 "avx512f" /proc/cpuinfo) | tee "$out/cpu.txt"
s=""; grep -q avx512f /proc/cpuinfo || s="_v3"
for t in test_kernel$s test_kernel_v3 test_kernel_v1; do
  echo "== $t"; ./$t 2>&1 | tail -2 || echo "TEST FAILED: $t"
done > "$out/test.txt" 2>&1
tail -3 "$out/test.txt"
OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 ./bench_permute$s permutation_patterns.json --reps 5 --threads2 --no-numpy > "$out/permute.txt" 2>&1
# the same with fresh pages every call (tenferro's pool of large buffers off)
# (--no-4k: the 4 KiB-page memcpy column can leave the system compacting memory for the next
# huge-page request, docs/bench-kernel.md round 7)
OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 ./bench_permute$s permutation_patterns.json --reps 5 --threads2 --no-numpy --no-pool --no-4k > "$out/permute_nopool.txt" 2>&1
OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 ./bench_kernels$s --reps 7 --set transpose > "$out/k1.txt" 2>&1
OMP_WAIT_POLICY=passive ./bench_kernels$s --reps 7 --set transpose --threads 2 > "$out/k2.txt" 2>&1
# A/B of tuning globals (bench_permute_ab, 1 thread, cold caches): streamed edge lines where
# destination runs are not line-aligned, streamed narrow columns, tile sizes and buffering
ab() { echo "== $1 $2 : $3"; OMP_WAIT_POLICY=passive A="$1" B="$2" ./bench_permute_ab$s $3; }
r15="3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 -- 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0"
c15="3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 -- 1 2 3 4 5 6 7 8 9 10 11 12 13 14 0"
t201="256 256 256 -- 2 0 1"
OMP_WAIT_POLICY=passive ./bench_permute_sweep$s --cases 40 > "$out/sweep0.txt" 2>&1
OMP_WAIT_POLICY=passive ./bench_permute_sweep$s --cases 60 --seed 7 > "$out/sweep7.txt" 2>&1
[ "${AB:-0}" = 1 ] && {
  for i in 1 2; do ab edge=1 edge=0 "$r15"; ab colnt=1 colnt=0 "$c15"; done
  for i in 1 2; do ab tile=512 tile=256 "$t201"; done
  for sh in "$t201" "256 256 256 -- 1 0 2" "2048 2048 -- 1 0"; do
    TFE_POOL_BYTES=0 ab forder=1 forder=0 "$sh"; TFE_POOL_BYTES=0 ab forder=1 forder=0 "$sh"
  done
} > "$out/ab.txt" 2>&1
grep -h '^# [0-9]' "$out/sweep0.txt" "$out/sweep7.txt"
cat "$out/permute.txt" "$out/permute_nopool.txt" "$out/k1.txt" "$out/k2.txt"
