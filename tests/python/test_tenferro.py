"""pytest suite of the tenferro Python package (make test-python): einsum against numpy.einsum,
strides and memory orders, every numpy dtype tenferro has, DLPack sharing, errors."""
import numpy as np
import pytest

import tenferro

DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64]
EXPRS = ["ij,jk->ik", "ij,jk", "abc,cd->abd", "ii->i", "ij->ji", "i,i->", "ab,bc,cd->ad", "ijk,ikl->ijl",
         "a,b->ab", "abc->"]


def operands(expr, dtype, rng):
    sizes = {}
    inputs = expr.split("->")[0].split(",")
    arrs = []
    for term in inputs:
        shape = tuple(sizes.setdefault(c, int(rng.integers(1, 5))) for c in term)
        x = rng.standard_normal(shape) * 3
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        arrs.append(np.asarray(x).astype(dtype))
    return arrs


def close(a, b, dtype):
    tol = {np.float32: 1e-4, np.complex64: 1e-4}.get(dtype, 1e-10)
    if np.dtype(dtype).kind == "i":
        return np.array_equal(a, b)
    return np.allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("expr", EXPRS)
def test_einsum_matches_numpy(expr, dtype):
    rng = np.random.default_rng(abs(hash((expr, str(dtype)))) % 2**32)
    ops = operands(expr, dtype, rng)
    got = tenferro.einsum(expr, *ops)
    want = np.einsum(expr, *ops)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert close(got, want, dtype)


def test_random_expressions():
    rng = np.random.default_rng(7)
    letters = "abcdefg"
    for _ in range(40):
        n = int(rng.integers(1, 4))
        terms = ["".join(rng.choice(list(letters), size=int(rng.integers(1, 4)), replace=False)) for _ in range(n)]
        present = sorted(set("".join(terms)))
        out = "".join(c for c in present if rng.random() < 0.5)
        expr = ",".join(terms) + "->" + out
        ops = operands(expr, np.float64, rng)
        assert np.allclose(tenferro.einsum(expr, *ops), np.einsum(expr, *ops)), expr


def test_strides_and_orders():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 8))
    b = np.asfortranarray(rng.standard_normal((8, 5)))
    views = [(a, b), (a.T.copy().T, b), (a[::2, 1::3], rng.standard_normal((3, 4))),
             (a[::-1, ::-2], rng.standard_normal((4, 2))), (np.broadcast_to(rng.standard_normal(8), (6, 8)), b)]
    for x, y in views:
        expr = "ij,jk->ik"
        assert np.allclose(tenferro.einsum(expr, x, y), np.einsum(expr, x, y))


def test_result_owns_tenferro_memory():
    # the Python path (here: the integer-label form): tenferro's memory, kept by the array; the
    # fast path's result is numpy's own memory (test_linalg_ad.py::test_fast_path)
    c = tenferro.einsum(np.ones((3, 4)), [0, 1], np.ones((4, 2)), [1, 2], [0, 2])
    assert not c.flags.owndata and c.base is not None
    c[0, 0] = 7  # writable
    del c


def test_errors_carry_the_message():
    with pytest.raises(tenferro.TenferroError, match="einsum"):
        tenferro.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(tenferro.TenferroError):
        tenferro.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="no kind"):
        tenferro.einsum("i->i", np.ones(3, np.uint8))


def test_dlpack_shares_memory_with_numpy():
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    t = tenferro.from_dlpack(x)
    assert t.shape == (3, 4) and t.dtype == "f64"
    y = t.numpy()
    x[1, 2] = -5.0  # write through numpy: visible through tenferro's view
    assert y[1, 2] == -5.0
    y[0, 0] = 42.0
    assert x[0, 0] == 42.0
    z = np.from_dlpack(t)  # tenferro as the producer (numpy makes such arrays read-only)
    x[2, 3] = 9.0
    assert z[2, 3] == 9.0
    del t, y
    assert z[0, 0] == 42.0  # z keeps the memory alive on its own


def test_dlpack_strided_and_complex():
    x = (np.arange(24) + 1j * np.arange(24)).astype(np.complex64).reshape(4, 6)[::2, ::-3]
    t = tenferro.from_dlpack(x)
    assert np.array_equal(t.numpy(), x)
    assert np.array_equal(np.from_dlpack(t), x)


def test_torch_roundtrip():
    torch = pytest.importorskip("torch")
    a = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    t = tenferro.from_dlpack(a)
    a[1, 1] = 100.0
    assert t.numpy()[1, 1] == 100.0
    back = torch.from_dlpack(t)
    back[0, 0] = -1.0
    assert a[0, 0] == -1.0


@pytest.mark.parametrize("opts", [{}, {"optimize": "greedy"}, {"optimize": "dp"}, {"memory_limit": 64},
                                  {"order": "col"}, {"cache": False, "seed": 3}])
def test_options(opts):
    rng = np.random.default_rng(5)
    ops = operands("ab,bc,cd,de->ae", np.float64, rng)
    got = tenferro.einsum("ab,bc,cd,de->ae", *ops, **opts)
    assert np.allclose(got, np.einsum("ab,bc,cd,de->ae", *ops))
    if opts.get("order") == "col":
        assert got.flags.f_contiguous


def test_einsum_path_and_cost():
    ops = [np.ones((8, 8))] * 4
    path, cost = tenferro.einsum_path("ab,bc,cd,de->ae", *ops)
    assert len(path) == 3 and cost["flops"] > 0 and cost["slices"] == 1
    _, sliced = tenferro.einsum_path("ab,bc,cd,de->ae", *ops, memory_limit=64)
    assert sliced["slices"] > 1


def test_integer_label_form():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    assert np.allclose(tenferro.einsum(a, [10, 20], b, [20, 30], [10, 30]), a @ b)
    assert np.allclose(tenferro.einsum(a, [0, 1], b, [1, 2]), np.einsum(a, [0, 1], b, [1, 2]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tropical_semirings(dtype):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((4, 5)).astype(dtype)
    want = {"maxplus": (a[:, :, None] + b[None]).max(1), "minplus": (a[:, :, None] + b[None]).min(1),
            "maxtimes": (np.abs(a)[:, :, None] * np.abs(b)[None]).max(1)}
    for sr, w in want.items():
        x, y = (np.abs(a), np.abs(b)) if sr == "maxtimes" else (a, b)
        got = tenferro.einsum("ij,jk->ik", x, y, semiring=sr)
        assert got.dtype == dtype and np.allclose(got, w, rtol=1e-5)
    with pytest.raises(TypeError):
        tenferro.einsum("ij,jk->ik", a.astype(np.complex64), b.astype(np.complex64), semiring="maxplus")


def test_option_errors():
    with pytest.raises(TypeError, match="unknown einsum option"):
        tenferro.einsum("i->i", np.ones(2), path=1)
    with pytest.raises(tenferro.TenferroError, match="algo=magic"):
        tenferro.einsum("i->i", np.ones(2), optimize="magic")


def test_dlpack_versioned_capsules():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    t = tenferro.from_dlpack(x)

    class Producer:  # hands out tenferro's own versioned capsule
        def __dlpack__(self, **kw):
            return t.__dlpack__(**kw)

    u = tenferro.from_dlpack(Producer())  # asks max_version=(1, 0): a "dltensor_versioned" capsule
    x[1, 1] = 77
    assert u.numpy()[1, 1] == 77
    for versioned in (None, (1, 0)):
        cap = t.__dlpack__(max_version=versioned)
        del cap  # never consumed: the capsule's destructor calls the deleter (no leak, no crash)
    del t, u
    assert x[1, 1] == 77


def test_jax_roundtrip():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    a = jnp.arange(6.0).reshape(2, 3)  # float32 unless x64 is enabled
    t = tenferro.from_dlpack(a)
    v = t.numpy()
    assert v.ctypes.data == a.unsafe_buffer_pointer()  # the same memory
    b = jnp.from_dlpack(t)
    assert b.unsafe_buffer_pointer() == v.ctypes.data
    v[0, 0] = 42.0  # written through tenferro, seen by both jax arrays
    assert float(a[0, 0]) == 42.0 and float(b[0, 0]) == 42.0
