"""Per-call time of small einsums from Python (make bench-python; docs/benchmarks.md): tenferro.einsum
(the C extension's path, plan table hit), tenferro's ctypes path (tenferro._einsum_py), numpy.einsum,
opt_einsum.contract and a precompiled opt_einsum.contract_expression, in one run. Median over
repeats of the mean of `number` calls each, in microseconds."""
import statistics
import sys
import timeit

import numpy as np

import tenferro

try:
    import opt_einsum
except ImportError:
    opt_einsum = None

REPEATS = int(sys.argv[1]) if len(sys.argv) > 1 else 9
rng = np.random.default_rng(0)
CASES = [
    ("ij,jk->ik", [(2, 2), (2, 2)]),
    ("ij,jk,kl->il", [(4, 4), (4, 4), (4, 4)]),
    ("abc,cd->abd", [(8, 8, 8), (8, 8)]),
    ("ij,jk->ik", [(64, 64), (64, 64)]),
]


def per_call(f, number):
    times = timeit.repeat(f, number=number, repeat=REPEATS)
    return statistics.median(times) / number * 1e6


def main():
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"opt_einsum {opt_einsum.__version__ if opt_einsum else 'absent'}, tenferro extension "
          f"{'on' if tenferro._fast is not None else 'OFF'}; median of {REPEATS} repeats, us per call")
    cols = ["tenferro", "tenferro ctypes", "numpy.einsum", "opt_einsum.contract", "oe expression"]
    print(f"{'case':32s}" + "".join(f"{c:>21s}" for c in cols))
    for expr, shapes in CASES:
        ops = [rng.standard_normal(s) for s in shapes]
        ref = np.einsum(expr, *ops)
        assert np.allclose(tenferro.einsum(expr, *ops), ref)
        number = 20000 if max(np.prod(s) for s in shapes) <= 16 else 2000
        fns = [lambda: tenferro.einsum(expr, *ops), lambda: tenferro._einsum_py(expr, *ops),
               lambda: np.einsum(expr, *ops)]
        if opt_einsum:
            expression = opt_einsum.contract_expression(expr, *shapes)
            assert np.allclose(expression(*ops), ref)
            fns += [lambda: opt_einsum.contract(expr, *ops), lambda: expression(*ops)]
        row = [per_call(f, number if i != 1 else number // 10) for i, f in enumerate(fns)]
        name = f"{expr} {'x'.join(str(s[0]) for s in shapes)}"
        print(f"{name:32s}" + "".join(f"{t:21.2f}" for t in row) + "".join(f"{'-':>21s}" for _ in range(5 - len(row))))


if __name__ == "__main__":
    main()
