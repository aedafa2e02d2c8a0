#!/bin/bash
# The permutation and map/zip benchmarks on another x86-64 Linux host (the lent GPU host's
# CPUs, say) that has a C compiler or only a C library: bench_permute and bench_kernels need
# neither BLIS nor LAPACKE. Build here, carry the folder, run it there:
#   bench/run_cpu_host.sh build   -> build-dev/ (AVX-512 and AVX2 builds, libgomp, libcmocka,
#                                    the kernel test suite, patterns)
#   build-dev/run.sh              -> test.txt, permute.txt, ab.txt, k1.txt, k2.txt in $OUT
#                                    (or the folder)
set -e
if [ "${1:-}" = build ]; then
  mkdir -p build-dev
  for v in 4 3; do
    s=$([ $v = 4 ] || echo _v3)
    for b in bench_permute bench_kernels bench_permute_ab; do
      ${CC:-gcc} -std=c11 -O3 -march=x86-64-v$v -fopenmp -Iinclude -o build-dev/$b$s bench/$b.c -lm
    done
    ${CC:-gcc} -std=c11 -O2 -march=x86-64-v$v -fopenmp -Iinclude -Itests -o build-dev/test_kernel$s tests/test_kernel.c -lcmocka -lm
  done
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
nproc; grep -m1 "model name" /proc/cpuinfo
s=""; grep -q avx512f /proc/cpuinfo || s="_v3"
./test_kernel$s > "$out/test.txt" 2>&1 || echo "TEST FAILED" >> "$out/test.txt"
tail -3 "$out/test.txt"
OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 ./bench_permute$s permutation_patterns.json --reps 5 --threads2 --no-numpy > "$out/permute.txt" 2>&1
# copy tiles buffered always (2) or only for unaligned columns (1), fresh and existing
for a in "2048 2048 -- 1 0" "256 256 256 -- 2 0 1" "2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 -- 22 21 20 19 18 17 16 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0" "3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 -- 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0"; do
  for pre in "" 1; do
    echo "$a PRE=$pre: A buf=1, B buf=2"
    PRE=$pre OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 A=buf=1 B=buf=2 R=7 ./bench_permute_ab$s $a
  done
done > "$out/ab.txt" 2>&1
OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 ./bench_kernels$s --reps 7 --set transpose > "$out/k1.txt" 2>&1
OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 ./bench_kernels$s --reps 7 --set transpose --fuse 2 >> "$out/k1.txt" 2>&1
OMP_WAIT_POLICY=passive ./bench_kernels$s --reps 7 --set transpose --threads 2 > "$out/k2.txt" 2>&1
cat "$out/permute.txt" "$out/ab.txt" "$out/k1.txt" "$out/k2.txt"
