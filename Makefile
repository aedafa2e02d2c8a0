# tenferro — header-only C11 tensor library. `make help` lists the targets.
CC       ?= cc
PYTHON   ?= python3
BUILD    ?= build
PREFIX   ?= /usr/local
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

DEB_PACKAGES := build-essential python3 libblis-openmp-dev liblapacke-dev libcmocka-dev clang libclang-rt-14-dev

.PHONY: all help test test-unit test-examples test-sanitize test-clang check-gen gen bench bench-permute install deps clean run bench-einsum fuzz

all: $(TOOLS) $(EXAMPLES) $(TESTS)

help:
	@echo "make deps            install the Debian packages (as root) or print the command"
	@echo "make run             build and run the main job (see README)"
	@echo "make test            build and run every cmocka suite and every example"
	@echo "make test-sanitize   the same under AddressSanitizer + UndefinedBehaviorSanitizer"
	@echo "make test-clang      the same built by clang (without OpenMP or -march)"
	@echo "make bench           build the benchmark programs; bench-permute runs the permutation table"
	@echo "make check-gen       verify that include/tenferro/gen matches gen/gen_kinds.py"
	@echo "make install PREFIX=/usr/local   headers and a pkg-config file"

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

$(BUILD)/%: tools/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O3 -o $@ $< $(LDLIBS)

test: check-gen test-unit test-examples

test-unit: $(TESTS) $(TOOLS)
	@mkdir -p build
	@set -e; for t in $(TESTS); do echo "== $$t"; TFE_TOOL=$(BUILD)/tfe-einsum $$t; done

test-examples: $(EXAMPLES)
	@set -e; for e in $(EXAMPLES); do echo "== $$e"; (cd examples && ../$$e); done

SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
test-sanitize:
	$(MAKE) test-unit test-examples BUILD=build-san OPT="-O1 $(SAN)" \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 TFE_TEST_QUICK=1

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

# One line per pattern of ../shared/bench/permutation_patterns.json (PATTERNS=... to override).
bench-permute: $(BUILD)/bench/bench_permute
	$(BUILD)/bench/bench_permute $(PATTERNS) --threads2

bench-kernels: $(BUILD)/bench/bench_kernels
	$(BUILD)/bench/bench_kernels

install:
	mkdir -p $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	cp -r include/tenferro.h include/tenferro $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@BLIS_LIBDIR@|$(BLIS_LIBDIR)|' tenferro.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/tenferro.pc

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
	rm -rf build build-san build-clang
