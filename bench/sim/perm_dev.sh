#!/bin/bash
# bench/sim/perm_dev.sh — the permutation benchmarks and tests on a lent GPU host, from a folder
# built here (bench/sim/perm_dev.sh build DIR OLDTREE: bin/ with bench_gpu_perm of this tree and
# of OLDTREE (old, e.g. main), test_gpu_conformance; lib/ with the shared libraries they load;
# the patterns), then there: DIR/perm_dev.sh run [sweep configs]. Writes $OUT/perm_logs.tgz:
# sweep.txt (this tree's binary, every config a column, BENCH_B2B=8), old1..N / new1..N
# (bench_gpu_perm of both trees, alternating, 30 rounds each, N = NRUNS, 3), conformance.txt
# (TFE_GPU_CASES=30), memcheck.txt (compute-sanitizer of test_permute_large); PROFILE=1: ncu.csv
# (Nsight Compute counters of tfe_perm2d on four tiled patterns, when ncu is installed).
set -u
if [ "${1:-}" = build ]; then
  set -e
  D=$2 OLD=$3
  mkdir -p $D/bin $D/lib
  F="-std=c11 -O2 -march=x86-64-v3 -fopenmp -Iinclude -Itests"
  L="-lcmocka -L/usr/lib/x86_64-linux-gnu/blis-openmp -lblis -llapacke -lm -fopenmp -ldl -lpthread"
  gcc $F -o $D/bin/bench_gpu_perm bench/bench_gpu_perm.c $L
  (cd $OLD && gcc $F -o $D/bin/bench_gpu_perm_old bench/bench_gpu_perm.c $L)
  gcc $F -o $D/bin/test_gpu_conformance tests/test_gpu_conformance.c tests/test_gpu_conformance.companion__part.c $L
  for l in libcmocka.so.0 blis-openmp/libblis.so.4 liblapacke.so.3 libblas.so.3 liblapack.so.3 libtmglib.so.3 \
           libgfortran.so.5 libquadmath.so.0 libgomp.so.1; do
    cp -L /usr/lib/x86_64-linux-gnu/$l $D/lib/ 2>/dev/null || cp -L /lib/x86_64-linux-gnu/$l $D/lib/
  done
  cp ../shared/bench/permutation_patterns.json $D/ 2>/dev/null || cp /work/shared/bench/permutation_patterns.json $D/
  cp "$0" $D/perm_dev.sh
  exit 0
fi
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib XDG_CACHE_HOME=$PWD/xdg
O=${OUT:-/tmp}/perm_logs
mkdir -p $O
P=$PWD/permutation_patterns.json
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; } > $O/env.txt 2>&1
t0=$(date +%s)
if [ -n "${2:-}" ]; then
  BENCH_B2B=8 timeout 90 bin/bench_gpu_perm $P 20 "$2" > $O/sweep.txt 2>&1 || echo "exit $?" >> $O/sweep.txt
  echo "sweep $(( $(date +%s) - t0 )) s" >> $O/env.txt
fi
for i in $(seq ${NRUNS:-3}); do
  timeout 40 bin/bench_gpu_perm_old $P 30 > $O/old$i.txt 2>&1 || echo "exit $?" >> $O/old$i.txt
  timeout 40 bin/bench_gpu_perm $P 30 > $O/new$i.txt 2>&1 || echo "exit $?" >> $O/new$i.txt
done
echo "benches $(( $(date +%s) - t0 )) s" >> $O/env.txt
(time TFE_GPU_CASES=30 TFE_GPU_LA_CASES=2 TFE_GPU_REQUIRED=1 timeout 100 bin/test_gpu_conformance) > $O/conformance.txt 2>&1 ||
  echo "CONFORMANCE exit $?" >> $O/conformance.txt
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
(TFE_GPU_TEST_FILTER=test_permute_large TFE_GPU_CASES=8 TFE_GPU_REQUIRED=1 timeout 100 $CS --tool memcheck --leak-check full \
  bin/test_gpu_conformance) > $O/memcheck.txt 2>&1 || echo "MEMCHECK exit $?" >> $O/memcheck.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ "${PROFILE:-0}" = 1 ] && [ -n "$NCU" ]; then # Nsight Compute counters of the tiled patterns' kernels
  BENCH_ONLY=transpose_3d_256_201,reverse_23d_2,reverse_15d_3,cyclic_15d_3 timeout 90 $NCU --csv -k tfe_perm2d \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size \
    bin/bench_gpu_perm $P 1 > $O/ncu.csv 2>&1 || echo "ncu exit $?" >> $O/ncu.csv
fi
echo "all $(( $(date +%s) - t0 )) s" >> $O/env.txt
uptime >> $O/env.txt
tar czf $OUT/perm_logs.tgz -C $(dirname $O) perm_logs && rm -rf $O
