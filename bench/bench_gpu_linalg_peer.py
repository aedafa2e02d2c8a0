#!/usr/bin/env python3
"""bench/bench_gpu_linalg_peer.py — the peer of bench/bench_gpu_linalg.c, run in the same call on
the same GPU: torch.linalg.svd (reduced; the default driver and driver='gesvd', the routine
tenferro calls), torch.linalg.qr (reduced) and torch.linalg.eigh of the same kind of n x n f64
matrix (symmetric, uniform in [-0.5, 0.5]); median of `reps` runs timed with CUDA events after one
warm-up; transfers excluded. Prints versions."""
import statistics
import sys


def bench_torch(n, reps):
    import torch
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}), device {torch.cuda.get_device_name(0)}")
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.rand(n, n, dtype=torch.float64, device="cuda", generator=g) - 0.5
    a = torch.tril(a) + torch.tril(a, -1).T
    cases = (
        ("torch.linalg.qr (reduced)", lambda: torch.linalg.qr(a), 2 * reps + 1),
        ("torch.linalg.eigh", lambda: torch.linalg.eigh(a), reps),
        ("torch.linalg.svd (reduced, driver='gesvd')", lambda: torch.linalg.svd(a, full_matrices=False, driver="gesvd"), reps),
        ("torch.linalg.svd (reduced, default driver)", lambda: torch.linalg.svd(a, full_matrices=False), reps),
    )
    for name, fn, r in cases:
        t = []
        for i in range(r + 1):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            s.record()
            out = fn()
            e.record()
            e.synchronize()
            del out
            if i >= 1:
                t.append(s.elapsed_time(e))
        print(f"{name} f64 n={n}: {statistics.median(t):.2f} ms (median of {r})", flush=True)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    try:
        bench_torch(n, reps)
    except Exception as ex:  # a missing peer is reported, not fatal
        print(f"bench_torch: {type(ex).__name__}: {ex}")
