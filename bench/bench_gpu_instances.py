#!/usr/bin/env python3
"""bench/bench_gpu_instances.py — the GPU peers of `tfe-einsum --device cuda:0` on the shared
einsum instances: torch (eager torch.einsum per pairwise step), JAX (jax.jit of the whole
pairwise program) and jax_steps (each pairwise step a jax.jit of its own, called in turn) along the instance's stored path, on the inputs tfe-einsum saved
(--save-inputs DIR/<instance>-<dtype>), in one process, on the same GPU.

  bench_gpu_instances.py --instances DIR --inputs DIR [--path opt_flops] [--dtypes f64,c128]
                         [--reps 10] [--budget 1.0] [--libs torch,jax,jax_steps] [names...]

names: instance files (without .json) to run, in that order (default: all, sorted).

The pairwise program is the one of bench/peers/peer_einsum.py: each step keeps the labels still
needed (later operands or the output), renamed to ASCII letters; no contract_path search runs
(torch.einsum with two operands contracts them directly). Two times per instance, dtype and lib:
  ms      operands already on the device; wall time of one call of the program plus the wait
          for the device (torch.cuda.synchronize / block_until_ready), as tfe-einsum's median_ms
  ms_tr   the same with the transfers: the host arrays uploaded (torch.from_numpy(x).cuda(),
          jax.device_put), the program, the result downloaded to a numpy array
          (tfe-einsum's median_ms_transfers)
Each: one untimed warm-up (for JAX after the compiling call, whose time is printed as
compile_s; for jax also trace_s, the part of it spent tracing and lowering; jax_steps compiles
each distinct step once), then up to --reps timed runs while their total stays under --budget seconds (at
least 3); the median. One line per (instance, dtype, lib):
  name=... dtype=... lib=... ms=... ms_tr=... runs=... checksum=... [compile_s=...]
Versions first. JAX is told not to preallocate GPU memory (XLA_PYTHON_CLIENT_PREALLOCATE)."""
import argparse, glob, json, os, statistics, sys, time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
ap = argparse.ArgumentParser()
ap.add_argument("--instances", required=True)
ap.add_argument("--inputs", required=True)
ap.add_argument("--path", default="opt_flops")
ap.add_argument("--dtypes", default="f64,c128")
ap.add_argument("--libs", default="torch,jax")
ap.add_argument("--reps", type=int, default=10)
ap.add_argument("--budget", type=float, default=1.0)
ap.add_argument("names", nargs="*")
a = ap.parse_args()
import numpy as np

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def program_steps(inst, path):
    lhs, out = inst["format_string"].split("->")
    terms = lhs.split(",")
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
    return len(terms), steps


def pairwise(ein, ops, steps):
    ops = list(ops)
    for i, j, e in steps:
        r = ein(e, ops[i], ops[j])
        ops = [t for k, t in enumerate(ops) if k not in (i, j)] + [r]
    return ops[0]


def timed(fn, reps, budget):
    fn()  # warm-up
    ts = []
    while len(ts) < reps and (len(ts) < 3 or sum(ts) < 1e3 * budget):
        t0 = time.perf_counter()
        fn()
        ts.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(ts), len(ts)


def checksum(x):
    x = np.asarray(x)
    return float(np.sum(x.real)) + (float(np.sum(x.imag)) if np.iscomplexobj(x) else 0.0)


def step_jits(steps):
    """One jax.jit per distinct step expression (jit itself caches per shape and dtype)."""
    cache = {}
    for _, _, e in steps:
        if e not in cache:
            cache[e] = jax.jit(lambda x, y, e=e: jnp.einsum(e, x, y))
    return lambda *ops: pairwise(lambda e, x, y: cache[e](x, y), ops, steps)


def run_jax(name, dt, arrs, steps, whole):
    lib = "jax" if whole else "jax_steps"
    try:
        jops = [jax.device_put(x) for x in arrs]
        for x in jops:
            x.block_until_ready()
        t0 = time.perf_counter()
        if whole:
            prog = jax.jit(lambda *ops: pairwise(jnp.einsum, ops, steps)).lower(*jops)
            tr = time.perf_counter() - t0
            prog = prog.compile()
        else:
            prog, tr = step_jits(steps), 0.0
        prog(*jops).block_until_ready()
        comp = time.perf_counter() - t0
        res = [None]

        def run():
            res[0] = prog(*jops).block_until_ready()

        def run_tr():
            ops = [jax.device_put(x) for x in arrs]
            res[0] = np.asarray(prog(*ops))

        ms, runs = timed(run, a.reps, a.budget)
        cs = checksum(res[0])
        ms_tr, _ = timed(run_tr, a.reps, a.budget)
        print(f"name={name} dtype={dt} lib={lib} ms={ms:.4f} ms_tr={ms_tr:.4f} runs={runs} checksum={cs:.10g} "
              f"compile_s={comp:.2f} trace_s={tr:.2f}")
    except Exception as ex:
        print(f"name={name} dtype={dt} lib={lib} error {type(ex).__name__}: {str(ex)[:200]}")
    sys.stdout.flush()


libs = a.libs.split(",")
torch = jax = None
if "torch" in libs:
    try:
        import torch
        print(f"torch {torch.__version__} (CUDA {torch.version.cuda}), device {torch.cuda.get_device_name(0)}")
    except Exception as ex:
        print(f"torch: {type(ex).__name__}: {ex}")
        torch = None
if "jax" in libs or "jax_steps" in libs:
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import jaxlib
        print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, devices {jax.devices()}")
    except Exception as ex:
        print(f"jax: {type(ex).__name__}: {ex}")
        jax = None
try:
    import cupy
    print(f"cupy {cupy.__version__} (not timed here)")
except Exception:
    pass
sys.stdout.flush()

files = sorted(glob.glob(os.path.join(a.instances, "*.json")))
if a.names:  # in the order given
    files = [os.path.join(a.instances, n + ".json") for n in a.names]
for f in files:
    inst = json.load(open(f))
    name = inst["name"]
    n, steps = program_steps(inst, inst["paths"][a.path]["path"])
    for dt in a.dtypes.split(","):
        d = os.path.join(a.inputs, f"{name}-{dt}")
        if not os.path.isdir(d):
            print(f"name={name} dtype={dt} missing inputs {d}")
            continue
        arrs = [np.load(os.path.join(d, "in%d.npy" % k)) for k in range(n)]
        if torch is not None:
            try:
                tops = [torch.from_numpy(x).cuda() for x in arrs]
                torch.cuda.synchronize()
                res = [None]

                def run():
                    res[0] = pairwise(torch.einsum, tops, steps)
                    torch.cuda.synchronize()

                def run_tr():
                    ops = [torch.from_numpy(x).cuda() for x in arrs]
                    res[0] = pairwise(torch.einsum, ops, steps).cpu().numpy()

                ms, runs = timed(run, a.reps, a.budget)
                cs = checksum(res[0].cpu().numpy())
                ms_tr, _ = timed(run_tr, a.reps, a.budget)
                print(f"name={name} dtype={dt} lib=torch ms={ms:.4f} ms_tr={ms_tr:.4f} runs={runs} checksum={cs:.10g}")
                del tops, res
                torch.cuda.empty_cache()
            except Exception as ex:
                print(f"name={name} dtype={dt} lib=torch error {type(ex).__name__}: {str(ex)[:200]}")
        if jax is not None and "jax" in libs:
            run_jax(name, dt, arrs, steps, whole=True)
        if jax is not None and "jax_steps" in libs:
            run_jax(name, dt, arrs, steps, whole=False)
        sys.stdout.flush()
