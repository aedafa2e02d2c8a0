#!/bin/sh
# bench/peer_hptt.sh HPTT_DIR [OUT]: builds HPTT (a checkout of github.com/springer13/hptt; not
# vendored, fetch it yourself) with bench/peers/hptt_shim.cpp into OUT (default
# build/bench/libpeer_hptt.so), for `bench_permute_sweep --peer OUT`. Flags as HPTT's own
# Makefile's AVX build (-O3 -march=native -DHPTT_ARCH_AVX, OpenMP).
set -eu
H=${1:?usage: bench/peer_hptt.sh HPTT_DIR [OUT]}
OUT=${2:-build/bench/libpeer_hptt.so}
mkdir -p "$(dirname "$OUT")"
${CXX:-g++} -O3 -std=c++11 -DNDEBUG -fopenmp -march=native -DHPTT_ARCH_AVX -fPIC -shared -w \
  -I"$H/include" "$H"/src/*.cpp bench/peers/hptt_shim.cpp -o "$OUT"
echo "built $OUT"
