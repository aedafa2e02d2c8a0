#!/bin/bash
# The permutation and map/zip benchmarks on another x86-64 Linux host (the lent GPU host's
# CPUs, say) that has a C compiler or only a C library: bench_permute and bench_kernels need
# neither BLIS nor LAPACKE. Build here, carry the folder, run it there:
#   bench/run_cpu_host.sh build   -> build-dev/ (AVX-512 and AVX2 builds, libgomp, patterns)
#   build-dev/run.sh              -> permute.txt, k1.txt, k2.txt in $OUT (or the folder)
set -e
if [ "${1:-}" = build ]; then
  mkdir -p build-dev
  for v in 4 3; do
    s=$([ $v = 4 ] || echo _v3)
    for b in bench_permute bench_kernels; do
      ${CC:-gcc} -std=c11 -O3 -march=x86-64-v$v -fopenmp -Iinclude -o build-dev/$b$s bench/$b.c -lm
    done
  done
  cp "$(${CC:-gcc} -print-file-name=libgomp.so.1)" build-dev/
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
OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 ./bench_permute$s permutation_patterns.json --reps 5 --threads2 --no-numpy > "$out/permute.txt" 2>&1
OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 ./bench_kernels$s --reps 7 --set transpose > "$out/k1.txt" 2>&1
OMP_WAIT_POLICY=passive ./bench_kernels$s --reps 7 --set transpose --threads 2 > "$out/k2.txt" 2>&1
cat "$out/permute.txt" "$out/k1.txt" "$out/k2.txt"
