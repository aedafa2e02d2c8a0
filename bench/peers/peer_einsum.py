#!/usr/bin/env python3
"""Peer timing for the einsum benchmark: numpy, torch or jax contracting an instance pairwise
along a stored path, on the inputs tfe-einsum saved (--save-inputs DIR).

  peer_einsum.py --lib numpy|torch|jax --instance FILE.json --inputs DIR [--path opt_flops]
                 [--threads N] [--repeat K] [--budget SECONDS]

What each peer runs per pairwise step (its best normal call; planning and compilation are
outside the timed region, as tenferro's planning is):
  numpy  np.einsum(step, x, y, optimize=['einsum_path', (0, 1)]): the optimizing code path, which
         hands every step with a contracted index to tensordot (OpenBLAS GEMM) and runs the rest
         (elementwise / outer products) in numpy's C einsum loop. (Plain np.einsum(step, x, y), the
         default optimize=False, never calls BLAS: 20-40x slower on GEMM-shaped steps.)
  torch  torch.einsum(step, x, y) (which maps each step to bmm / mul internally).
  jax    the whole pairwise program as one jax.jit function of all operands (jnp.einsum per step,
         x64 enabled); compiled by a first call, then timed with block_until_ready().
Every lib is run once untimed (warm-up; for jax after a compiling call), then up to `repeat` timed
runs while their total stays under --budget seconds (at least one). A warm-up run of a second or
more counts as the first timed run (the same rule as tfe-einsum --warmup).

Prints one line: lib=... median_ms=... runs=... checksum=... (sum of real + imaginary parts of
the result, comparable with tfe-einsum's checksum). Threads are limited by the caller (taskset)
and by the library's own setting."""
import argparse, json, os, sys, time, statistics

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True, choices=["numpy", "torch", "jax"])
ap.add_argument("--instance", required=True)
ap.add_argument("--inputs", required=True)
ap.add_argument("--path", default="opt_flops")
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--budget", type=float, default=10.0, help="seconds of timed runs (at least one run)")
a = ap.parse_args()
for v in ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"]:
    os.environ[v] = str(a.threads)
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=%s intra_op_parallelism_threads=%d" % (
    "true" if a.threads > 1 else "false", a.threads)
import numpy as np

inst = json.load(open(a.instance))
lhs, out = inst["format_string"].split("->")
terms = lhs.split(",")
path = inst["paths"][a.path]["path"]
arrs = [np.load(os.path.join(a.inputs, "in%d.npy" % k)) for k in range(len(terms))]
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

# The pairwise program: each step keeps the labels still needed (later operands or output),
# renamed to ASCII letters (torch and jax accept only those).
steps, live = [], list(terms)
for i, j in path:
    rest = [t for k, t in enumerate(live) if k not in (i, j)]
    need = set(out).union(*rest) if rest else set(out)
    seen = []
    for c in live[i] + live[j]:
        if c in need and c not in seen:
            seen.append(c)
    res = "".join(seen) if rest else out
    m = {c: LETTERS[k] for k, c in enumerate(dict.fromkeys(live[i] + live[j] + res))}
    tr = lambda t: "".join(m[c] for c in t)
    steps.append((i, j, "%s,%s->%s" % (tr(live[i]), tr(live[j]), tr(res))))
    live = rest + [res]
if len(terms) == 1:
    steps = []

def pairwise(ein, ops):
    ops = list(ops)
    for i, j, e in steps:
        r = ein(e, ops[i], ops[j])
        ops = [t for k, t in enumerate(ops) if k not in (i, j)] + [r]
    return ops[0]

if a.lib == "numpy":
    PAIR = ["einsum_path", (0, 1)]  # the path of a pair is fixed: skip the search, keep the BLAS dispatch
    run = lambda ops: pairwise(lambda e, x, y: np.einsum(e, x, y, optimize=PAIR), ops)
    ops, back = arrs, np.asarray
elif a.lib == "torch":
    import torch
    torch.set_num_threads(a.threads)
    run = lambda ops: pairwise(torch.einsum, ops)
    ops, back = [torch.from_numpy(x) for x in arrs], (lambda x: x.numpy())
else:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    prog = jax.jit(lambda *ops: pairwise(jnp.einsum, ops))
    run = lambda ops: prog(*ops).block_until_ready()
    ops = [jax.device_put(x) for x in arrs]
    for x in ops:
        x.block_until_ready()
    back = np.asarray

if a.lib == "jax":
    run(ops)  # compilation
t0 = time.perf_counter()
res = run(ops)  # warm-up; a run of a second or more counts as the first timed run
first = time.perf_counter() - t0
ts = [1e3 * first] if first >= 1.0 else []
while len(ts) < a.repeat and (not ts or sum(ts) < 1e3 * a.budget):
    t0 = time.perf_counter()
    res = run(ops)
    ts.append(1e3 * (time.perf_counter() - t0))
reps = len(ts)
res = back(res)
cs = float(np.sum(res.real)) + (float(np.sum(res.imag)) if np.iscomplexobj(res) else 0.0)
print("lib=%s median_ms=%.3f runs=%d checksum=%.10g" % (a.lib, statistics.median(ts), reps, cs))
