# earlc developer entry points.
#
#   make demo        set up (if needed) and analyse the bundled example trace
#   make test        set up (if needed) and run every C and Python test
#   make test-asan   the same tests under AddressSanitizer and UBSan
#   make test-tsan   the C tests under ThreadSanitizer
#   make bench       benchmarks: ratios against a bare libotf2 read
#   make fuzz        10,000 damaged archives opened and analysed under a watchdog
#   make demo-traces regenerate the example traces in traces/ (earlc synth)
#   make lib         the C core as a static library (build/libearl.a)
#   make recorder    the MPI recorder of `earlc record` (python/earlc/libearlc_record.so)
#   make clean
#
# `make deps` installs what is missing: Debian packages through apt-get and
# Python packages through pip.  It is a no-op on a machine that has them.

PYTHON     ?= python3
export PIP_ROOT_USER_ACTION := ignore
export PIP_DISABLE_PIP_VERSION_CHECK := 1
CC         ?= cc
BUILD      ?= build
OTF2_CFLAGS := $(shell pkg-config --cflags otf2 2>/dev/null)
OTF2_LIBS   := $(shell pkg-config --libs otf2 2>/dev/null)
WARN        = -Wall -Wextra -Werror -Wno-missing-field-initializers
# Only the public API (EARL_API, csrc/include/earl_api.h) is visible outside
# a shared object built from the core; the recorder exports only MPI's
# functions (csrc/record/record_internal.h).
VISIBILITY  = -fvisibility=hidden
CFLAGS     ?= -O2 -g
ALL_CFLAGS  = -std=c11 -D_GNU_SOURCE $(WARN) $(VISIBILITY) $(CFLAGS) $(OTF2_CFLAGS) $(CORE_INCLUDES) -pthread
SAN         = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
TSAN        = -fsanitize=thread -fno-omit-frame-pointer

