# Makefile: the one non-recursive build of the Sympozium operator.
#
# Sources are found by directory (common/, ipc/, supervisor/, workers/,
# ctl/, kubesim/, tests/...), so adding a module is adding a file.  Objects and dependency
# files go to $(BUILD), programs to $(BIN).  `make asan` and `make fuzz` reuse
# the same rules with another $(BUILD)/$(BIN) and extra flags.
#
# Targets: all (default), deps, test, asan, valgrind, run, bench, scale,
# fuzz, crd-digest, format, format-check, clean.

BUILD	?= build
BIN	?= bin
ifeq ($(origin CC),default)
CC	= gcc
endif
SAN	?=

# Debian packages that building and testing need.  `make deps` installs the
# missing ones (apt-get update only when something is missing).
DEB_PKGS = gcc make pkg-config clang libclang-rt-14-dev \
	libcurl4-openssl-dev libjson-c-dev libnng-dev libcmocka-dev \
	libmicrohttpd-dev libseccomp-dev libyaml-dev libssl-dev openssl \
	libprotobuf-c-dev protobuf-c-compiler \
	python3 python3-kubernetes python3-h2 valgrind clang-format

PKGS	= libcurl json-c yaml-0.1 openssl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN	= -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes \
	  -Wmissing-declarations -Wshadow -Wpointer-arith -Wcast-qual \
	  -Wsign-compare -Wformat=2 -Wvla -Wno-format-nonliteral
