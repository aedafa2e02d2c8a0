"""tenferro.hdf5 (pytest): every numpy dtype in both memory orders, nested paths, tropical kinds,
errors, and h5py reading what tenferro wrote (and the reverse)."""
import numpy as np
import pytest

import tenferro

h5 = pytest.importorskip("tenferro.hdf5")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64]


def sample(dtype, order):
    x = np.arange(24).reshape(2, 3, 4) + 0.5
    if np.dtype(dtype).kind == "c":
        x = x - 1j * np.arange(24).reshape(2, 3, 4)
    return np.array(x.astype(dtype), order=order)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_roundtrip(tmp_path, dtype, order):
    f = str(tmp_path / "t.h5")
    a = sample(dtype, order)
    h5.write(f, f"/{np.dtype(dtype).name}/{order}", a)
    b = h5.read(f, f"/{np.dtype(dtype).name}/{order}")
    assert b.dtype == a.dtype and np.array_equal(a, b)
    assert b.flags.f_contiguous if order == "F" else b.flags.c_contiguous  # the file's memory_order


def test_strided_nested_overwrite(tmp_path):
    f = str(tmp_path / "t.h5")
    a = np.arange(60.0).reshape(6, 10)[::2, ::-3]
    h5.write(f, "a/b/c", a)
    assert np.array_equal(h5.read(f, "/a/b/c"), a)
    with pytest.raises(tenferro.TenferroError, match="OVERWRITE"):
        h5.write(f, "a/b/c", a)
    h5.write(f, "a/b/c", a.T, overwrite=True)
    assert np.array_equal(h5.read(f, "a/b/c"), a.T)


def test_tropical_kind(tmp_path):
    f = str(tmp_path / "t.h5")
    h5.write(f, "mp", np.ones((2, 2), np.float32), semiring="maxplus")
    arr, kind = h5.read(f, "mp", with_kind=True)
    assert kind == "maxplus_f32" and arr.dtype == np.float32


def test_errors(tmp_path):
    with pytest.raises(tenferro.TenferroError, match="cannot read"):
        h5.read(str(tmp_path / "missing.h5"), "x")
    f = str(tmp_path / "t.h5")
    h5.write(f, "g/t", np.ones(3))
    with pytest.raises(tenferro.TenferroError, match="not a dataset"):
        h5.read(f, "g")
    with pytest.raises(tenferro.TenferroError, match="has no object"):
        h5.read(f, "nothing")


def test_h5py_both_ways(tmp_path):
    h5py = pytest.importorskip("h5py")
    f = str(tmp_path / "t.h5")
    a = sample(np.complex128, "F")
    h5.write(f, "z", a)
    with h5py.File(f, "r") as g:
        assert np.array_equal(g["z"][()], a)
        assert g["z"].attrs["memory_order"] in ("column_major", b"column_major")
    with h5py.File(f, "a") as g:
        g["from_h5py"] = sample(np.float32, "C")
    assert np.array_equal(h5.read(f, "from_h5py"), sample(np.float32, "C"))