# csrc/ holds the trace model; each subsystem has a folder of its own
# (csrc/states, csrc/hb, ...).  csrc/record is built apart: it links MPI.
# The public headers are in csrc/include; an internal header stays beside its
# code, and a file includes another folder's internal header by its path
# from csrc/ ("hb/hb_clock.h").
CORE_DIRS   = csrc $(filter-out csrc/record csrc/include,$(patsubst %/,%,$(wildcard csrc/*/)))
CORE_INCLUDES = -Icsrc/include -Icsrc
CORE_SRC    = $(sort $(foreach d,$(CORE_DIRS),$(wildcard $(d)/*.c)))
CORE_HDR    = $(wildcard csrc/include/*.h) $(foreach d,$(CORE_DIRS),$(wildcard $(d)/*.h))
CORE_OBJ    = $(CORE_SRC:csrc/%.c=$(BUILD)/obj/%.o)
CTEST_SRC   = $(sort $(wildcard tests/c/test_*.c))
CTEST_BIN   = $(CTEST_SRC:tests/c/%.c=$(BUILD)/tests/%)
# record_workloads.c is an MPI program: record_bench.py builds it with mpicc
BENCH_SRC   = $(sort $(filter-out tests/bench/record_workloads.c,$(wildcard tests/bench/*.c)))
BENCH_BIN   = $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)

APT_PACKAGES = libotf2-trace-dev otf2-tools libcmocka-dev pkg-config gcc make mpich libmpich-dev
PIP_PACKAGES = numpy pandas pytest setuptools wheel
# optional at run time, needed by the tests of pictures and exports: matplotlib
# (pictures), llnl-hatchet and llnl-thicket (report.to_hatchet), pycubexr (a
# second reader of the .cubex files), selenium with Debian's chromium and its
# driver (the HTML report in a real browser)
PIP_EXTRAS   = matplotlib llnl-hatchet llnl-thicket pycubexr selenium
APT_BROWSER  = chromium chromium-driver

.PHONY: all deps build lib recorder demo demo-traces test test-c test-python test-asan test-tsan bench fuzz clean docs

all: build

deps:
	@missing=""; \
	pkg-config --exists otf2 2>/dev/null || missing="$$missing libotf2-trace-dev pkg-config"; \
	command -v otf2-print >/dev/null 2>&1 || missing="$$missing otf2-tools"; \
	[ -f /usr/include/cmocka.h ] || missing="$$missing libcmocka-dev"; \
	command -v $(CC) >/dev/null 2>&1 || missing="$$missing gcc"; \
	command -v mpicc >/dev/null 2>&1 && command -v mpiexec >/dev/null 2>&1 || missing="$$missing mpich libmpich-dev"; \
	if [ -n "$$missing" ]; then \
	  echo "earlc: installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	fi
	@$(PYTHON) -c "import numpy, pandas, pytest" 2>/dev/null || \
	  { echo "earlc: installing Python packages"; $(PYTHON) -m pip install -q $(PIP_PACKAGES); }
	@# mpi4py built against the system's MPICH (the analysis on many processes,
	@# docs/parallel.md): a wheel from PyPI links another MPI library
	@$(PYTHON) -c "import mpi4py.MPI" 2>/dev/null || \
	  { echo "earlc: building mpi4py against the system's MPI (a few minutes)"; \
	    $(PYTHON) -m pip install -q --no-binary mpi4py mpi4py; }
	@$(PYTHON) -c "import matplotlib, hatchet, thicket, pycubexr, selenium" 2>/dev/null || \
	  { echo "earlc: installing Python packages for pictures and exports"; \
	    $(PYTHON) -m pip install -q $(PIP_EXTRAS); }
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  echo "earlc: installing Debian packages: $(APT_BROWSER)"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_BROWSER) >/dev/null; \
	fi

# The extension is built in place (python/earlc/_core*.so) and the package is
# installed in editable mode so that `earlc` is on PATH.
build: deps
	@$(PYTHON) setup.py -q build_ext --inplace
	@$(MAKE) --no-print-directory recorder
	@cd / && $(PYTHON) -c "import earlc, sys; sys.exit(not earlc.__file__.startswith('$(CURDIR)/python/'))" \
	  2>/dev/null || $(PYTHON) -m pip install -q --no-build-isolation --no-deps -e $(CURDIR) >/dev/null

lib: $(BUILD)/libearl.a

# The MPI recorder of `earlc record` (csrc/record/, docs/record.md): its own
# shared library, built with the MPI compiler wrapper and kept out of
# libearl, and placed in the package so an editable install finds it.
MPICC       ?= mpicc
# it takes the core's hash map (csrc/base/hashmap.c) along, hidden inside it
RECORD_SRC  = $(sort $(wildcard csrc/record/*.c)) csrc/base/hashmap.c
RECORDER    = python/earlc/libearlc_record.so
recorder: $(RECORDER)

$(RECORDER): $(RECORD_SRC) $(wildcard csrc/record/*.h) csrc/include/earlc_record.h csrc/base/hashmap.h
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) $(VISIBILITY) $(CFLAGS) -fPIC -shared $(OTF2_CFLAGS) $(CORE_INCLUDES) \
	  $(RECORD_SRC) -o $@ -pthread

$(BUILD)/obj/%.o: csrc/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libearl.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/%: tests/c/%.c tests/c/*.h $(BUILD)/libearl.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/c $< $(BUILD)/libearl.a -lcmocka $(OTF2_LIBS) -o $@

$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/libearl.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< $(BUILD)/libearl.a $(OTF2_LIBS) -o $@

demo: build
	@$(PYTHON) -m earlc analyze traces/demo-ring

# The generated examples of traces/ (traces/README.md lists the same commands).
SYNTH = $(PYTHON) -m earlc synth
demo-traces: build
	$(SYNTH) ring -o traces/ring-late-sender --overwrite --ranks 4 --iterations 6 --delay 400 --delay-rank 2
	$(SYNTH) ping-pong -o traces/pingpong-wrong-order --overwrite --ranks 2 --iterations 4 --wrong-order 1
	$(SYNTH) collectives -o traces/collectives --overwrite --ranks 6 --iterations 2 --split 2 --root 1 --delay 300 --delay-rank 4
	$(SYNTH) omp -o traces/omp-locks --overwrite --ranks 1 --threads 4 --iterations 3 --delay 200 --delay-rank 0 --delay-thread 3
	$(SYNTH) hybrid -o traces/hybrid --overwrite --ranks 4 --threads 2 --iterations 2 --delay 300 --delay-rank 1

test: build
	@$(MAKE) --no-print-directory test-c
	@$(MAKE) --no-print-directory test-python

test-c: deps $(CTEST_BIN)
	@set -e; for t in $(CTEST_BIN); do echo "== $$t"; ( cd tests/c && ../../$$t ); done

test-python: build
	@$(PYTHON) -m pytest -q tests/python

# A separate build tree so sanitized objects never mix with normal ones.
test-asan: deps
	@$(MAKE) --no-print-directory BUILD=build/asan CFLAGS="-O1 -g $(SAN)" test-c
	@EARLC_SANITIZE=1 $(PYTHON) setup.py -q build_ext --inplace --force
	@ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
	  $(PYTHON) -m pytest -q tests/python; rc=$$?; \
	  $(PYTHON) setup.py -q build_ext --inplace --force; exit $$rc

# Data races of the threaded parts (reading, states, timestamps, the parallel
# search), in their own build tree.  Left out: test_mem (ThreadSanitizer does
# not follow pages that mremap moves, and reports their reuse by another
# thread as a race) and test_synth (its resident-memory bound does not hold
# with the sanitizer's shadow memory).
TSAN_TESTS = $(filter-out tests/c/test_mem.c tests/c/test_synth.c,$(CTEST_SRC))
test-tsan: deps
	@TSAN_OPTIONS=halt_on_error=1 $(MAKE) --no-print-directory BUILD=build/tsan \
	  CFLAGS="-O1 -g $(TSAN)" CTEST_SRC="$(TSAN_TESTS)" test-c

bench: build $(BENCH_BIN)
	@$(PYTHON) tests/bench/run.py

# FUZZ_CASES / FUZZ_SECONDS / FUZZ_SEED bound the run (make test runs a few dozen cases)
FUZZ_CASES ?= 10000
FUZZ_SECONDS ?= 1800
FUZZ_SEED ?= 1
fuzz: build
	@$(PYTHON) tests/fuzz/fuzz_archives.py --cases $(FUZZ_CASES) --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED)

clean:
	rm -rf $(BUILD) python/earlc/*.so python/*.egg-info

# docs/properties.md is generated from the property declarations
docs: build
	@$(PYTHON) -m earlc.analysis.docs > docs/properties.md
