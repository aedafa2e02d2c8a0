#!/bin/bash
# bench/sim/run.sh — builds and runs the emulated conformance suite with tfe_perm2d executed by
# the CPU simulator (bench/sim/kernel_sim.cpp). Usage: bench/sim/run.sh [TFE_GPU_CASES]
set -e
cd "$(dirname "$0")/../.."
B=${B:-build/sim}
mkdir -p $B
F="-std=c11 -O1 -g -Iinclude -Itests"
gcc $F -o $B/dump_src bench/sim/dump_src.c -lm -ldl -lpthread -lblis -llapacke -fopenmp 2>&1 | tail -5
$B/dump_src > $B/kernels.inc
g++ -std=c++14 -O1 -g -I$B -c -o $B/kernel_sim.o bench/sim/kernel_sim.cpp
gcc $F -DTU_GPU_EMULATED=1 -c -o $B/conf.o tests/test_gpu_emulated.c
gcc $F -c -o $B/sim_companion.o bench/sim/sim_companion.c
g++ -o $B/test_gpu_sim $B/conf.o $B/sim_companion.o $B/kernel_sim.o -lcmocka -L/usr/lib/x86_64-linux-gnu/blis-openmp -lblis -llapacke -lm -fopenmp -ldl -lpthread
TFE_GPU_CASES=${1:-40} $B/test_gpu_sim
