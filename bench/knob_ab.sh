#!/bin/bash
# bench/knob_ab.sh SWEEP CASES KNOBS: in-process A/B of kernel knobs on given permutation cases.
# SWEEP: a built bench_permute_sweep; CASES: a file of lines "id ES:DIMS:PERM"; KNOBS: a file of
# lines "knob=value" (setting B; A = the defaults). Prints, per case and knob, B/A per round
# (median and range over REPS rounds, default 5) and A's ratio to memcpy. Pin it (taskset) yourself.
set -u
sweep=${1:?usage: $0 SWEEP CASES KNOBS}; cases=${2:?}; knobs=${3:?}
while read -r id c; do
  [ -n "$id" ] || continue
  while read -r k; do
    [ -n "$k" ] || continue
    r=$(timeout 60 "$sweep" --case "$c" --reps "${REPS:-5}" --ab "$k" 2>&1)
    printf '%-28s %-32s A=%s %s\n' "$id" "$k" "$(grep -o 'ratio=[0-9.]*' <<< "$r" | head -1)" \
      "$(grep -o 'B/A per round: .*' <<< "$r")"
  done < "$knobs"
done < "$cases"
