#!/usr/bin/env python3
"""bench/gpu_tables.py OUTDIR — the markdown tables of docs/benchmarks.md from the logs of
`bench/gpu_bench.sh run` (tfe_instances.txt, peers_torch.txt, peers_jax.txt): per instance and
dtype, tenferro (tfe-einsum --device cuda:0), torch and JAX in milliseconds, without and with
the transfers, and the ratio of the best peer to tenferro (above 1: tenferro faster). Checksums
of the peers are compared with tenferro's (relative difference above 1e-6 is flagged)."""
import os, re, sys

d = sys.argv[1]


def parse(path):
    rows = {}
    if not os.path.exists(path):
        return rows
    for line in open(path):
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        if "name" in kv and "dtype" in kv:
            rows[(kv["name"], kv["dtype"])] = kv
    return rows


tfe = parse(os.path.join(d, "tfe_instances.txt"))
peers = {lib: parse(os.path.join(d, f"peers_{lib}.txt")) for lib in ("torch", "jax")}


def num(kv, key):
    try:
        return float(kv[key])
    except (KeyError, TypeError, ValueError):
        return None


def fmt(x):
    return "-" if x is None else (f"{x:.3f}" if x < 100 else f"{x:.1f}")


for key, title in (("ms", "transfers excluded"), ("ms_tr", "transfers included")):
    print(f"\n| instance ({title}) | dtype | tenferro | torch | JAX | best peer / tenferro |")
    print("|---|---|---:|---:|---:|---:|")
    for (name, dt) in sorted(tfe, key=lambda k: (k[0], k[1] != "f64")):
        t = tfe[(name, dt)]
        tk = num(t, "median_ms" if key == "ms" else "median_ms_transfers")
        vals, flags = [], ""
        for lib in ("torch", "jax"):
            p = peers[lib].get((name, dt))
            v = num(p, key) if p else None
            vals.append(v)
            if p and num(p, "checksum") is not None and num(t, "checksum") is not None:
                a, b = num(p, "checksum"), num(t, "checksum")
                if abs(a - b) > 1e-6 * max(abs(a), abs(b), 1e-300):
                    flags += f" ({lib} checksum differs)"
        best = min([v for v in vals if v is not None], default=None)
        ratio = f"{best / tk:.2f}" if best is not None and tk else "-"
        print(f"| {name} | {dt} | {fmt(tk)} | {fmt(vals[0])} | {fmt(vals[1])} | {ratio}{flags} |")
