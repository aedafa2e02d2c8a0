#!/usr/bin/env python3
"""The einsum benchmark: every instance in ../shared/bench/instances, tenferro along the stored
opt_flops and opt_size paths and its own optimizer, and numpy / torch / jax pairwise along the
opt_flops path on the same inputs, at 1 and 2 threads (taskset), f64 and c128.

  bench_einsum.py --tool build/tfe-einsum --out docs/bench-einsum.md
                  [--instances a,b] [--dtypes f64,c128] [--threads 1,2] [--peers numpy,torch,jax]
                  [--repeat 3] [--max-time 6] [--timeout 120] [--peer-timeout 60] [--peer-budget 6]

Each cell is a median in milliseconds over up to --repeat runs (fewer when the runs of one cell
already took --max-time / --peer-budget seconds; at least one). A run past its timeout (--timeout
for tfe-einsum, --peer-timeout for a peer, whole process including start-up and compilation) is
written 'timeout'; a failing one 'error: ...'. Rows are appended to the table as they finish, so
an interrupted run keeps what it measured."""
import argparse, glob, json, os, re, subprocess, sys, tempfile, platform, time

ap = argparse.ArgumentParser()
ap.add_argument("--tool", default="build/tfe-einsum")
ap.add_argument("--out", default="docs/bench-einsum.md")
ap.add_argument("--dir", default="../shared/bench/instances")
ap.add_argument("--instances", default="")
ap.add_argument("--dtypes", default="f64,c128")
ap.add_argument("--threads", default="1,2")
ap.add_argument("--peers", default="numpy,torch,jax")
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--max-time", type=float, default=6.0, help="seconds of timed tfe-einsum runs per cell")
ap.add_argument("--timeout", type=int, default=120, help="seconds per tfe-einsum process")
ap.add_argument("--peer-timeout", type=int, default=60, help="seconds per peer process")
ap.add_argument("--peer-budget", type=float, default=6.0, help="seconds of timed peer runs per cell")
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))

def run(cmd, threads, timeout=None):
    cpus = ",".join(str(c) for c in range(threads))
    try:
        p = subprocess.run(["taskset", "-c", cpus] + cmd, capture_output=True, text=True,
                           timeout=timeout or a.timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if p.returncode != 0:
        return None, "error: " + (p.stderr.strip().splitlines() or ["?"])[-1][:120]
    return dict(re.findall(r"(\w+)=(\S+)", p.stdout.strip().splitlines()[-1])), None

files = sorted(glob.glob(os.path.join(a.dir, "*.json")))
if a.instances:
    keep = a.instances.split(",")
    files = [f for f in files if os.path.basename(f)[:-5] in keep]
cols = ["instance", "dtype", "threads", "opt_flops", "opt_size", "own", "own_plan_ms", "own_flops_ratio"] + \
       [p for p in a.peers.split(",") if p]

def header(o):
    o.write("# einsum benchmark\n\n")
    o.write("Machine: %s, %d cores visible; tenferro via `%s`; peers pairwise along opt_flops "
            "(see bench/peers/peer_einsum.py for the call each peer makes).\n" %
            (platform.processor() or platform.machine(), os.cpu_count(), a.tool))
    o.write("Command: `%s`\n\nMedian of up to %d runs (bounded by %.0f s of runs per cell), milliseconds; planning "
            "excluded (own_plan_ms is the planning time of the own optimizer, own_flops_ratio its flops over the "
            "stored opt_flops path in tenferro's cost model). Timeouts: %d s per tfe-einsum process, %d s per peer "
            "process.\n\n" % (" ".join(sys.argv), a.repeat, a.max_time, a.timeout, a.peer_timeout))
    o.write("Peers, each pairwise along the stored opt_flops path on the inputs tfe-einsum saved (checksums "
            "cross-checked): numpy = `np.einsum(step, x, y, optimize=['einsum_path', (0, 1)])` per step (its "
            "optimizing path: tensordot/OpenBLAS for steps with a contracted index); torch = `torch.einsum` per step; "
            "jax = the whole pairwise program as one `jax.jit` function of `jnp.einsum` steps, timed after compilation "
            "with `block_until_ready()`. Every program (tfe-einsum and the peers) makes one untimed warm-up run, "
            "counted as a timed run when it takes 1 s or more. tfe-einsum writes the result in the inputs' memory order "
            "(row-major, as numpy returns it).\n\n")
    o.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")

t_start = time.time()
with open(a.out, "w") as o:
    header(o)
for f in files:
    name = os.path.basename(f)[:-5]
    for dt in a.dtypes.split(","):
        for th in map(int, a.threads.split(",")):
            row = {"instance": name, "dtype": dt, "threads": th}
            with tempfile.TemporaryDirectory() as tmp:
                base = [a.tool, "--instance", f, "--dtype", dt, "--threads", str(th), "--repeat", str(a.repeat),
                        "--max-time", str(a.max_time), "--warmup"]
                r, err = run(base + ["--path", "instance:opt_flops", "--save-inputs", tmp], th)
                row["opt_flops"] = r["median_ms"] if r else err
                row["checksum"] = r["checksum"] if r else ""
                r, err = run(base + ["--path", "instance:opt_size"], th)
                row["opt_size"] = r["median_ms"] if r else err
                r, err = run(base + ["--path", "auto", "--time-budget", "1.5"], th)
                row["own"] = r["median_ms"] if r else err
                row["own_plan_ms"] = r["plan_ms"] if r else ""
                row["own_flops_ratio"] = r.get("flops_vs_opt_flops", "") if r else ""
                for peer in a.peers.split(","):
                    if not peer or not os.path.exists(os.path.join(tmp, "in0.npy")):
                        row[peer] = row.get(peer, "no inputs")
                        continue
                    r, err = run([sys.executable, os.path.join(here, "peers", "peer_einsum.py"), "--lib", peer,
                                  "--instance", f, "--inputs", tmp, "--threads", str(th), "--repeat", str(a.repeat),
                                  "--budget", str(a.peer_budget)], th, a.peer_timeout)
                    row[peer] = r["median_ms"] if r else err
                    if r and row["checksum"]:
                        x, y = float(r["checksum"]), float(row["checksum"])
                        if abs(x - y) > 1e-6 * max(1.0, abs(x), abs(y)):
                            row[peer] += " (checksum differs)"
            with open(a.out, "a") as o:
                o.write("| " + " | ".join(str(row.get(c, "")) for c in cols) + " |\n")
            print("%7.1f s" % (time.time() - t_start), row, flush=True)
with open(a.out, "a") as o:
    o.write("\nWhole run: %.0f s.\n" % (time.time() - t_start))
print("wrote", a.out)
