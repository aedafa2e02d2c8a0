#!/usr/bin/env python3
"""bench/peer_chain.py — the peers of bench/bench_chain.c: the same MPS inner-product chain
(N sites, physical dim d, bond dim D, f64) along the same pairwise path (E absorbs A_i, then
B_i), in torch (eager, torch.einsum per step) and in JAX (jax.jit of the whole pairwise
program: one XLA computation of 2N-1 einsums, compiled before timing). Prints per D:
"D torch_seconds jax_seconds torch_value jax_value" (medians of --reps calls; nan when a
peer is missing). Threads: torch.set_num_threads and XLA's single-threaded Eigen for 1."""
import argparse, os, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--sites", type=int, default=100)
ap.add_argument("--d", type=int, default=2)
ap.add_argument("--dims", default="2,4,8,10,16,24,32,40,48,60,64,96,128")
ap.add_argument("--reps", type=int, default=21)
ap.add_argument("--threads", type=int, default=1)
a = ap.parse_args()
if a.threads == 1:
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
import numpy as np

try:
    import torch
    torch.set_num_threads(a.threads)
except Exception:
    torch = None
try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
except Exception:
    jax = None


def operands(N, d, D, rs):
    s = 1.0 / np.sqrt(d * D) * 2.0 * np.sqrt(3.0)
    ops = []
    for i in range(N):
        shape = ([D] if i > 0 else []) + [d] + ([D] if i < N - 1 else [])
        for _ in range(2):
            ops.append((s * (rs.random_sample(shape) - 0.5)).copy(order="F"))
    return ops


def program(einsum, ops, N):
    """The pairwise steps: the boundary E(b,e), T(e,s,c)."""
    E = einsum("sb,se->be", ops[0], ops[1])
    for i in range(1, N):
        A, B = ops[2 * i], ops[2 * i + 1]
        if i < N - 1:
            T = einsum("be,bsc->esc", E, A)
            E = einsum("esc,esf->cf", T, B)
        else:
            T = einsum("be,bs->es", E, A)
            E = einsum("es,es->", T, B)
    return E


# TFE_BENCH_CPU=1 (as bench_chain): process CPU time instead of wall time
clock = time.process_time if os.environ.get("TFE_BENCH_CPU", "0") not in ("", "0") else time.perf_counter


def med(f, reps):
    f()
    t = []
    for _ in range(reps):
        t0 = clock()
        f()
        t.append(clock() - t0)
    t.sort()
    return t[len(t) // 2]


for D in [int(x) for x in a.dims.split(",") if x]:
    ops = operands(a.sites, a.d, D, np.random.RandomState(D))
    tt = tv = jt = jv = float("nan")
    if torch is not None:
        tops = [torch.from_numpy(np.ascontiguousarray(o)) for o in ops]
        tv = float(program(torch.einsum, tops, a.sites))
        tt = med(lambda: program(torch.einsum, tops, a.sites), a.reps)
    if jax is not None:
        jops = [jnp.asarray(o) for o in ops]
        f = jax.jit(lambda xs: program(jnp.einsum, xs, a.sites))
        jv = float(f(jops).block_until_ready())
        jt = med(lambda: f(jops).block_until_ready(), a.reps)
    print(D, tt, jt, tv, jv, flush=True)
