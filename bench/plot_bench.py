#!/usr/bin/env python3
"""Plots of the benchmark tables (issue 20): per instance, tenferro and every peer on a log
scale, threads and dtypes as panels. Needs matplotlib (Debian: python3-matplotlib, which
/usr/bin/python3 sees; or pip install matplotlib).

  plot_bench.py einsum  [--table docs/bench-einsum.md] [--out docs/img/bench_einsum.png]
      the first table of bench/bench_einsum.py's page (its latest run): rows instance, dtype,
      threads; columns tenferro along the stored opt_flops path, tenferro's own optimizer,
      numpy, torch, jax (ms). Panels: threads x dtypes.
  plot_bench.py permute [--input FILE] [--out docs/img/bench_permute.png]
      FILE: the output of build/bench/bench_permute (lines `id tfe_ms=... memcpy_ms=...
      [numpy_ms=...] [tfe2_ms=... memcpy2_ms=...] MiB=...`), or a markdown page holding the
      table of docs/benchmarks.md "## Permutations (issue 3)" (default: docs/benchmarks.md).
      Panels: 1 thread (tenferro, memcpy, numpy), 2 threads (tenferro, memcpy).
  plot_bench.py check   both plots from the committed pages into build/plots (a quick check
      that parsing and plotting work; `make test-plots`)

`make plots` regenerates docs/img/bench_einsum.png and docs/img/bench_permute.png from the pages;
`make bench-einsum` and `make bench-permute` plot their fresh results (docs/benchmarks.md)."""
import argparse, math, os, re, sys

def need_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        sys.exit("plot_bench.py: matplotlib is missing (Debian: apt-get install python3-matplotlib, then run "
                 "/usr/bin/python3; or pip install matplotlib)")

def num(s):
    try:
        x = float(s)
        return x if x > 0 and math.isfinite(x) else None
    except ValueError:
        return None  # 'timeout', 'error: ...', '-'

def md_tables(text):
    """Every markdown table of text as a list of (header, rows) with cells stripped."""
    out, cur = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cur is None:
                cur = (cells, [])
            elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
                cur[1].append(cells)
        elif cur is not None:
            out.append(cur)
            cur = None
    if cur is not None:
        out.append(cur)
    return out

def einsum_data(path):
    for head, rows in md_tables(open(path).read()):
        if head[:3] == ["instance", "dtype", "threads"]:
            return head, rows
    sys.exit("plot_bench.py: no einsum table (instance | dtype | threads | ...) in %s" % path)

def plot_einsum(path, out):
    plt = need_matplotlib()
    head, rows = einsum_data(path)
    col = {h: i for i, h in enumerate(head)}
    series = [("opt_flops", "tenferro (opt_flops path)", "o", "C3"), ("own", "tenferro (own optimizer)", "D", "C1")]
    series += [(p, p, m, c) for p, m, c in (("numpy", "s", "C0"), ("torch", "^", "C2"), ("jax", "v", "C4")) if p in col]
    dtypes = sorted({r[col["dtype"]] for r in rows}, key=lambda d: (d != "f64", d))
    threads = sorted({r[col["threads"]] for r in rows}, key=int)
    insts = sorted({r[col["instance"]] for r in rows})
    fig, axes = plt.subplots(len(threads), len(dtypes), figsize=(6.2 * len(dtypes), 0.32 * len(insts) * len(threads) + 1.6),
                             squeeze=False, sharey=True)
    for ti, th in enumerate(threads):
        for di, dt in enumerate(dtypes):
            ax = axes[ti][di]
            sel = {r[col["instance"]]: r for r in rows if r[col["dtype"]] == dt and r[col["threads"]] == th}
            for key, label, mark, color in series:
                ys, xs = [], []
                for k, inst in enumerate(insts):
                    v = num(sel[inst][col[key]]) if inst in sel else None
                    if v:
                        ys.append(k); xs.append(v)
                ax.scatter(xs, ys, marker=mark, s=22, color=color, label=label, alpha=0.85, zorder=3)
            ax.set_xscale("log")
            ax.set_yticks(range(len(insts)))
            ax.set_yticklabels(insts, fontsize=7)
            ax.invert_yaxis()
            ax.grid(True, which="both", axis="x", alpha=0.3)
            ax.set_title("%s, %s thread%s" % (dt, th, "" if th == "1" else "s"), fontsize=10)
            if ti == len(threads) - 1:
                ax.set_xlabel("milliseconds (log scale; lower is better)")
    h, l = axes[0][0].get_legend_handles_labels()
    fig.legend(h, l, loc="upper center", ncol=len(series), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_size_inches()[1]))
    fig.savefig(out, dpi=100)
    print("plot_bench.py: %s (%d instances, %s x %s)" % (out, len(insts), "/".join(threads), "/".join(dtypes)))

