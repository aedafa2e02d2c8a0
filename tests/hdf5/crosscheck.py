"""tests/hdf5/crosscheck.py TEST_HDF5 DIR -- tenferro's HDF5 files against h5py, both ways.

1. TEST_HDF5 write DIR/tfe.h5; h5py reads every dataset: shape, dtype, values, attributes.
2. h5py writes DIR/h5py.h5 to docs/formats/hdf5.md; TEST_HDF5 read checks it.
Element (a, b, c) of the 2x3x4 test tensor is k + 0.5 - k*1j (floats, complex) or k (integers),
k = 100a + 10b + c, whatever the memory order (the dataset holds the logical shape)."""
import os
import subprocess
import sys

import h5py
import numpy as np

NP = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128,
      "i32": np.int32, "i64": np.int64, "maxplus_f32": np.float32, "maxplus_f64": np.float64,
      "minplus_f32": np.float32, "minplus_f64": np.float64, "maxtimes_f32": np.float32,
      "maxtimes_f64": np.float64}


def expected(kind):
    a, b, c = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")
    k = (100 * a + 10 * b + c).astype(np.float64)
    dt = np.dtype(NP[kind])
    if dt.kind == "c":
        return (k + 0.5 - 1j * k).astype(dt)
    if dt.kind == "f":
        return (k + 0.5).astype(dt)
    return k.astype(dt)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check_tenferro_file(path):
    with h5py.File(path, "r") as f:
        n = 0
        for kind in NP:
            for order in ("row", "col"):
                ds = f[f"/{kind}/{order}"]
                want = expected(kind)
                got = ds[()]
                assert got.shape == (2, 3, 4), (kind, order, got.shape)
                assert got.dtype == want.dtype, (kind, order, got.dtype)
                assert np.array_equal(got, want), (kind, order)
                assert int(ds.attrs["format_version"]) == 1
                assert text(ds.attrs["dtype"]) == kind
                mo = "column_major" if order == "col" else "row_major"
                assert text(ds.attrs["memory_order"]) == mo, (kind, order, ds.attrs["memory_order"])
                n += 1
    print(f"crosscheck: h5py read the {n} datasets tenferro wrote (shape, dtype, values, attributes)")


def write_h5py_file(path):
    with h5py.File(path, "w") as f:
        for kind, order in [("f32", "row"), ("f32", "col"), ("f64", "row"), ("f64", "col"), ("c64", "row"),
                            ("c128", "col"), ("i32", "row"), ("i64", "col"), ("maxplus_f64", "row")]:
            ds = f.create_dataset(f"/{kind}/{order}", data=expected(kind))  # h5py: compound {r, i}
            ds.attrs["format_version"] = np.int32(1)
            ds.attrs["dtype"] = kind
            ds.attrs["memory_order"] = "column_major" if order == "col" else "row_major"
        z = expected("c128")
        ri = np.dtype([("real", "<f8"), ("imag", "<f8")])
        arr = np.empty(z.shape, ri)
        arr["real"], arr["imag"] = z.real, z.imag
        f.create_dataset("c128_realimag", data=arr)  # no attributes: a file from another writer


def main():
    tool, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    mine = os.path.join(out, "tfe.h5")
    subprocess.run([tool, "write", mine], check=True)
    check_tenferro_file(mine)
    theirs = os.path.join(out, "h5py.h5")
    write_h5py_file(theirs)
    subprocess.run([tool, "read", theirs], check=True)
    print("crosscheck: ok")


if __name__ == "__main__":
    main()
