#!/bin/bash
# gad2 device run (session 12; copied to /work/main/.dev-gad2/dev.sh and run there with .dev-final carried): build there (this branch; bench_gpu_ad also against main's headers),
# AD + linalg conformance, memcheck of the AD tests, bench_gpu_ad before (main) / after. Logs in $OUT.
cd "$(dirname "$0")"
B=../.dev-final/build-gpudev
F="-std=c11 -march=native -fopenmp -g -Itests -I$B/inc"
L="-L$B -l:libcmocka.so.0 -l:libblis.so.4 -l:liblapacke.so.3 -lm -fopenmp -ldl -lpthread"
mkdir -p bin
t0=$(date +%s)
gcc $F -O1 -Iinclude -o bin/conf tests/test_gpu_conformance.c tests/test_gpu_conformance.companion__part.c $L 2> $OUT/build_conf.txt &
gcc $F -O2 -Iinclude -o bin/ad_new bench/bench_gpu_ad.c $L 2> $OUT/build_new.txt &
gcc $F -O2 -I../include -o bin/ad_old bench/bench_gpu_ad.c $L 2> $OUT/build_old.txt &
wait
echo "compiled in $(( $(date +%s) - t0 )) s" > $OUT/build.txt
export LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
export XDG_CACHE_HOME=$PWD/bin/xdg
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; nproc >> $OUT/gpu.txt; uptime >> $OUT/gpu.txt
(time TFE_GPU_CASES=12 TFE_GPU_LA_CASES=3 TFE_GPU_REQUIRED=1 TFE_GPU_TEST_FILTER='test_ad_device' timeout 50 bin/conf) > $OUT/conf_ad.txt 2>&1 || echo "FAILED rc=$?" >> $OUT/conf_ad.txt
(time TFE_GPU_CASES=12 TFE_GPU_LA_CASES=3 TFE_GPU_REQUIRED=1 TFE_GPU_TEST_FILTER='test_linalg*' timeout 30 bin/conf) > $OUT/conf_la.txt 2>&1 || echo "FAILED rc=$?" >> $OUT/conf_la.txt
echo "tests done at $(( $(date +%s) - t0 )) s" >> $OUT/build.txt
(echo "== old"; timeout 20 bin/ad_old 512 3 svd qr eigh cholesky lu; echo "== new"; timeout 20 bin/ad_new 512 3 svd qr eigh cholesky lu; echo "== old"; timeout 20 bin/ad_old 512 3 svd qr eigh cholesky lu; echo "== new"; timeout 20 bin/ad_new 512 3 svd qr eigh cholesky lu) > $OUT/bench_ad_linalg.txt 2>&1
(echo "== old"; timeout 20 bin/ad_old 2048 5; echo "== new"; timeout 20 bin/ad_new 2048 5) > $OUT/bench_ad.txt 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s" >> $OUT/build.txt
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
(time TFE_GPU_CASES=4 TFE_GPU_LA_CASES=1 TFE_GPU_REQUIRED=1 TFE_GPU_TEST_FILTER='test_ad_device' timeout 55 $CS --tool memcheck --leak-check full --error-exitcode 9 bin/conf) > $OUT/memcheck_ad.txt 2>&1 || echo "MEMCHECK rc=$?" >> $OUT/memcheck_ad.txt
echo "total $(( $(date +%s) - t0 )) s" >> $OUT/build.txt
