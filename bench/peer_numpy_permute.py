#!/usr/bin/env python3
"""numpy peer of bench_permute: prints "ID MS" per pattern, the median of REPS calls of
np.asfortranarray(src.transpose(perm)) (a fresh result each call: allocation-inclusive).

usage: peer_numpy_permute.py PATTERNS.json [REPS] [ONLY_ID]
Sources are column-major f64 holding their linear index (explicit-stride sources are
built with np.lib.stride_tricks.as_strided over a dense buffer)."""
import json
import sys
import time

import numpy as np


def source(p):
    shape = p["shape"]
    n = int(np.prod(shape))
    buf = np.arange(n, dtype=np.float64)
    lay = p["src_layout"]
    if lay["kind"] == "explicit_strides":
        strides = [8 * s for s in lay["strides"]]
        return np.lib.stride_tricks.as_strided(buf, shape=shape, strides=strides)
    return buf.reshape(shape, order="F")


def main():
    path = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    only = sys.argv[3] if len(sys.argv) > 3 else None
    pats = json.load(open(path))["patterns"]
    for p in pats:
        if only and p["id"] != only:
            continue
        src = source(p)
        perm = p["perm"]
        times = []
        for r in range(reps + 1):
            t0 = time.perf_counter()
            out = np.asfortranarray(src.transpose(perm))
            t1 = time.perf_counter()
            del out
            if r > 0:
                times.append((t1 - t0) * 1e3)
        times.sort()
        print(p["id"], "%.3f" % times[len(times) // 2], flush=True)
        del src


if __name__ == "__main__":
    main()