CSTD	= -std=c17 -D_GNU_SOURCE
OPT	?= -O2 -g
CFLAGS_ALL = $(CSTD) $(OPT) $(WARN) -MMD -MP -I. -I$(BUILD) $(PKG_CFLAGS) \
	     $(SANFLAGS) $(EXTRA_CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lnng -lseccomp -lpthread -lm

ifeq ($(SAN),1)
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer \
	   -fno-sanitize-recover=all
endif

COMMON_SRCS := $(sort $(wildcard common/*.c))
IPC_SRCS    := $(sort $(wildcard ipc/*.c))
# kubesim's modules (kubesim/, all but main.c) are linked into the unit
# tests too, so its pure logic (selectors, patches, schemas) is tested
# module by module.
KUBESIM_MODS := $(sort $(filter-out kubesim/main.c,$(wildcard kubesim/*.c)))
# The supervisor's and the workers' modules (all but their main.c) are
# linked into the unit tests too: pure logic tested module by module.
SUP_MODS := $(sort $(filter-out supervisor/main.c,$(wildcard supervisor/*.c)))
WRK_MODS := $(sort $(filter-out workers/main.c,$(wildcard workers/*.c)))
# sympoziumctl's modules (ctl/, all but main.c), tested the same way.
CTL_MODS := $(sort $(filter-out ctl/main.c,$(wildcard ctl/*.c)))
# The test controller's watch table (contract_extra): only test binaries
# link it (the unit tests, bin/tests/sympoziumd-test), never sympoziumd.
TESTCTL_CONTRACT := tests/workers/testctl_contract.c
TESTLIB_SRCS := $(sort $(wildcard tests/lib/*.c)) $(KUBESIM_MODS) \
		$(SUP_MODS) $(WRK_MODS) $(CTL_MODS) $(TESTCTL_CONTRACT)
UNIT_SRCS   := $(sort $(wildcard tests/unit/test_*.c))
# Black-box tests in C (they start bin/kubesim and talk HTTP to it) build
# like unit tests and run from the same directory.
INTEG_SRCS  := $(sort $(wildcard tests/integration/test_*.c))
# kubesim's own tests: unit tests of its modules (kubesim/tests/unit/) and
# black-box tests of bin/kubesim (kubesim/tests/integration/), built and
# run like the others.
KSIM_UNIT_SRCS  := $(sort $(wildcard kubesim/tests/unit/test_*.c))
KSIM_INTEG_SRCS := $(sort $(wildcard kubesim/tests/integration/test_*.c))

# kubesim's protobuf messages (kubesim/proto/*.proto), compiled by
# protoc-c into $(BUILD)/kubesim/proto/ and linked wherever kubesim's
# modules are (kubesim, the tests, the fuzz targets), with -lprotobuf-c.
PB_PROTOS := $(sort $(wildcard kubesim/proto/*.proto))
PB_OBJS   := $(PB_PROTOS:kubesim/proto/%.proto=$(BUILD)/kubesim/proto/%.pb-c.o)
PB_HDRS   := $(PB_PROTOS:kubesim/proto/%.proto=$(BUILD)/kubesim/proto/%.pb-c.h)
PB_LIBS   := -lprotobuf-c
# The supervisor's OTLP messages (supervisor/proto/*.proto), the same way:
# linked into sympoziumd and the tests.
SUP_PB_PROTOS := $(sort $(wildcard supervisor/proto/*.proto))
SUP_PB_OBJS   := $(SUP_PB_PROTOS:supervisor/proto/%.proto=$(BUILD)/supervisor/proto/%.pb-c.o)
SUP_PB_HDRS   := $(SUP_PB_PROTOS:supervisor/proto/%.proto=$(BUILD)/supervisor/proto/%.pb-c.h)

COMMON_OBJS  := $(COMMON_SRCS:%.c=$(BUILD)/%.o)
IPC_OBJS     := $(IPC_SRCS:%.c=$(BUILD)/%.o)
TESTLIB_OBJS := $(TESTLIB_SRCS:%.c=$(BUILD)/%.o) $(PB_OBJS) $(SUP_PB_OBJS)
LIBCOMMON    := $(BUILD)/libcommon.a

# The chaos suite (tests/chaos/): every file there but test_*.c makes
# bin/tests/test_chaos; test_model.c unit-tests its expectation model
# (model.c) alone as bin/tests/test_chaos_model.
CHAOS_SRCS  := $(sort $(filter-out tests/chaos/test_%.c,\
		$(wildcard tests/chaos/*.c)))
CHAOS_OBJS  := $(CHAOS_SRCS:%.c=$(BUILD)/%.o)

UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BIN)/tests/%) \
	     $(INTEG_SRCS:tests/integration/%.c=$(BIN)/tests/%) \
	     $(KSIM_UNIT_SRCS:kubesim/tests/unit/%.c=$(BIN)/tests/%) \
	     $(KSIM_INTEG_SRCS:kubesim/tests/integration/%.c=$(BIN)/tests/%) \
	     $(if $(CHAOS_SRCS),$(BIN)/tests/test_chaos \
		$(BIN)/tests/test_chaos_model)
# Benchmark drivers (tests/bench/bench_*.c), run by tests/bench/*.sh.
BENCH_SRCS := $(sort $(wildcard tests/bench/bench_*.c))
BENCH_BINS := $(BENCH_SRCS:tests/bench/%.c=$(BIN)/bench/%)
# The scale suite (tests/scale/test_*.c), run by `make scale`, not by
# tests/run-tests.sh.
SCALE_SRCS := $(sort $(wildcard tests/scale/test_*.c))
SCALE_BINS := $(SCALE_SRCS:tests/scale/%.c=$(BIN)/scale/%)
# The hostile-worker suite (tests/hostile/): built by all, run by `make
# hostile` (see its rules below).
HOSTILE_WORKER := $(BIN)/hostile/sympozium-worker-hostile
HOSTILE_TEST   := $(BIN)/tests/test_hostile

# Programs of later issues join here (sympoziumd, sympozium-worker,
# sympoziumctl, kubesim) with their own source lists.
PROGS :=
ifneq ($(wildcard kubesim/main.c),)
PROGS += $(BIN)/kubesim
endif
ifneq ($(wildcard supervisor/main.c),)
PROGS += $(BIN)/sympoziumd $(BIN)/tests/sympoziumd-test
endif
ifneq ($(wildcard workers/main.c),)
PROGS += $(BIN)/sympozium-worker $(BIN)/tests/sympozium-worker-test
endif
# bin/sympoziumctl: the ops CLI over the health socket (ctl/).
ifneq ($(wildcard ctl/main.c),)
PROGS += $(BIN)/sympoziumctl
endif
# bin/tests/crd-digest: writes the upstream CRDs' digest (make crd-digest).
PROGS += $(BIN)/tests/crd-digest
CTL_OBJS := $(CTL_MODS:%.c=$(BUILD)/%.o) $(BUILD)/ctl/main.o
SUP_OBJS := $(SUP_MODS:%.c=$(BUILD)/%.o) $(BUILD)/supervisor/main.o \
	    $(SUP_PB_OBJS)
WRK_OBJS := $(WRK_MODS:%.c=$(BUILD)/%.o) $(BUILD)/workers/main.o
KUBESIM_OBJS := $(KUBESIM_MODS:%.c=$(BUILD)/%.o) $(BUILD)/kubesim/main.o \
		$(PB_OBJS)
# No product links anything of tests/.
ifneq ($(filter $(BUILD)/tests/%,$(CTL_OBJS) $(SUP_OBJS) $(WRK_OBJS) \
	$(KUBESIM_OBJS)),)
$(error a product binary would link test code: $(filter $(BUILD)/tests/%,\
	$(CTL_OBJS) $(SUP_OBJS) $(WRK_OBJS) $(KUBESIM_OBJS)))
endif

.PHONY: all deps test check asan valgrind run bench scale fuzz clean \
	format format-check \
	crd-digest
.DEFAULT_GOAL := all
# Test programs link by static pattern rules (each from its own directory),
# so a stale dependency file of a test that moved never stops the build.
# Keep objects that make would otherwise treat as intermediate.
.SECONDARY:

all: $(PROGS) $(UNIT_BINS) $(BENCH_BINS) $(SCALE_BINS) $(HOSTILE_WORKER) \
	$(HOSTILE_TEST)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# protoc-c's output: generated code, compiled without our warning set.
# kubesim's modules include the headers (-I$(BUILD)), so they wait for them.
$(BUILD)/kubesim/proto/%.pb-c.c $(BUILD)/kubesim/proto/%.pb-c.h: \
		kubesim/proto/%.proto
	@mkdir -p $(@D)
	protoc-c --proto_path=kubesim/proto --c_out=$(@D) $<

$(BUILD)/kubesim/proto/%.pb-c.o: $(BUILD)/kubesim/proto/%.pb-c.c
	$(CC) $(CSTD) $(OPT) $(SANFLAGS) $(EXTRA_CFLAGS) -c $< -o $@

$(KUBESIM_MODS:%.c=$(BUILD)/%.o) $(BUILD)/kubesim/main.o: | $(PB_HDRS)

$(BUILD)/supervisor/proto/%.pb-c.c $(BUILD)/supervisor/proto/%.pb-c.h: \
		supervisor/proto/%.proto
	@mkdir -p $(@D)
	protoc-c --proto_path=supervisor/proto --c_out=$(@D) $<

$(BUILD)/supervisor/proto/%.pb-c.o: $(BUILD)/supervisor/proto/%.pb-c.c
	$(CC) $(CSTD) $(OPT) $(SANFLAGS) $(EXTRA_CFLAGS) -c $< -o $@

$(SUP_MODS:%.c=$(BUILD)/%.o) $(BUILD)/supervisor/main.o: | $(SUP_PB_HDRS)

# The tag of child images when SYMPOZIUM_IMAGE_TAG does not override it
# (upstream's main.imageTag, set by -ldflags in release builds).  Only
# workers/kobj.c uses it; a release build sets IMAGE_TAG=vX.Y.Z.
IMAGE_TAG ?= latest
$(BUILD)/workers/kobj.o: CFLAGS_ALL += -DKOBJ_IMAGE_TAG='"$(IMAGE_TAG)"'

$(LIBCOMMON): $(COMMON_OBJS) $(IPC_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

$(UNIT_SRCS:tests/unit/%.c=$(BIN)/tests/%): $(BIN)/tests/%: \
		$(BUILD)/tests/unit/%.o $(TESTLIB_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $< $(TESTLIB_OBJS) $(LIBCOMMON) -lcmocka \
		-lmicrohttpd $(LDLIBS_ALL) $(PB_LIBS)

$(INTEG_SRCS:tests/integration/%.c=$(BIN)/tests/%): $(BIN)/tests/%: \
		$(BUILD)/tests/integration/%.o $(TESTLIB_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $< $(TESTLIB_OBJS) $(LIBCOMMON) -lcmocka \
		-lmicrohttpd $(LDLIBS_ALL) $(PB_LIBS)

$(KSIM_UNIT_SRCS:kubesim/tests/unit/%.c=$(BIN)/tests/%): $(BIN)/tests/%: \
		$(BUILD)/kubesim/tests/unit/%.o $(TESTLIB_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $< $(TESTLIB_OBJS) $(LIBCOMMON) -lcmocka \
		-lmicrohttpd $(LDLIBS_ALL) $(PB_LIBS)

$(KSIM_INTEG_SRCS:kubesim/tests/integration/%.c=$(BIN)/tests/%): $(BIN)/tests/%: \
		$(BUILD)/kubesim/tests/integration/%.o $(TESTLIB_OBJS) \
		$(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $< $(TESTLIB_OBJS) $(LIBCOMMON) -lcmocka \
		-lmicrohttpd $(LDLIBS_ALL) $(PB_LIBS)

$(BIN)/tests/test_chaos: $(CHAOS_OBJS) $(TESTLIB_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $(CHAOS_OBJS) $(TESTLIB_OBJS) $(LIBCOMMON) \
		-lcmocka -lmicrohttpd $(LDLIBS_ALL) $(PB_LIBS)

$(BIN)/tests/test_chaos_model: $(BUILD)/tests/chaos/test_model.o \
		$(BUILD)/tests/chaos/model.o
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $^ -lcmocka

$(BIN)/bench/%: $(BUILD)/tests/bench/%.o $(TESTLIB_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $< $(TESTLIB_OBJS) $(LIBCOMMON) -lcmocka \
		-lmicrohttpd $(LDLIBS_ALL) $(PB_LIBS)

$(BIN)/scale/%: $(BUILD)/tests/scale/%.o $(TESTLIB_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $< $(TESTLIB_OBJS) $(LIBCOMMON) -lcmocka \
		-lmicrohttpd $(LDLIBS_ALL) $(PB_LIBS)

$(BIN)/sympoziumd: $(SUP_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $(SUP_OBJS) $(LIBCOMMON) -lmicrohttpd \
		$(LDLIBS_ALL) $(PB_LIBS)

# The test supervisor: sympoziumd plus the test controller's watches.  It
# finds the production worker beside itself, as sympoziumd does (a link).
$(BIN)/tests/sympoziumd-test: $(SUP_OBJS) \
		$(BUILD)/tests/workers/testctl_contract.o $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $(SUP_OBJS) \
		$(BUILD)/tests/workers/testctl_contract.o $(LIBCOMMON) \
		-lmicrohttpd $(LDLIBS_ALL) $(PB_LIBS)
	ln -sfn ../sympozium-worker $(@D)/sympozium-worker

$(BIN)/sympoziumctl: $(CTL_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $(CTL_OBJS) $(LIBCOMMON) $(LDLIBS_ALL)

$(BIN)/sympozium-worker: $(WRK_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $(WRK_OBJS) $(LIBCOMMON) $(LDLIBS_ALL)

# The test worker: the worker runtime plus the test controller
# (tests/workers/), which production workers never contain.
$(BIN)/tests/sympozium-worker-test: $(WRK_OBJS) \
		$(BUILD)/tests/workers/testctl.o $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $(WRK_OBJS) $(BUILD)/tests/workers/testctl.o \
		$(LIBCOMMON) $(LDLIBS_ALL)

# The hostile-worker suite (tests/hostile/, README there): a worker that
# attacks from inside the real sandbox, and its test, which `make test`
# runs with the others ($(BIN)/tests/test_*); `make hostile` runs it alone.

$(HOSTILE_WORKER): $(BUILD)/tests/hostile/hostile_worker.o \
		$(BUILD)/workers/sandbox.o $(BUILD)/workers/sandbox_filter.o \
		$(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(HOSTILE_TEST): $(BUILD)/tests/hostile/test_hostile.o $(TESTLIB_OBJS) \
		$(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $< $(TESTLIB_OBJS) $(LIBCOMMON) -lcmocka \
		-lmicrohttpd $(LDLIBS_ALL) $(PB_LIBS)

.PHONY: hostile
hostile: all
	@SHARED_DIR=$(SHARED_DIR) KUBESIM=$$PWD/$(BIN)/kubesim \
		SYMPOZIUMD=$$PWD/$(BIN)/tests/sympoziumd-test \
		HOSTILE_WORKER=$$PWD/$(HOSTILE_WORKER) $(HOSTILE_TEST)

$(BIN)/tests/crd-digest: $(BUILD)/tests/crds/crd_digest.o \
		$(BUILD)/tests/lib/crddigest.o $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS_ALL)

# crd-digest: rewrites tests/unit/data/upstream-crds.digest from the
# upstream reference tree ($(SHARED_DIR), else ../shared); test_crds
# fails while the committed digest differs from the tree's.
SHARED_DIR ?= ../shared
CRD_DIGEST = tests/unit/data/upstream-crds.digest
crd-digest: $(BIN)/tests/crd-digest
	$(BIN)/tests/crd-digest $(SHARED_DIR)/upstream/sympozium-v1alpha1/crds \
		>$(CRD_DIGEST).tmp && mv $(CRD_DIGEST).tmp $(CRD_DIGEST)

$(BIN)/kubesim: $(KUBESIM_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $(KUBESIM_OBJS) $(LIBCOMMON) -lmicrohttpd \
		$(LDLIBS_ALL) $(PB_LIBS)

deps:
	@missing=""; \
	for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
			grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	command -v kubectl >/dev/null 2>&1 || \
		missing="$$missing kubernetes-client"; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q \
			--no-install-recommends $$missing; \
	else \
		echo "deps: all $(words $(DEB_PKGS)) packages present"; \
	fi

# check: build and run every test with what is installed (no deps step).
check: all
	@BIN=$(BIN) tests/run-tests.sh

test: deps
	@$(MAKE) --no-print-directory all
	@BIN=$(BIN) tests/run-tests.sh

asan: deps
	@$(MAKE) --no-print-directory SAN=1 OPT="-O1 -g" \
		BUILD=build/asan BIN=build/asan/bin all
	@BIN=build/asan/bin ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		tests/run-tests.sh

# valgrind: memcheck over every unit test and one short operator run
# (sympoziumd and its workers under valgrind), built without sanitizers
# at -O1 into build/vg/.  VG_JOBS tests run at a time.  See
# docs-valgrind.md and tests/run-valgrind.sh.
VG_JOBS ?= 2
valgrind: deps
	@$(MAKE) --no-print-directory OPT="-O1 -g" \
		BUILD=build/vg BIN=build/vg/bin all
	@BIN=build/vg/bin VG_JOBS=$(VG_JOBS) tests/run-valgrind.sh

# Fuzzing: libFuzzer targets in tests/fuzz/fuzz_*.c, built with clang and
# ASan+UBSan, each run for FUZZ_SECONDS with the seed corpus in
# tests/fuzz/corpus/<name>/.  New inputs go under build/fuzz/, not the repo.
FUZZ_SECONDS ?= 60
# Targets run at a time (CI: make fuzz FUZZ_SECONDS=10 FUZZ_JOBS=2).
FUZZ_JOBS ?= 1
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/bin/%)
FUZZ_FLAGS = -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	     -fno-sanitize-recover=all

fuzz: deps
	@$(MAKE) --no-print-directory CC=clang BUILD=build/fuzz \
		BIN=build/fuzz/bin SANFLAGS="$(FUZZ_FLAGS)" OPT="-O1 -g" \
		fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) \
		tests/fuzz/run-fuzz.sh $(FUZZ_BINS)

fuzz-build: $(FUZZ_BINS)

# Fuzz targets link kubesim's modules too (selectors, patches, schemas),
# and the pure supervisor and worker modules they fuzz.
FUZZ_KUBESIM_OBJS = $(KUBESIM_MODS:%.c=build/fuzz/%.o) \
	$(PB_PROTOS:kubesim/proto/%.proto=build/fuzz/kubesim/proto/%.pb-c.o) \
	build/fuzz/supervisor/labelsel.o build/fuzz/workers/cron.o \
	build/fuzz/workers/agentrun_result.o build/fuzz/supervisor/otel.o \
	$(SUP_PB_PROTOS:supervisor/proto/%.proto=build/fuzz/supervisor/proto/%.pb-c.o)

build/fuzz/bin/%: build/fuzz/tests/fuzz/%.o $(FUZZ_KUBESIM_OBJS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -fsanitize=fuzzer,address,undefined -o $@ $< \
		$(FUZZ_KUBESIM_OBJS) $(LIBCOMMON) -lmicrohttpd $(LDLIBS_ALL) \
		$(PB_LIBS)

# run: starts kubesim with our CRDs and samples applied and runs the
# operator against it in the foreground (scripts/make-run.sh).
# Only the four programs it runs are built.
run: deps
	@$(MAKE) --no-print-directory $(BIN)/kubesim $(BIN)/sympoziumd \
		$(BIN)/sympozium-worker $(BIN)/sympoziumctl
	@BIN=$(BIN) scripts/make-run.sh

# make bench runs every tests/bench/*.sh (BENCH_QUICK=1: small counts),
# keeps each one's stdout in $(BUILD)/bench/NAME.out (and its exit status in
# NAME.rc), then tests/bench/report.py writes their RESULT lines as a table
# between <!-- bench:begin --> and <!-- bench:end --> in BENCH_DOC.  A
# failed benchmark does not stop the others; make bench then fails.
BENCH_DOC ?= docs/benchmarks.md

bench: all
	@if ! ls tests/bench/*.sh >/dev/null 2>&1; then \
		echo "make bench: no benchmarks in tests/bench/"; exit 0; \
	fi; \
	out=$(BUILD)/bench; mkdir -p $$out; rm -f $$out/*.out $$out/*.rc; \
	load0=$$(cut -d' ' -f1-3 /proc/loadavg); rc=0; \
	for b in tests/bench/*.sh; do \
		n=$$(basename $$b .sh); \
		{ BIN=$(BIN) $$b; echo $$? >$$out/$$n.rc; } | tee $$out/$$n.out; \
		if [ "$$(cat $$out/$$n.rc)" != 0 ]; then \
			echo "make bench: $$b failed"; rc=1; \
		fi; \
	done; \
	python3 tests/bench/report.py --doc $(BENCH_DOC) \
		--load-start "$$load0" $$out/*.out || rc=1; \
	exit $$rc

# make scale runs the scale suite (tests/scale/README.md): every shape at
# full size, within SCALE_TIMEOUT seconds; SCALE_QUICK=1 (CI) runs each
# shape smaller.  SCALE_SHAPES="A B" runs those shapes.
SCALE_QUICK ?=
SCALE_SHAPES ?=
SCALE_TIMEOUT ?= $(if $(filter-out 0,$(SCALE_QUICK)),420,2400)

scale: all
	@SCALE_QUICK=$(SCALE_QUICK) KUBESIM=$(CURDIR)/$(BIN)/kubesim \
		SYMPOZIUMD=$(CURDIR)/$(BIN)/sympoziumd \
		SYMPOZIUMCTL=$(CURDIR)/$(BIN)/sympoziumctl \
		timeout -k 10 $(SCALE_TIMEOUT) $(BIN)/scale/test_scale \
		$(SCALE_SHAPES)

# The committed .clang-format over every C source and header: `make
# format` rewrites them, `make format-check` (CI) lists the files that
# differ and fails.  Debian's clang-format (the version `make deps`
# installs) is the reference.
FORMAT_SRCS := $(sort $(wildcard common/*.[ch] ipc/*.[ch] supervisor/*.[ch] \
	workers/*.[ch] ctl/*.[ch] kubesim/*.[ch] kubesim/tests/*/*.[ch] \
	tests/*/*.[ch]))

format:
	clang-format -i $(FORMAT_SRCS)

format-check:
	@bad=""; for f in $(FORMAT_SRCS); do \
		clang-format --dry-run -Werror "$$f" >/dev/null 2>&1 || \
			bad="$$bad $$f"; \
	done; \
	if [ -n "$$bad" ]; then \
		echo "format-check: not formatted (make format):$$bad"; \
		exit 1; \
	fi; \
	echo "format-check: $(words $(FORMAT_SRCS)) files formatted"

clean:
	rm -rf build bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
