# pgmate's top-level Makefile.
#
# 1. The PostgreSQL extension, built the PGXS way: `make && make install && make installcheck`.
# 2. Convenience targets; CMake builds core, CLI, worker and tests in build/:
#      make demo   set up, build, and show the main job
#      make test   set up, build, and run every test (the CI entry point)

# ---------------------------------------------------------------- the extension (PGXS)
# pgmate, and pgmate_cluster for a coordinator of shards (extension/cluster; docs/gamedb.md)
EXTENSION   = pgmate pgmate_cluster
EXT_VERSION = 0.17.0
# The newest upgrade is generated (below); older ones are kept as they were released.
UPGRADE_FROM = 0.16.0
MODULE_big  = pgmate
# The extension's C++ (extension/src) with the parts it links: all of core and link
# (docs/development.md draws the tree).
OBJS        = $(patsubst %.cpp,%.o,$(sort $(wildcard extension/src/*.cpp)) $(sort $(wildcard core/*/*.cpp)) \
              $(sort $(wildcard link/*.cpp)))
DATA_built  = pgmate--$(EXT_VERSION).sql pgmate--$(UPGRADE_FROM)--$(EXT_VERSION).sql
# Earlier versions' scripts: upgrades (ALTER EXTENSION pgmate UPDATE) and their test; the
# networks pgmate ships (pgmate.install_network).
DATA        = $(sort $(wildcard extension/upgrade/*.sql)) $(sort $(wildcard extension/cluster/*.sql)) \
              $(sort $(wildcard networks/pgmate_*.safetensors))
REGRESS     = $(patsubst extension/regress/sql/%.sql,%,$(sort $(wildcard extension/regress/sql/*.sql)))
REGRESS_OPTS = --inputdir=extension/regress --load-extension=pgmate
EXTRA_CLEAN = results regression.diffs regression.out $(OBJS:.o=.d)
PG_CPPFLAGS = -Icore -I.
# The module's own functions are never interposed: binding them inside the library turns
# the recursive perft calls from PLT jumps into direct, inlinable calls (checkers perft in
# SQL went from 1.5-2.1x to 1.1x the CLI's time).
# -MMD: each object also depends on the headers it includes (PGXS tracks only the .cpp
# without --enable-depend, so a changed header left stale objects with an old layout).
PG_CXXFLAGS = -std=c++20 -Wno-register -fno-semantic-interposition -MMD -MP
SHLIB_LINK  = -lstdc++ -Wl,-Bsymbolic-functions
# C++20 is beyond the JIT bitcode toolchain PostgreSQL was built with; the module is
# fast native code anyway.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(wildcard $(shell $(PG_CONFIG) --pgxs 2>/dev/null))
ifneq ($(PGXS),)
include $(PGXS)
# Same optimisation and slider-attack choice as the CMake build.
# (Every CPU with BMI2 has POPCNT too: popcounts in one instruction, not a library call.)
override CXXFLAGS += -O3 $(shell grep -qw bmi2 /proc/cpuinfo 2>/dev/null && echo -mbmi2 -mpopcnt -DPGMATE_USE_PEXT)
else
all:
	@echo "PostgreSQL server headers not found: run 'make deps' first" >&2; exit 1
endif
.DEFAULT_GOAL := all

-include $(wildcard $(OBJS:.o=.d))

pgmate--$(EXT_VERSION).sql: $(sort $(wildcard extension/sql/*.sql))
	cat $^ > $@

# The newest upgrade takes every routine from the install script's sections
# (scripts/upgrade-script.py): its hand-written part names only what else changed. When a
# version is released, its generated script is kept in extension/upgrade/ as it was.
pgmate--$(UPGRADE_FROM)--$(EXT_VERSION).sql: extension/upgrade/pgmate--$(UPGRADE_FROM)--$(EXT_VERSION).sql.in $(sort $(wildcard extension/sql/*.sql)) scripts/upgrade-script.py
	python3 scripts/upgrade-script.py $< $(sort $(wildcard extension/sql/*.sql)) > $@

# pgmate-worker (built by CMake) goes beside postgres, where the supervisor looks for it.
WORKER_BIN ?= build/bin/pgmate-worker
install: install-worker
.PHONY: install-worker
install-worker:
	@if [ -x $(WORKER_BIN) ]; then \
	  echo "installing $(WORKER_BIN) into $(DESTDIR)$(bindir)"; \
	  $(INSTALL_PROGRAM) $(WORKER_BIN) '$(DESTDIR)$(bindir)/pgmate-worker'; \
	else echo "note: $(WORKER_BIN) not built (make build); pgmate-worker not installed"; fi

# ---------------------------------------------------------------- convenience targets
BUILD_DIR    ?= build
FUZZ_DIR     ?= build/fuzz
JOBS         ?= $(shell nproc)
FUZZ_SECONDS ?= 20
CMAKE_FLAGS  ?=

.PHONY: deps configure build test test-unit test-sql test-long fuzz demo pretrain distill network bench server-start server-stop distclean gpu-bundle

deps:
	scripts/setup-deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Everything CI runs: setup, builds, unit and SQL tests, bounded fuzzing.
test: deps
	$(MAKE) build
	$(MAKE) test-unit
	$(MAKE) test-sql
	$(MAKE) fuzz

test-unit: build
	cd $(BUILD_DIR) && ctest -LE long --output-on-failure -j $(JOBS)

# The pg_regress suites and the import client against the project's own server
# (installs the extension first).
test-sql: build
	$(MAKE) all
	$(MAKE) install
	scripts/run-sql-tests.sh $(BUILD_DIR)/bin/pgmate

# Deep perft (depth 6 on the whole suite); not part of `make test`.
test-long: build
	cd $(BUILD_DIR) && ctest -L long --output-on-failure

fuzz:
	cmake -S . -B $(FUZZ_DIR) -DPGMATE_FUZZERS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	scripts/run-fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

# Only what the demo runs: the CLI and the worker (the tests are built by make test).
demo: deps
	$(MAKE) configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target pgmate pgmate-worker
	scripts/demo.sh $(BUILD_DIR)/bin/pgmate

# The pretraining recipe: a Stockfish corpus, a small network trained on the CPU, held-out
# accuracy and a match against pure MCTS (scripts/pretrain.sh; about 20 minutes on 2 cores).
pretrain: deps
	$(MAKE) configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target pgmate pgmate-worker
	scripts/pretrain.sh $(BUILD_DIR)/bin/pgmate

# The distillation recipe: the pretraining corpus labelled by Stockfish (pgmate analyse) and a
# network trained on its evaluations, next to the result-only one (scripts/distill.sh; runs
# make pretrain first when its database is missing).
distill: deps
	$(MAKE) configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target pgmate pgmate-worker
	scripts/distill.sh $(BUILD_DIR)/bin/pgmate

# The network pgmate ships, rebuilt from nothing (scripts/train-network.sh: openings,
# Stockfish games, labels, training; hours on 2 cores, resumable). NETWORK_ARGS=--quick
# checks that the pieces fit in about a minute.
network: deps
	$(MAKE) configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target pgmate pgmate-worker
	scripts/train-network.sh $(NETWORK_ARGS) $(BUILD_DIR)/bin/pgmate

bench: build
	bench/perft_vs_stockfish --pgmate $(BUILD_DIR)/bin/pgmate

# What a bare GPU machine lacks and scripts/gpu-check.sh needs, in one ignored folder that
# travels with the working tree: GoogleTest's sources, and PostgreSQL 15 with pgmate's
# extension and client, from Debian's packages (scripts/gpu-bundle.sh).
gpu-bundle: build
	scripts/gpu-bundle.sh $(BUILD_DIR)

server-start:
	scripts/pg-server.sh start

server-stop:
	scripts/pg-server.sh stop

distclean: clean
	rm -rf $(BUILD_DIR)
	-scripts/pg-server.sh stop
	rm -rf .pgdata
