# tenferro — header-only C11 tensor library. `make help` lists the targets.
CC       ?= cc
PYTHON   ?= python3
BUILD    ?= build
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

# Debian keeps BLIS under an architecture directory without a pkg-config file: look for it.
BLIS_LIBDIR ?= $(firstword $(wildcard $(foreach f,openmp pthread serial,/usr/lib/$(MULTIARCH)/blis-$(f))) /usr/lib/$(MULTIARCH))
OPENMP   ?= -fopenmp
OPT      ?= -O2 -march=native
WARN     := -std=c11 -Wall -Wextra -Wpedantic -Werror
CFLAGS   ?= -g
ALL_CFLAGS = $(WARN) $(OPT) $(OPENMP) $(CFLAGS) -Iinclude
LDLIBS   = -L$(BLIS_LIBDIR) -Wl,-rpath,$(BLIS_LIBDIR) -lblis -llapacke -lm $(OPENMP) -ldl -lpthread
TEST_LIBS = -lcmocka

HDRS      := $(shell find include -name '*.h')
TESTS     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(filter-out tests/%__part.c,$(wildcard tests/test_*.c)))
EXAMPLES  := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
BENCHES   := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
TOOLS     := $(patsubst tools/%.c,$(BUILD)/%,$(wildcard tools/*.c))

DEB_PACKAGES := build-essential python3 libblis-openmp-dev liblapacke-dev libcmocka-dev clang libclang-rt-14-dev \
  g++ pkg-config cmake gfortran libhdf5-dev python3-h5py \
  python3-dev python3-numpy python3-pytest python3-venv python3-setuptools python3-pip python3-wheel python3-torch \
  graphviz python3-matplotlib

# The library (make lib): the one implementation unit lib/tenferro.c, position-independent, every
# symbol hidden but the public tfe_ API (TFE_API carries visibility default; lib/tenferro.map).
VERSION  := $(shell sed -n 's/^\#define TFE_VERSION_STRING "\(.*\)"/\1/p' include/tenferro/config.h)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
# LIB_O after OPT: the library's unit at -O3, where gcc unswitches and clones the kernels' loops
# over a runtime op or mode; at -O2 it did neither (docs/linkage.md, "Optimization level").
LIB_O    ?= -O3
LIB_CFLAGS = $(WARN) $(OPT) $(LIB_O) $(OPENMP) $(CFLAGS) -Iinclude -fPIC -fvisibility=hidden
LIB_A    := $(BUILD)/lib/libtenferro.a
LIB_SO   := $(BUILD)/lib/libtenferro.so.$(VERSION)
# A program in declarations mode linked against build/lib (the tests of the library itself).
LIB_LINK = -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) -ltenferro
CXX_WARN := -Wall -Wextra -Wpedantic -Werror

.PHONY: plots test-plots tree-svg tree-example
.PHONY: all help test test-unit test-examples test-sanitize test-tsan test-clang check-gen gen bench bench-permute install deps clean run bench-einsum fuzz \
  lib test-cxx test-install check-headers bench-compile bench-xsmm test-optout test-gpu test-capi test-fortran test-hdf5 test-python bench-python

all: $(TOOLS) $(EXAMPLES) $(TESTS)

help:
	@echo "make deps            install the Debian packages (as root) or print the command"
	@echo "make run             build and run the main job (see README)"
	@echo "make test            every suite and example, headers on their own, the library, C++, install, opt-outs"
	@echo "make test-sanitize   the same under AddressSanitizer + UndefinedBehaviorSanitizer"
	@echo "make test-clang      the same built by clang (without OpenMP or -march)"
	@echo "make test-tsan       the TSAN_TESTS suites (concurrency stress) under ThreadSanitizer"
	@echo "make bench           build the benchmark programs; bench-permute runs the permutation table"
	@echo "make check-gen       verify that include/tenferro/gen matches gen/gen_kinds.py"
	@echo "make check-headers   compile every header on its own (default and TFE_HEADER modes)"
	@echo "make test-gpu        the GPU backend: loader and conformance suites (needs a GPU; docs/gpu.md)"
	@echo "make lib             build/lib/libtenferro.a and libtenferro.so (docs/linkage.md)"
	@echo "make install PREFIX=/usr/local   headers, libraries, pkg-config file, CMake package"
	@echo "make test-cxx        a C++17 program (g++ and clang++) against the library"
	@echo "make test-capi       a client of tenferro/capi.h alone against libtenferro.so"
	@echo "make test-fortran    examples/fortran/contract.f90 (gfortran) against the stable C ABI"
	@echo "make test-hdf5       tenferro/io/hdf5.h: the C suite and the cross-check with h5py"
	@echo "make test-python     pip install . into a venv, then tests/python (pytest)"
	@echo "make bench-python    tenferro.einsum per call against numpy.einsum and opt_einsum (2x2 and more)"
	@echo "make test-install    install into a temporary prefix; build C, C++ and CMake clients"
	@echo "make bench-xsmm      build/bench/bench_chain_xsmm: bench_chain --xsmm, libxsmm as a peer (needs libxsmm-dev)"
	@echo "make bench-compile   compile times of the three linkage modes (docs/linkage.md)"
	@echo "make test-optout     a unit without ad, linalg, io and all kinds but f64: faster, runs"
	@echo "make plots           docs/img/bench_einsum.png, bench_permute.png from the benchmark pages (matplotlib)"
	@echo "make tree-svg INSTANCE=F.json [TREE_PATH=greedy]   build/tree.svg: the contraction tree (Graphviz)"
	@echo "make tree-example    docs/img/tree_example.svg, the rendered tree of docs/einsum.md"

# A test is tests/test_X.c plus any tests/test_X.*__part.c (extra translation units).
$(BUILD)/tests/%: tests/%.c $(HDRS) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(wildcard tests/$*.*__part.c) $(TEST_LIBS) $(LDLIBS)

$(BUILD)/examples/%: examples/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O3 -o $@ $< $(LDLIBS)

# bench_chain with --xsmm: libxsmm (Debian libxsmm-dev) as a peer of the chain's step GEMMs.
# Optional and bench-only: not in `make bench`, `all` or `test`.
XSMM_LIBS ?= -lxsmm
bench-xsmm: $(BUILD)/bench/bench_chain_xsmm
$(BUILD)/bench/bench_chain_xsmm: bench/bench_chain.c bench/chain_xsmm.h $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O3 -DTFE_BENCH_XSMM -o $@ $< $(XSMM_LIBS) $(LDLIBS)

$(BUILD)/%: tools/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TOOL_O) -o $@ $< $(LDLIBS)

test: check-gen check-headers test-unit test-examples test-optout test-cxx test-install test-capi test-fortran test-hdf5 test-python test-plots

test-unit: $(TESTS) $(TOOLS)
	@mkdir -p build
	@set -e; for t in $(TESTS); do echo "== $$t"; TFE_TOOL=$(BUILD)/tfe-einsum $$t; done

# The GPU backend's suites on a machine with a GPU (docs/gpu.md): the loader, then the
# conformance suite against the CPU, which fails here when no GPU is found (test-unit skips it).
test-gpu: $(BUILD)/tests/test_gpu_loader $(BUILD)/tests/test_gpu_conformance
	$(BUILD)/tests/test_gpu_loader
	TFE_GPU_REQUIRED=1 $(BUILD)/tests/test_gpu_conformance

test-examples: $(EXAMPLES)
	@set -e; for e in $(EXAMPLES); do echo "== $$e"; (cd examples && ../$$e); done

# -O0: the sanitized units compile 3.4x faster than at -O1 (34 s against 116 s of CPU for
# tests/test_contract.c; UBSan's checks dominate at -O1) and the quick suites still run in seconds.
# The tool is built at -O3 (TOOL_O), except under the sanitizers: UBSan at -O3 made it the
# slowest unit of that build.
TOOL_O ?= -O3
SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
test-sanitize:
	$(MAKE) test-unit test-examples BUILD=build-san OPT="-O0 $(SAN)" TOOL_O= \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 TFE_TEST_QUICK=1

# ThreadSanitizer over the suites that share caches and pools between threads (the runtime's
# suites add themselves to TSAN_TESTS). Built without OpenMP and with BLIS on one thread: TSan
# does not see libgomp's synchronization and reports its barriers as races, so the run checks
# tenferro's own sharing between user threads (caches, workspace pools, state), which is what
# the pthreads of these suites exercise. No suppressions.
TSAN_TESTS := test_stress test_runtime test_runtime_pool
TSAN_OPT   := -O1 -g -fsanitize=thread
test-tsan:
	$(MAKE) BUILD=build-tsan OPT="$(TSAN_OPT)" OPENMP= $(patsubst %,build-tsan/tests/%,$(TSAN_TESTS))
	@set -e; for t in $(TSAN_TESTS); do echo "== build-tsan/tests/$$t (ThreadSanitizer)"; \
	  TSAN_OPTIONS="halt_on_error=1 exitcode=66" BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 TFE_TEST_QUICK=1 \
	  build-tsan/tests/$$t; done

# clang, without OpenMP and without -march: the vector kernels run through run-time dispatch
# (test-sanitize builds without -march too, with gcc; `make test` inlines them)
test-clang:
	$(MAKE) test-unit test-examples CC=clang BUILD=build-clang OPENMP= OPT=-O2 TFE_TEST_QUICK=1

gen:
	$(PYTHON) gen/gen_kinds.py

check-gen:
	@rm -rf $(BUILD)/gen-check && mkdir -p $(BUILD)/gen-check
	@$(PYTHON) gen/gen_kinds.py $(BUILD)/gen-check
	@diff -r include/tenferro/gen $(BUILD)/gen-check && echo "gen: up to date"

bench: $(BENCHES) $(TOOLS)

# One line per pattern of ../shared/bench/permutation_patterns.json (PATTERNS=... to override),
# kept in $(BUILD)/bench-permute.txt and plotted to $(BUILD)/bench_permute.png.
bench-permute: $(BUILD)/bench/bench_permute
	$(BUILD)/bench/bench_permute $(PATTERNS) --threads2 | tee $(BUILD)/bench-permute.txt
	$(PLOT_PYTHON) bench/plot_bench.py permute --input $(BUILD)/bench-permute.txt --out $(BUILD)/bench_permute.png

# ---- pictures (issue 20): benchmark plots (matplotlib) and contraction trees (Graphviz) -------------
# Debian's matplotlib is seen by /usr/bin/python3 (a pyenv or venv python may lack it).
PLOT_PYTHON ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,$(PYTHON))
plots:
	$(PLOT_PYTHON) bench/plot_bench.py einsum --table docs/bench-einsum.md --out docs/img/bench_einsum.png
	$(PLOT_PYTHON) bench/plot_bench.py permute --input docs/benchmarks.md --out docs/img/bench_permute.png
# The quick check in `make test`: both plots parsed and drawn from the pages into $(BUILD)/plots.
test-plots:
	$(PLOT_PYTHON) bench/plot_bench.py check --out $(BUILD)/plots
INSTANCE ?= data/str_nw_mera_open_26.json
TREE_PATH ?= auto
tree-svg: $(BUILD)/tfe-einsum
	$(BUILD)/tfe-einsum --instance $(INSTANCE) --path $(TREE_PATH) --plan-only --print-tree dot 2>/dev/null > $(BUILD)/tree.dot
	dot -Tsvg $(BUILD)/tree.dot > $(BUILD)/tree.svg
	@echo "tree-svg: $(BUILD)/tree.svg"
tree-example: $(BUILD)/tfe-einsum
	@mkdir -p $(BUILD)/tree-example
	printf '{"name": "tree_example", "format_string": "abx,bc,cd,de->ae", "shapes": [[60, 70, 5], [70, 80], [80, 70], [70, 60]]}' \
	  > $(BUILD)/tree-example/tree_example.json
	$(BUILD)/tfe-einsum --instance $(BUILD)/tree-example/tree_example.json --path dp --plan-only --print-tree dot 2>/dev/null \
	  | dot -Tsvg > docs/img/tree_example.svg
	$(BUILD)/tfe-einsum --instance $(BUILD)/tree-example/tree_example.json --path dp --plan-only --print-tree json 2>/dev/null \
	  > docs/img/tree_example.json

bench-kernels: $(BUILD)/bench/bench_kernels
	$(BUILD)/bench/bench_kernels

# ---- the library ---------------------------------------------------------------------------------
$(BUILD)/lib/tenferro.o: lib/tenferro.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

# The stable C ABI (include/tenferro/capi.h): a declarations-mode unit, compiled in a second.
$(BUILD)/lib/capi.o: lib/capi.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

LIB_OBJS := $(BUILD)/lib/tenferro.o
$(LIB_A): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJS) lib/tenferro.map
	$(CC) -shared -o $@ $(LIB_OBJS) -Wl,-soname,libtenferro.so.$(SOVERSION) -Wl,--version-script=lib/tenferro.map \
	  -Wl,--no-undefined $(LDLIBS)
	ln -sf libtenferro.so.$(VERSION) $(BUILD)/lib/libtenferro.so.$(SOVERSION)
	ln -sf libtenferro.so.$(SOVERSION) $(BUILD)/lib/libtenferro.so

# The stable C ABI in a library of its own, libtenferro_c.so.<TFE_CAPI_VERSION>: the implementation
# unit, the ABI unit lib/capi.c and the GPU companion (library mode, for tfe_capi_backend_load)
# linked together, with a version script made from include/tenferro/capi.h that exports the
# header's entry points (symbol version TENFERRO_C_<N>) and nothing else. test-capi checks that
# `nm -D` lists exactly the header's names.
CAPI_VERSION := $(shell sed -n 's/^\#define TFE_CAPI_VERSION \([0-9]*\).*/\1/p' include/tenferro/capi.h)
LIBC_SO := $(BUILD)/lib/libtenferro_c.so.$(CAPI_VERSION)
CAPI_NAMES = sed -n 's/^TFE_CAPI_EXPORT [^(]*[ *]\(tfe_[a-z_0-9]*\)(.*/\1/p' include/tenferro/capi.h
$(BUILD)/lib/gpu_c.o: include/tenferro/gpu/tenferro_gpu.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -DTFE_HEADER -c -o $@ $<
$(BUILD)/lib/tenferro_c.map: include/tenferro/capi.h
	@mkdir -p $(dir $@)
	{ echo "TENFERRO_C_$(CAPI_VERSION) {"; echo "  global:"; $(CAPI_NAMES) | sed 's/.*/    &;/'; \
	  echo "  local: *;"; echo "};"; } > $@
$(LIBC_SO): $(BUILD)/lib/tenferro.o $(BUILD)/lib/capi.o $(BUILD)/lib/gpu_c.o $(BUILD)/lib/tenferro_c.map
	$(CC) -shared -o $@ $(filter %.o,$^) -Wl,-soname,libtenferro_c.so.$(CAPI_VERSION) \
	  -Wl,--version-script=$(BUILD)/lib/tenferro_c.map -Wl,--no-undefined $(LDLIBS)
	ln -sf libtenferro_c.so.$(CAPI_VERSION) $(BUILD)/lib/libtenferro_c.so
CAPI_LINK = -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) -ltenferro_c

# Only tfe_ names leave the library: `nm -D` shows no tfe__ internal.
lib: $(LIB_A) $(LIB_SO) $(LIBC_SO)
	@if nm -D --defined-only $(LIB_SO) | grep -q ' tfe__'; then \
	  echo "lib: tfe__ internals exported:"; nm -D --defined-only $(LIB_SO) | grep ' tfe__'; exit 1; fi
	@echo "lib: $(LIB_SO) ($$(nm -D --defined-only $(LIB_SO) | grep -c ' tfe_') tfe_ symbols), $(LIB_A), $(LIBC_SO) (the stable C ABI)"

# ---- install (DESTDIR honoured): headers, libraries with their soname links, pkg-config, CMake ----
install: lib
	mkdir -p $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/cmake/tenferro
	cp -r include/tenferro.h include/tenferro $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libtenferro.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtenferro.so.$(SOVERSION)
	ln -sf libtenferro.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libtenferro.so
	install -m 755 $(LIBC_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libtenferro_c.so.$(CAPI_VERSION) $(DESTDIR)$(LIBDIR)/libtenferro_c.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	  -e 's|@VERSION@|$(VERSION)|g' -e 's|@BLIS_LIBDIR@|$(BLIS_LIBDIR)|g' -e 's|@OPENMP@|$(OPENMP)|g' \
	  tenferro.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/tenferro.pc
	for f in tenferroConfig tenferroConfigVersion; do \
	  sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@SOVERSION@|$(SOVERSION)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@BLIS_LIBDIR@|$(BLIS_LIBDIR)|g' -e 's|@OPENMP@|$(OPENMP)|g' \
	    cmake/$$f.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/tenferro/$$f.cmake; done

# ---- opt-outs: examples/readme.c without ad, linalg, io and every kind but f64 compiles faster
# than with everything, and runs; a call into a room left out is a link error that names it.
OPTOUT_FLAGS := -DTFE_NO_AD -DTFE_NO_LINALG -DTFE_NO_IO -DTFE_ONLY_KIND_F64
test-optout:
	@mkdir -p $(BUILD)/optout
	@u() { bash -c 'TIMEFORMAT=%3U; time "$$@" >/dev/null' _ "$$@" 2>&1 | tail -1; }; \
	min() { awk -v a="$$1" -v b="$$2" 'BEGIN { print (a < b ? a : b) }'; }; \
	full=9999; opt=9999; for i in 1 2 3; do \
	  full=$$(min $$full $$(u $(CC) $(ALL_CFLAGS) -fsyntax-only examples/readme.c)); \
	  opt=$$(min $$opt $$(u $(CC) $(ALL_CFLAGS) $(OPTOUT_FLAGS) -fsyntax-only examples/readme.c)); done; \
	$(CC) $(ALL_CFLAGS) $(OPTOUT_FLAGS) -c -o $(BUILD)/optout/optout.o examples/readme.c; \
	echo "test-optout: readme.c front end (parse and check, best of 3, user time): $$full s with everything, $$opt s with $(OPTOUT_FLAGS)"; \
	$(CC) $(ALL_CFLAGS) -o $(BUILD)/optout/readme $(BUILD)/optout/optout.o $(LDLIBS); \
	(cd examples && ../$(BUILD)/optout/readme >/dev/null 2>&1) || { echo "test-optout: the opt-out build failed to run"; exit 1; }; \
	awk -v a="$$opt" -v b="$$full" 'BEGIN { exit !(a < 0.8 * b) }' || { echo "test-optout: front end not 20% faster"; exit 1; }
	@printf '#include <tenferro.h>\nint main(void) {\n  double a[4] = {1, 0, 0, 1};\n  int64_t d[2] = {2, 2};\n  tfe_view_f64 v;\n  tfe_tensor_f64 q = {0}, r = {0};\n  if (tfe_wrap(&v, a, 4, 2, d, NULL, 0, TFE_COLMAJOR)) return 1;\n  return tfe_qr(&v, false, &q, &r) != TFE_OK;\n}\n' > $(BUILD)/optout/qr.c
	@if $(CC) $(ALL_CFLAGS) -DTFE_NO_LINALG -o $(BUILD)/optout/qr $(BUILD)/optout/qr.c $(LDLIBS) 2>$(BUILD)/optout/qr.err; then \
	  echo "test-optout: a call into linalg linked with TFE_NO_LINALG"; exit 1; fi; \
	grep -q "undefined reference to .tfe_qr_f64" $(BUILD)/optout/qr.err || { cat $(BUILD)/optout/qr.err; exit 1; }; \
	echo "test-optout: with TFE_NO_LINALG, tfe_qr is a link error: $$(grep -o 'undefined reference to .tfe_qr_f64.' $(BUILD)/optout/qr.err | head -1)"

bench-compile:
	bench/bench_compile.sh

# ---- C++, install check, headers on their own ------------------------------------------
# tests/test_cxx.cpp built by g++ and by clang++ (C++17) against build/lib/libtenferro.so.
$(BUILD)/tests/test_cxx_gxx: tests/test_cxx.cpp $(HDRS) $(LIB_SO)
	@mkdir -p $(dir $@)
	g++ -std=c++17 $(CXX_WARN) -O2 -Iinclude -o $@ $< $(LIB_LINK)
$(BUILD)/tests/test_cxx_clangxx: tests/test_cxx.cpp $(HDRS) $(LIB_SO)
	@mkdir -p $(dir $@)
	clang++ -std=c++17 $(CXX_WARN) -O2 -Iinclude -o $@ $< $(LIB_LINK)
test-cxx: lib $(BUILD)/tests/test_cxx_gxx $(BUILD)/tests/test_cxx_clangxx
	@set -e; for t in $(BUILD)/tests/test_cxx_gxx $(BUILD)/tests/test_cxx_clangxx; do echo "== $$t"; $$t; done

# make lib && make install PREFIX=<tmp>, then C, C++17 and CMake clients of the installed copy.
# A client of the stable C ABI that sees include/tenferro/capi.h only; every entry point of the
# header must be a dynamic symbol of the library.
$(BUILD)/tests/test_capi: tests/capi/test_capi.c include/tenferro/capi.h $(LIBC_SO)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -Iinclude -o $@ $< $(CAPI_LINK)

test-capi: lib $(BUILD)/tests/test_capi
	@$(CAPI_NAMES) | sort > $(BUILD)/lib/capi_names.header
	@nm -D --defined-only $(LIBC_SO) | awk '$$2 != "A" { sub(/@.*/, "", $$3); print $$3 }' | sort > $(BUILD)/lib/capi_names.exported
	@diff $(BUILD)/lib/capi_names.header $(BUILD)/lib/capi_names.exported >/dev/null || { \
	  echo "test-capi: nm -D of $(LIBC_SO) differs from capi.h's entry points (< header only, > exported only):"; \
	  diff $(BUILD)/lib/capi_names.header $(BUILD)/lib/capi_names.exported; exit 1; }
	@echo "test-capi: nm -D $(LIBC_SO) lists exactly the $$(wc -l < $(BUILD)/lib/capi_names.header) entry points of capi.h (version TENFERRO_C_$(CAPI_VERSION)), soname $$(objdump -p $(LIBC_SO) | awk '/SONAME/ { print $$2 }')"
	$(BUILD)/tests/test_capi
	$(CC) $(WARN) -O1 -g $(SAN) -Iinclude -o $(BUILD)/tests/test_capi_san tests/capi/test_capi.c $(CAPI_LINK)
	$(BUILD)/tests/test_capi_san >/dev/null && echo "test-capi: clean under ASan + UBSan (the library's allocations included)"

# examples/fortran/contract.f90 (Fortran 2008, ISO_C_BINDING) against the stable C ABI of libtenferro.so.
ifeq ($(origin FC),default)
FC := gfortran
endif
$(BUILD)/examples/fortran/contract: examples/fortran/contract.f90 $(LIBC_SO)
	@mkdir -p $(dir $@)
	$(FC) -std=f2008 -Wall -Wextra -Werror -O2 -J $(dir $@) -o $@ $< $(CAPI_LINK)

test-fortran: lib $(BUILD)/examples/fortran/contract
	$(BUILD)/examples/fortran/contract

# tenferro/io/hdf5.h (opt-in, links Debian's libhdf5): the C suite, then the cross-check with h5py
# (Debian's python3-h5py, hence /usr/bin/python3): files each side wrote, read by the other.
HDF5_CFLAGS := $(shell pkg-config --cflags hdf5 2>/dev/null || echo -I/usr/include/hdf5/serial)
HDF5_LIBS   := $(shell pkg-config --libs hdf5 2>/dev/null || echo -lhdf5_serial)
H5PY_PYTHON ?= /usr/bin/python3
$(BUILD)/tests/test_hdf5: tests/hdf5/test_hdf5.c $(HDRS) tests/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(HDF5_CFLAGS) -Itests -o $@ $< $(TEST_LIBS) $(HDF5_LIBS) $(LDLIBS)

test-hdf5: $(BUILD)/tests/test_hdf5
	$(BUILD)/tests/test_hdf5
	$(H5PY_PYTHON) tests/hdf5/crosscheck.py $(BUILD)/tests/test_hdf5 $(BUILD)/hdf5-crosscheck

# The HDF5 part of the Python package (python/tenferro/_hdf5.c): its own copy of tenferro (default
# mode, without einsum, linalg, ad) and libhdf5, meeting libtenferro through DLPack; setup.py
# builds it when libhdf5 is there.
$(BUILD)/python/libtenferro_hdf5.so: python/tenferro/_hdf5.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) $(OPENMP) $(CFLAGS) -fPIC -shared -fvisibility=hidden -DTFE_NO_EINSUM -DTFE_NO_LINALG -DTFE_NO_AD \
	  -Iinclude $(HDF5_CFLAGS) -o $@ $< -Wl,--no-undefined $(HDF5_LIBS) $(LDLIBS)

# The Python package (python/tenferro, ctypes over the stable C ABI): pip-installed into a venv
# that sees Debian's numpy (and torch, if present), then its pytest suite.
PY_VENV := $(BUILD)/pyvenv
JAX_VERSION ?= 0.4.30
test-python: lib
	rm -rf $(PY_VENV) && $(H5PY_PYTHON) -m venv --system-site-packages $(PY_VENV)
	$(PY_VENV)/bin/pip install -q --no-build-isolation --no-deps --no-index .
	$(PY_VENV)/bin/python -c "import tenferro, sys; sys.exit(tenferro._fast is None and 'test-python: the extension tenferro._ext was not built (python3-dev?)')"
	@# JAX for the DLPack round trip (PyPI; Debian has no JAX): the version that runs on Debian's numpy 1.24.
	-$(PY_VENV)/bin/pip install -q "jax[cpu]==$(JAX_VERSION)" "numpy<2" 2>&1 | tail -2
	cd tests/python && $(abspath $(PY_VENV))/bin/python -m pytest -q -p no:cacheprovider .

# Per-call time of small einsums from Python against numpy.einsum and opt_einsum (docs/benchmarks.md):
# the package pip-installed into its own venv, opt_einsum from PyPI when reachable (else left out).
BENCH_VENV := $(BUILD)/benchvenv
bench-python: lib
	test -x $(BENCH_VENV)/bin/python || $(H5PY_PYTHON) -m venv --system-site-packages $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --no-build-isolation --no-deps --no-index .
	-$(BENCH_VENV)/bin/pip install -q opt_einsum
	cd $(BUILD) && $(abspath $(BENCH_VENV))/bin/python $(abspath bench/python_einsum.py)

test-install: lib
	+MAKE="$(MAKE)" tests/install/run.sh

# Every header compiled on its own, first thing in a unit, in the default and the declarations
# mode. Templates (*_tpl.h) are checked through their room header (which stamps them for every
# kind); gen/foreach_kind.h and gen/stamp_list.h through the headers that include them, gen/cxx.h
# by test-cxx, stamp.h (after <tenferro.h>) by test_userkind, state.h is bodies only. In the
# default mode a lone header has prototypes of static functions whose bodies would come with the
# umbrella: -Wno-unused-function.
CHECK_HDRS := $(filter-out %_tpl.h include/tenferro/gen/% include/tenferro/stamp.h include/tenferro/io/hdf5.h,$(HDRS))
CHECK_OK := $(patsubst include/%.h,$(BUILD)/check-headers/%.ok,$(CHECK_HDRS))
$(BUILD)/check-headers/%.ok: include/%.h $(HDRS)
	@mkdir -p $(dir $@)
	@printf '#include <%s>\ntypedef int tfe_check_headers_unit;\n' $*.h > $(BUILD)/check-headers/$*.c
	@$(CC) $(WARN) -Wno-unused-function -Iinclude -fsyntax-only $(BUILD)/check-headers/$*.c
	@$(CC) $(WARN) -DTFE_HEADER -Iinclude -fsyntax-only $(BUILD)/check-headers/$*.c
	@touch $@
# Headers of other rooms not self-contained yet, checked without failing the target (remove a
# header from this list once it passes).
CHECK_PENDING :=
check-headers: $(filter-out $(patsubst include/%.h,$(BUILD)/check-headers/%.ok,$(CHECK_PENDING)),$(CHECK_OK))
	@for h in $(CHECK_PENDING); do if [ -f $$h ]; then \
	  if $(MAKE) -s --no-print-directory $$(echo $$h | sed 's|^include/\(.*\)\.h$$|$(BUILD)/check-headers/\1.ok|') >/dev/null 2>&1; \
	  then echo "check-headers: $$h passes now: take it off CHECK_PENDING"; \
	  else echo "check-headers: pending (not self-contained yet): $$h"; fi; fi; done
	@echo "check-headers: $(words $(filter-out $(CHECK_PENDING),$(CHECK_HDRS))) headers compile on their own (default and TFE_HEADER)"

deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps: all Debian packages present"; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	else echo "deps: run as root:  apt-get install -y$$missing"; exit 1; fi

# The main job (README): a real tensor network (data/, a copy of one shared instance) contracted
# with tenferro's own path optimizer; prints path quality, planning and contraction time, checksum.
run: $(TOOLS)
	$(BUILD)/tfe-einsum --instance data/str_nw_mera_open_26.json --path auto --repeat 3 --print-path

# The einsum benchmark table (every shared instance, paths, threads, dtypes, numpy/torch/jax).
bench-einsum: $(TOOLS)
	$(PYTHON) bench/bench_einsum.py --tool $(BUILD)/tfe-einsum --out docs/bench-einsum.md $(BENCH_ARGS)
	$(PLOT_PYTHON) bench/plot_bench.py einsum --table docs/bench-einsum.md --out docs/img/bench_einsum.png

# libFuzzer targets (clang): a short run of each (FUZZ_SECONDS each).
FUZZ_SECONDS ?= 20
FUZZERS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
$(BUILD)/fuzz/%: tests/fuzz/%.c $(HDRS)
	@mkdir -p $(dir $@)
	clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -o $@ $< \
	  -L$(BLIS_LIBDIR) -Wl,-rpath,$(BLIS_LIBDIR) -lblis -llapacke -lm -ldl -lpthread
fuzz: $(FUZZERS)
	@set -e; for f in $(FUZZERS); do echo "== $$f"; mkdir -p $(BUILD)/fuzz/corpus-$$(basename $$f); \
	  $$f -max_total_time=$(FUZZ_SECONDS) -max_len=4096 $(BUILD)/fuzz/corpus-$$(basename $$f) tests/fuzz/seeds; done

clean:
	rm -rf build build-san build-clang build-tsan