def permute_data(path):
    text = open(path).read()
    recs = []
    for line in text.splitlines():
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        if "tfe_ms" in kv and "memcpy_ms" in kv:
            kv["id"] = line.split()[0]
            recs.append(kv)
    if recs:
        return recs
    for head, rows in md_tables(text):  # the table of docs/benchmarks.md "## Permutations (issue 3)"
        if head and head[0] == "pattern" and "tfe 1 thr ms" in head and "memcpy ms" in head:
            c = {h: i for i, h in enumerate(head)}
            first = lambda s: s.split("/")[0].split("(")[0].strip()
            for r in rows:
                kv = {"id": r[0], "tfe_ms": first(r[c["tfe 1 thr ms"]]), "memcpy_ms": first(r[c["memcpy ms"]])}
                if "numpy ms" in c and "view" not in r[c["numpy ms"]]:
                    kv["numpy_ms"] = first(r[c["numpy ms"]])
                if "tfe 2 thr ms" in c:
                    kv["tfe2_ms"] = first(r[c["tfe 2 thr ms"]])
                if "memcpy 2-thr speed-up" in c and num(kv["memcpy_ms"]) and num(first(r[c["memcpy 2-thr speed-up"]])):
                    kv["memcpy2_ms"] = "%.3f" % (num(kv["memcpy_ms"]) / num(first(r[c["memcpy 2-thr speed-up"]])))
                recs.append(kv)
            return recs
    sys.exit("plot_bench.py: no bench_permute lines or permutation table in %s" % path)

def plot_permute(path, out):
    plt = need_matplotlib()
    recs = permute_data(path)
    panels = [("1 thread", [("tfe_ms", "tenferro", "o", "C3"), ("memcpy_ms", "memcpy", "|", "k"), ("numpy_ms", "numpy", "s", "C0")]),
              ("2 threads", [("tfe2_ms", "tenferro", "o", "C3"), ("memcpy2_ms", "memcpy", "|", "k")])]
    panels = [p for p in panels if any(num(r.get(k, "")) for k, *_ in p[1] for r in recs)]
    ids = [r["id"] for r in recs]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 0.34 * len(ids) + 1.6), squeeze=False, sharey=True)
    for pi, (title, series) in enumerate(panels):
        ax = axes[0][pi]
        for key, label, mark, color in series:
            pts = [(num(r.get(key, "")), k) for k, r in enumerate(recs) if num(r.get(key, ""))]
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=mark, s=40 if mark == "|" else 24, color=color,
                       label=label, zorder=3)
        ax.set_xscale("log")
        ax.set_yticks(range(len(ids)))
        ax.set_yticklabels(ids, fontsize=7)
        ax.invert_yaxis()
        ax.grid(True, which="both", axis="x", alpha=0.3)
        ax.set_title("f64 permutations, " + title, fontsize=10)
        ax.set_xlabel("milliseconds (log scale; lower is better)")
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print("plot_bench.py: %s (%d patterns)" % (out, len(ids)))

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["einsum", "permute", "check"])
    ap.add_argument("--table", default=os.path.join(root, "docs/bench-einsum.md"))
    ap.add_argument("--input", default=os.path.join(root, "docs/benchmarks.md"))
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    if a.what == "einsum":
        plot_einsum(a.table, a.out or os.path.join(root, "docs/img/bench_einsum.png"))
    elif a.what == "permute":
        plot_permute(a.input, a.out or os.path.join(root, "docs/img/bench_permute.png"))
    else:
        d = a.out or os.path.join(root, "build/plots")
        os.makedirs(d, exist_ok=True)
        plot_einsum(a.table, os.path.join(d, "bench_einsum.png"))
        plot_permute(a.input, os.path.join(d, "bench_permute.png"))
        for f in ("bench_einsum.png", "bench_permute.png"):
            with open(os.path.join(d, f), "rb") as fh:
                if fh.read(8) != b"\x89PNG\r\n\x1a\n":
                    sys.exit("plot_bench.py: %s is no PNG" % f)
        print("plot_bench.py: check passed")

if __name__ == "__main__":
    main()
