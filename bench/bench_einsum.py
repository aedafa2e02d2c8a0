#!/usr/bin/env python3
"""The einsum benchmark: every instance in ../shared/bench/instances, tenferro along the stored
opt_flops and opt_size paths and its own optimizer, and numpy / torch / jax pairwise along the
opt_flops path on the same inputs, at 1 and 2 threads (taskset), f64 and c128.

  bench_einsum.py --tool build/tfe-einsum --out docs/bench-einsum.md
                  [--instances a,b] [--dtypes f64,c128] [--threads 1,2] [--peers numpy,torch,jax]
                  [--repeat 3] [--timeout 300]

Each cell is a median in milliseconds; 'timeout' / 'error' are written as such."""
import argparse, glob, json, os, re, subprocess, sys, tempfile, platform

ap = argparse.ArgumentParser()
ap.add_argument("--tool", default="build/tfe-einsum")
ap.add_argument("--out", default="docs/bench-einsum.md")
ap.add_argument("--dir", default="../shared/bench/instances")
ap.add_argument("--instances", default="")
ap.add_argument("--dtypes", default="f64,c128")
ap.add_argument("--threads", default="1,2")
ap.add_argument("--peers", default="numpy,torch,jax")
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--timeout", type=int, default=300)
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))

def run(cmd, threads):
    cpus = ",".join(str(c) for c in range(threads))
    try:
        p = subprocess.run(["taskset", "-c", cpus] + cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if p.returncode != 0:
        return None, "error: " + (p.stderr.strip().splitlines() or ["?"])[-1][:120]
    return dict(re.findall(r"(\w+)=(\S+)", p.stdout.strip().splitlines()[-1])), None

files = sorted(glob.glob(os.path.join(a.dir, "*.json")))
if a.instances:
    keep = a.instances.split(",")
    files = [f for f in files if os.path.basename(f)[:-5] in keep]
rows = []
for f in files:
    name = os.path.basename(f)[:-5]
    for dt in a.dtypes.split(","):
        for th in map(int, a.threads.split(",")):
            row = {"instance": name, "dtype": dt, "threads": th}
            with tempfile.TemporaryDirectory() as tmp:
                base = [a.tool, "--instance", f, "--dtype", dt, "--threads", str(th), "--repeat", str(a.repeat)]
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
                    if not peer:
                        continue
                    r, err = run([sys.executable, os.path.join(here, "peers", "peer_einsum.py"), "--lib", peer,
                                  "--instance", f, "--inputs", tmp, "--threads", str(th), "--repeat", str(a.repeat)], th)
                    row[peer] = r["median_ms"] if r else err
                    if r and row["checksum"]:
                        x, y = float(r["checksum"]), float(row["checksum"])
                        if abs(x - y) > 1e-6 * max(1.0, abs(x), abs(y)):
                            row[peer] += " (checksum differs)"
            rows.append(row)
            print(row, flush=True)

cols = ["instance", "dtype", "threads", "opt_flops", "opt_size", "own", "own_plan_ms", "own_flops_ratio"] + \
       [p for p in a.peers.split(",") if p]
with open(a.out, "w") as o:
    o.write("# einsum benchmark\n\n")
    o.write("Machine: %s, %d cores visible; tenferro via `%s`; peers pairwise along opt_flops.\n" %
            (platform.processor() or platform.machine(), os.cpu_count(), a.tool))
    o.write("Command: `%s`\n\nMedian of %d runs, milliseconds (planning excluded; own_plan_ms is the planning time "
            "of the own optimizer, own_flops_ratio its flops over the stored opt_flops path in tenferro's cost model).\n\n"
            % (" ".join(sys.argv), a.repeat))
    o.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
    for r in rows:
        o.write("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |\n")
print("wrote", a.out)
