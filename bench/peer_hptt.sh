#!/bin/bash
# bench/peer_hptt.sh HPTT_DIR [OUT]: builds HPTT (a checkout of github.com/springer13/hptt; not
# vendored, fetch it yourself) with bench/peers/hptt_shim.cpp into OUT (default
# build/bench/libpeer_hptt.so), for `bench_permute_sweep --peer OUT`. Flags as HPTT's own
# Makefile's AVX build (-O3 -march=native -DHPTT_ARCH_AVX, OpenMP; HPTT_MARCH overrides native).
# Its sources compile in parallel (transpose.cpp alone takes minutes).
set -eu
H=${1:?usage: bench/peer_hptt.sh HPTT_DIR [OUT]}
OUT=${2:-build/bench/libpeer_hptt.so}
O=$(mktemp -d)
F="-O3 -std=c++11 -DNDEBUG -fopenmp -march=${HPTT_MARCH:-native} -DHPTT_ARCH_AVX -fPIC -w -I$H/include"
for s in "$H"/src/*.cpp bench/peers/hptt_shim.cpp; do
  ${CXX:-g++} $F -c "$s" -o "$O/$(basename "$s" .cpp).o" &
done
wait
mkdir -p "$(dirname "$OUT")"
${CXX:-g++} -shared -fopenmp "$O"/*.o -o "$OUT"
rm -rf "$O"
echo "built $OUT"
