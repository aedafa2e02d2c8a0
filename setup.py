"""pip install . -- builds libtenferro.so with the Makefile (`make lib`: BLIS and LAPACKE from the
system) and puts it into the package, which loads it with ctypes (docs/python.md)."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "build", "python"), exist_ok=True)  # egg-info and build files go there


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        opt = os.environ.get("TENFERRO_OPT", "-O2 -march=native")
        subprocess.run(["make", "-C", ROOT, "lib", f"OPT={opt}"], check=True)
        version = open(os.path.join(ROOT, "include/tenferro/config.h")).read().split('TFE_VERSION_STRING "')[1].split('"')[0]
        src = os.path.join(ROOT, "build", "lib", f"libtenferro.so.{version}")
        dst = os.path.join(self.build_lib, "tenferro", "libtenferro.so")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
        # tenferro.hdf5 when libhdf5 is installed (its own small library, see Makefile)
        if shutil.which("pkg-config") and subprocess.run(["pkg-config", "--exists", "hdf5"]).returncode == 0 \
                or os.path.exists("/usr/include/hdf5/serial/hdf5.h"):
            subprocess.run(["make", "-C", ROOT, "build/python/libtenferro_hdf5.so", f"OPT={opt}"], check=True)
            shutil.copyfile(os.path.join(ROOT, "build/python/libtenferro_hdf5.so"),
                            os.path.join(self.build_lib, "tenferro", "libtenferro_hdf5.so"))


setup(cmdclass={"build_py": BuildWithLibrary},
      options={"build": {"build_base": "build/python"}, "egg_info": {"egg_base": "build/python"}})
