#!/usr/bin/env python3
"""bench/bench_gpu_peer.py — the peers of bench/bench_gpu.c, run in the same call on the same GPU:
torch.einsum and CuPy (matmul, einsum) for 'ij,jk->ik' in f64 and c128, n = 4096; median of
`reps` runs timed with CUDA events, after two warm-ups; transfers excluded. Prints versions."""
import statistics
import sys


def bench_torch(n, reps):
    import torch
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}), device {torch.cuda.get_device_name(0)}")
    for dt in (torch.float64, torch.complex128):
        a = torch.randn(n, n, dtype=dt, device="cuda")
        b = torch.randn(n, n, dtype=dt, device="cuda")
        flop = (8 if dt.is_complex else 2) * n ** 3
        for name, fn in (("torch.einsum", lambda: torch.einsum("ij,jk->ik", a, b)), ("torch.matmul", lambda: a @ b)):
            t = []
            for i in range(reps + 2):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                e.synchronize()
                if i >= 2:
                    t.append(s.elapsed_time(e))
            ms = statistics.median(t)
            print(f"gemm {str(dt).replace('torch.', '')} n={n}: {name} {ms:.3f} ms ({flop / ms / 1e9:.2f} TFLOP/s)")


def bench_cupy(n, reps):
    import cupy as cp
    print(f"cupy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, driver {cp.cuda.runtime.driverGetVersion()}")
    for dt in (cp.float64, cp.complex128):
        a = cp.asarray(cp.random.standard_normal((n, n)), dtype=dt)
        b = cp.asarray(cp.random.standard_normal((n, n)), dtype=dt)
        flop = (8 if dt == cp.complex128 else 2) * n ** 3
        for name, fn in (("cupy.matmul", lambda: a @ b), ("cupy.einsum", lambda: cp.einsum("ij,jk->ik", a, b))):
            t = []
            for i in range(reps + 2):
                s, e = cp.cuda.Event(), cp.cuda.Event()
                s.record()
                fn()
                e.record()
                e.synchronize()
                if i >= 2:
                    t.append(cp.cuda.get_elapsed_time(s, e))
            ms = statistics.median(t)
            print(f"gemm {cp.dtype(dt).name} n={n}: {name} {ms:.3f} ms ({flop / ms / 1e9:.2f} TFLOP/s)")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    for f in (bench_torch, bench_cupy):
        try:
            f(n, reps)
        except Exception as ex:  # a missing peer is reported, not fatal
            print(f"{f.__name__}: {type(ex).__name__}: {ex}")
