"""tenferro.linalg against numpy; tenferro.vjp / jvp (the C ABI's rrule / frule) against central
finite differences; the einsum fast path (tenferro._ext); devices (docs/python.md)."""
import numpy as np
import pytest

import tenferro

rng = np.random.default_rng(7)
L = tenferro.linalg


def spd(n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_linalg_matches_numpy(dtype):
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    a = rng.standard_normal((5, 3)).astype(dtype)
    if np.iscomplexobj(a):
        a = a + 1j * rng.standard_normal((5, 3)).astype(dtype)
    u, s, vh = L.svd(a)
    assert np.allclose((u * s) @ vh, a, atol=tol) and np.allclose(s, np.linalg.svd(a, compute_uv=False), atol=tol)
    q, r = L.qr(a)
    assert np.allclose(q @ r, a, atol=tol) and np.allclose(np.triu(r), r)
    m = (a.conj().T @ a + 3 * np.eye(3)).astype(dtype)
    w, v = L.eigh(m)
    assert np.allclose(w, np.linalg.eigvalsh(m), atol=tol * 10)
    c = L.cholesky(m)
    assert np.allclose(c @ c.conj().T, m, atol=tol * 10)
    perm, lo, up = L.lu(m)
    assert np.allclose(m[perm], lo @ up, atol=tol * 10)
    b = rng.standard_normal((3, 2)).astype(dtype)
    assert np.allclose(m @ L.solve(m, b), b, atol=tol * 10)
    assert np.allclose(L.inv(m) @ m, np.eye(3), atol=tol * 10)
    assert np.allclose(L.det(m), np.linalg.det(m), rtol=tol * 10)
    sign, logabs = L.slogdet(m)
    assert np.allclose(logabs, np.linalg.slogdet(m)[1], atol=tol * 10)


def test_linalg_batches_and_errors():
    m = spd(3, (4, 2))  # numpy's batch axes first
    assert np.allclose(L.inv(m), np.linalg.inv(m)) and np.allclose(L.det(m), np.linalg.det(m))
    assert np.allclose(L.solve(m, np.ones(3)[:, None] * np.ones((4, 2, 1, 1))), np.linalg.solve(m, np.ones((4, 2, 3, 1))))
    with pytest.raises(tenferro.TenferroError):
        L.cholesky(-np.eye(3))  # not positive definite: the C message
    x = np.arange(9.0).reshape(3, 3).T  # a transposed view (strides) goes in without a copy
    assert np.allclose(L.expm(x), L.expm(np.ascontiguousarray(x)))


def fd(f, xs, dxs, h=1e-6):
    plus = f(*[x + h * d for x, d in zip(xs, dxs)])
    minus = f(*[x - h * d for x, d in zip(xs, dxs)])
    return [(p - m) / (2 * h) for p, m in zip(plus, minus)]


def primal(name, expr=None):
    def f(*xs):
        ys = tenferro.vjp(name, *xs, expr=expr)[0]
        return [np.array(y) for y in (ys if isinstance(ys, tuple) else (ys,))]
    return f


# name, inputs, tangent shapes (symmetric tangents where only the lower triangle is read), outputs to test
CASES = [
    ("einsum", lambda: [rng.standard_normal((3, 4)), rng.standard_normal((4, 2))], "ij,jk->ik", False, None),
    ("einsum", lambda: [rng.standard_normal((3, 3, 2))], "iij->j", False, None),
    ("einsum", lambda: [rng.standard_normal((2, 3)), rng.standard_normal((3, 2))], "0 1,1 2->0 2", False, None),
    ("qr", lambda: [rng.standard_normal((4, 3))], None, False, None),
    ("svd", lambda: [rng.standard_normal((4, 3))], None, False, [1]),  # S (U, V have a sign gauge)
    ("eigh", lambda: [spd(3)], None, True, [0]),  # w
    ("cholesky", lambda: [spd(3)], None, True, None),
    ("lu", lambda: [spd(3) + np.diag([5.0, 0, 0])], None, False, None),
    ("solve", lambda: [spd(3), rng.standard_normal((3, 2))], None, False, None),
    ("inv", lambda: [spd(3)], None, False, None),
    ("det", lambda: [spd(3)], None, False, None),
    ("slogdet", lambda: [spd(3)], None, False, None),
    ("expm", lambda: [0.3 * rng.standard_normal((3, 3))], None, False, None),
    ("pinv", lambda: [rng.standard_normal((4, 3))], None, False, None),
    ("polar", lambda: [spd(3) + 0.2 * rng.standard_normal((3, 3))], None, False, None),
]


@pytest.mark.parametrize("name,make,expr,sym,outs", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_rules_against_finite_differences(name, make, expr, sym, outs):
    xs = make()
    dxs = [rng.standard_normal(x.shape) for x in xs]
    if sym:
        dxs = [d + np.swapaxes(d, -1, -2) for d in dxs]
    f = primal(name, expr)
    ys = f(*xs)
    fds = fd(f, xs, dxs)
    keep = outs if outs is not None else range(len(ys))
    # jvp: the tangents of the outputs
    _, dys = tenferro.jvp(name, xs, dxs, expr=expr)
    dys = dys if isinstance(dys, tuple) else (dys,)
    for i in keep:
        assert np.allclose(dys[i], fds[i], rtol=1e-5, atol=1e-6), (name, i)
    # vjp: <ct, J dx> = <J^T ct, dx> with random cotangents on the tested outputs
    cts = [rng.standard_normal(np.shape(y)) if i in keep else None for i, y in enumerate(ys)]
    _, pullback = tenferro.vjp(name, *xs, expr=expr)
    gs = pullback(*cts)
    lhs = sum(np.vdot(c, d) for c, d in zip(cts, fds) if c is not None)
    rhs = sum(np.vdot(g, d) for g, d in zip(gs, dxs))
    assert np.isclose(lhs, rhs, rtol=1e-5, atol=1e-6), (name, lhs, rhs)


def test_complex_einsum_rules():
    a = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    b = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    ct = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    y, pullback = tenferro.vjp("einsum", a, b, expr="ij,jk->ik")
    ga, gb = pullback(ct)
    assert np.allclose(y, a @ b)
    assert np.allclose(ga, ct @ b.conj().T) and np.allclose(gb, a.conj().T @ ct)  # PyTorch's convention
    _, dy = tenferro.jvp("einsum", (a, b), (b.T, None), expr="ij,jk->ik")
    assert np.allclose(dy, b.T @ b)


def test_rule_errors():
    with pytest.raises(TypeError, match="explicit output"):
        tenferro.vjp("einsum", np.ones((2, 2)), expr="ij")
    with pytest.raises(tenferro.TenferroError):
        tenferro.vjp("einsum", np.ones((2, 2)), np.ones((3, 2)), expr="ij,jk->ik")
    y, pullback = tenferro.vjp("inv", np.eye(2))
    with pytest.raises(TypeError):
        pullback()


def test_fast_path():
    fast = tenferro._fast
    if fast is None:
        pytest.skip("built without the extension")
    fast.cache_clear()
    a, b = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    for _ in range(3):
        c = tenferro.einsum("ij,jk->ik", a, b)
        assert np.allclose(c, a @ b) and c.flags.owndata and c.flags.c_contiguous  # numpy's own memory
    info = fast.cache_info()
    assert info["misses"] == 1 and info["hits"] == 2
    x = rng.standard_normal((6, 5))[::-2, 1::2]  # (3, 2), negative and non-unit strides: a plan of their own
    y = np.asfortranarray(rng.standard_normal((2, 4)))
    for dt in (np.float32, np.complex128, np.int64):
        xx, yy = x.astype(dt)[:, ::-1], y.astype(dt)
        assert np.allclose(tenferro.einsum("ij,jk->ki", xx, yy), np.einsum("ij,jk->ki", xx, yy), rtol=1e-5)
    assert np.allclose(tenferro.einsum("i,i->", a[0], b[0]), a[0] @ b[0])
    assert tenferro.einsum("ij->ij", np.ones((0, 3))).shape == (0, 3)  # empty: the Python path
    c = tenferro.einsum(a, [0, 1], b, [1, 2], [0, 2])  # integer labels: the Python path, tenferro's memory
    assert np.allclose(c, a @ b) and not c.flags.owndata
    # options on the fast path: in the key, passed to the plan
    info = fast.cache_info()
    c = tenferro.einsum("ij,jk->ik", a, b, order="col", optimize="greedy")
    assert np.allclose(c, a @ b) and c.flags.owndata and c.flags.f_contiguous
    mp = tenferro.einsum("ij,jk->ik", a, b, semiring="maxplus")
    assert np.allclose(mp, np.max(a[:, :, None] + b[None, :, :], axis=1)) and mp.flags.owndata
    assert fast.cache_info()["misses"] == info["misses"] + 2
    tenferro.einsum("ij,jk->ik", a, b, cache=False)  # a plan for this call only
    assert fast.cache_info()["entries"] == info["entries"] + 2
    with pytest.raises(TypeError):
        tenferro.einsum("ij,jk->ik", a, b, optimise="greedy")  # unknown keyword: the Python path raises
    with pytest.raises(tenferro.TenferroError, match="algo=nope"):
        tenferro.einsum("ij,jk->ik", a, b, optimize="nope")
    with pytest.raises(tenferro.TenferroError, match="size"):
        tenferro.einsum("ij,jk->ik", a, np.ones((3, 2)))


def test_given_path():
    a, b, c = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal((5, 2))
    ref = a @ b @ c
    for path in ([(1, 2), (0, 1)], ["einsum_path", (0, 1), (0, 1)], np.einsum_path("ij,jk,kl->il", a, b, c)[0]):
        assert np.allclose(tenferro.einsum("ij,jk,kl->il", a, b, c, optimize=path), ref)
    pairs, _ = tenferro.einsum_path("ij,jk,kl->il", a, b, c, optimize=[(1, 2), (0, 1)])
    assert pairs == [(1, 2), (0, 1)]
    assert np.allclose(tenferro.einsum("ij,jk,kl->il", a, b, c, greedy_alpha=0.5, dp_max=2, write_weight=1.0), ref)
    with pytest.raises(tenferro.TenferroError):
        tenferro.einsum("ij,jk,kl->il", a, b, c, optimize=[(0, 1)])  # one step short


def test_fast_path_threads():
    # runs above 65536 multiply-adds release the GIL: threads share one plan of the table
    import threading
    a, b = rng.standard_normal((48, 48)), rng.standard_normal((48, 48))
    ref, errors = a @ b, []

    def work():
        for _ in range(5):
            if not np.allclose(tenferro.einsum("ij,jk->ik", a, b), ref):
                errors.append("mismatch")
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_devices():
    d = tenferro.devices()
    assert d[0]["name"] == "cpu:0" and d[0]["kind"] == "cpu"
    try:
        status = tenferro.load_backend("auto")
        assert len(tenferro.devices()) > len(d) and status
    except tenferro.TenferroError as e:
        assert "no GPU" in str(e)
