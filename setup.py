"""pip install . -- builds libtenferro_c.so (the stable C ABI, `make lib`: BLIS and LAPACKE from the
system) with the Makefile, puts it into the package, and compiles the extension tenferro._ext (the
einsum fast path) against it; the rest of the package reaches the library with ctypes
(docs/python.md). Needs numpy's headers (Debian: python3-numpy) and Python's (python3-dev)."""
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "build", "python"), exist_ok=True)  # egg-info and build files go there
OPT = os.environ.get("TENFERRO_OPT", "-O2 -march=native")
CAPI_VERSION = open(os.path.join(ROOT, "include/tenferro/capi.h")).read().split("#define TFE_CAPI_VERSION ")[1].split()[0]
LIBC = f"libtenferro_c.so.{CAPI_VERSION}"
_made = []


def make_lib():
    if not _made:
        subprocess.run(["make", "-C", ROOT, "lib", f"OPT={OPT}"], check=True)
        _made.append(True)


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        make_lib()
        dst = os.path.join(self.build_lib, "tenferro", LIBC)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, "build", "lib", LIBC), dst)
        # tenferro.hdf5 when libhdf5 is installed (its own small library, see Makefile)
        if shutil.which("pkg-config") and subprocess.run(["pkg-config", "--exists", "hdf5"]).returncode == 0 \
                or os.path.exists("/usr/include/hdf5/serial/hdf5.h"):
            subprocess.run(["make", "-C", ROOT, "build/python/libtenferro_hdf5.so", f"OPT={OPT}"], check=True)
            shutil.copyfile(os.path.join(ROOT, "build/python/libtenferro_hdf5.so"),
                            os.path.join(self.build_lib, "tenferro", "libtenferro_hdf5.so"))


class BuildExtAfterLibrary(build_ext):
    def run(self):
        make_lib()
        import numpy
        for ext in self.extensions:
            ext.include_dirs.append(numpy.get_include())
        super().run()


ext = Extension("tenferro._ext", ["python/tenferro/_ext.c"], include_dirs=[os.path.join(ROOT, "include")],
                library_dirs=[os.path.join(ROOT, "build", "lib")], libraries=["tenferro_c"],
                extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"],
                extra_link_args=["-Wl,-rpath,$ORIGIN"], optional=True)  # without it: the ctypes path only

setup(cmdclass={"build_py": BuildWithLibrary, "build_ext": BuildExtAfterLibrary}, ext_modules=[ext],
      options={"build": {"build_base": "build/python"}, "egg_info": {"egg_base": "build/python"}})
