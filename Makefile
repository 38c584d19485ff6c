# Thin wrapper over CMake. `make demo`, `make tour` and `make test` install
# whatever Debian packages are missing, configure build/, build, and run.
BUILD ?= build
# how long `make tour` takes, as it says before it starts (its record, measured:
# `scripts/records measure tour`, docs/records/)
TOUR_MINUTES = 20
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps build demo tour test bench asan install clean

all: build

deps:
	@./scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The lab's headline in about a minute (scenarios/demo/, docs/scenarios.md):
# a broken and a correct lock under oversell, a GC pause without and with
# fencing, a Redis failover, Redis against ZooKeeper throughput.
demo: build
	@echo "make demo: 4 short scenarios, about 1 minute on 2 cores (docs/benchmarks.md)"
	./$(BUILD)/locklab run scenarios/demo/*.yaml

# Every shipped scenario, one after the other.
tour: build
	@echo "make tour: every shipped scenario, about $(TOUR_MINUTES) minutes on 2 cores (docs/benchmarks.md)"
	scripts/tour ./$(BUILD)/locklab

# The unit tier first (no server, seconds: `ctest -L unit`), then the rest,
# TEST_JOBS at a time: they mostly wait on servers and business times, and
# those that time things run alone (tests/CMakeLists.txt, label timing).
TEST_JOBS ?= 3
test: build
	cd $(BUILD) && ctest --output-on-failure -L unit && ctest --output-on-failure -j$(TEST_JOBS) -LE unit

# Harness overhead against a bare hiredis loop (docs/benchmarks.md).
bench: build
	./$(BUILD)/locklab bench overhead

# The tests under AddressSanitizer and UBSan, in build-asan/: those labelled
# asan (tests/CMakeLists.txt), or every test with ASAN_ALL=1.
ASAN_CTEST = $(if $(ASAN_ALL),,-L asan)
asan: deps
	@cmake -S . -B build-asan -DLOCKLAB_ASAN=ON -DLOCKLAB_UBSAN=ON >/dev/null
	@cmake --build build-asan -j$(JOBS)
	cd build-asan && ctest --output-on-failure -L unit && ctest --output-on-failure -j$(TEST_JOBS) $(ASAN_CTEST) -LE unit

# Install under PREFIX (default /usr/local): bin/, libexec/locklab/,
# share/locklab/ (scenarios, plot scripts), the man page.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan
