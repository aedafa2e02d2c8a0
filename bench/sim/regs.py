#!/usr/bin/env python3
"""bench/sim/regs.py — compiles the copy kernels' source (bench/sim/dump_src output, tfe_perm2d* of
include/tenferro/gpu/kernels.h) with NVRTC for an architecture (default sm_90) and each element
kind, and prints ptxas's register, spill and shared-memory lines. Needs libnvrtc, no GPU.
  bench/sim/regs.py SOURCE [sm_90]"""
import ctypes, sys

src = open(sys.argv[1], "rb").read()
arch = sys.argv[2] if len(sys.argv) > 2 else "sm_90"
lib = ctypes.CDLL("libnvrtc.so")
kinds = [("f32", b"float", b"0"), ("f64", b"double", b"0"), ("c64", b"float", b"1"), ("c128", b"double", b"1")]
bad = 0
for name, r, c in kinds:
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None):
        sys.exit("nvrtcCreateProgram failed")
    opts = [b"-DTFE_R=" + r, b"-DTFE_CPLX=" + c, b"--std=c++14", b"--gpu-architecture=" + arch.encode(), b"-Xptxas", b"-v"]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace")
    if rc:
        print(name, "COMPILE FAILED\n", text)
        bad = 1
        continue
    fn = None
    for line in text.splitlines():
        if "Compiling entry function" in line:
            fn = line.split("'")[1]
        elif fn and fn.startswith("tfe_perm2d") and ("registers" in line or "spill" in line or "stack frame" in line):
            print(f"{name:5s} {fn}: {line.split('info    :')[-1].strip()}")
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
sys.exit(bad)
