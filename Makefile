# pgmate: convenience targets. CMake builds core, CLI, worker and tests (build/);
# the PostgreSQL extension builds with PGXS on top of the same core sources.
#
#   make demo   set up, build, and show the main job
#   make test   set up, build, and run every test (the CI entry point)

BUILD_DIR   ?= build
FUZZ_DIR    ?= build/fuzz
JOBS        ?= $(shell nproc)
FUZZ_SECONDS ?= 20
CMAKE_FLAGS ?=

.PHONY: all deps configure build test test-unit test-long fuzz demo bench clean

all: build

deps:
	scripts/setup-deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Everything CI runs: setup, build, unit and integration tests, bounded fuzzing.
test: deps
	$(MAKE) build
	$(MAKE) test-unit
	$(MAKE) fuzz

test-unit: build
	cd $(BUILD_DIR) && ctest -LE long --output-on-failure -j $(JOBS)

# Deep perft (depth 6 on the whole suite); not part of `make test`.
test-long: build
	cd $(BUILD_DIR) && ctest -L long --output-on-failure

fuzz:
	cmake -S . -B $(FUZZ_DIR) -DPGMATE_FUZZERS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	scripts/run-fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

demo: deps
	$(MAKE) build
	scripts/demo.sh $(BUILD_DIR)/bin/pgmate

bench: build
	bench/perft_vs_stockfish --pgmate $(BUILD_DIR)/bin/pgmate

clean:
	rm -rf $(BUILD_DIR)
