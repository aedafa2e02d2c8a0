#!/usr/bin/env python3
"""Peer timing for the einsum benchmark: numpy, torch or jax contracting an instance pairwise
along a stored path, on the inputs tfe-einsum saved (--save-inputs DIR).

  peer_einsum.py --lib numpy|torch|jax --instance FILE.json --inputs DIR --path opt_flops
                 [--dtype f64|c128] [--threads N] [--repeat K]

Prints one line: lib=... median_ms=... checksum=... (sum of real + imaginary parts of the
result, comparable with tfe-einsum's checksum). Threads are limited by the caller (taskset) and
by the library's own setting."""
import argparse, json, os, sys, time, statistics

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True, choices=["numpy", "torch", "jax"])
ap.add_argument("--instance", required=True)
ap.add_argument("--inputs", required=True)
ap.add_argument("--path", default="opt_flops")
ap.add_argument("--dtype", default="f64")
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--repeat", type=int, default=3)
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

# The pairwise program: each step keeps the labels still needed (later operands or output).
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

if a.lib == "numpy":
    ein, conv, back = (lambda e, x, y: np.einsum(e, x, y)), (lambda x: x), (lambda x: np.asarray(x))
elif a.lib == "torch":
    import torch
    torch.set_num_threads(a.threads)
    ein, conv, back = (lambda e, x, y: torch.einsum(e, x, y)), torch.from_numpy, (lambda x: x.numpy())
else:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    ein = lambda e, x, y: jnp.einsum(e, x, y, optimize=False)
    conv, back = jnp.asarray, (lambda x: np.asarray(x.block_until_ready()))

def run(ops):
    ops = list(ops)
    for i, j, e in steps:
        r = ein(e, ops[i], ops[j])
        ops = [t for k, t in enumerate(ops) if k not in (i, j)] + [r]
    return back(ops[0])

ops = [conv(x) for x in arrs]
res = run(ops)  # warm-up (and jit compilation for jax)
ts = []
for _ in range(a.repeat):
    t0 = time.perf_counter()
    res = run(ops)
    ts.append(1e3 * (time.perf_counter() - t0))
cs = float(np.sum(res.real)) + (float(np.sum(res.imag)) if np.iscomplexobj(res) else 0.0)
print("lib=%s median_ms=%.3f checksum=%.10g" % (a.lib, statistics.median(ts), cs))
