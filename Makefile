# Thin wrapper over CMake. `make demo` and `make test` install whatever
# Debian packages are missing, configure build/, build, and run.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps build demo test bench asan install clean

all: build

deps:
	@./scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	./$(BUILD)/locklab run scenarios/*.yaml

test: build
	cd $(BUILD) && ctest --output-on-failure

# Harness overhead against a bare hiredis loop (docs/benchmarks.md).
bench: build
	./$(BUILD)/locklab bench overhead

# The tests under AddressSanitizer and UBSan, in build-asan/: those labelled
# asan (tests/CMakeLists.txt), or every test with ASAN_ALL=1.
ASAN_CTEST = $(if $(ASAN_ALL),,-L asan)
asan: deps
	@cmake -S . -B build-asan -DLOCKLAB_ASAN=ON -DLOCKLAB_UBSAN=ON >/dev/null
	@cmake --build build-asan -j$(JOBS)
	cd build-asan && ctest --output-on-failure $(ASAN_CTEST)

# Install under PREFIX (default /usr/local): bin/, libexec/locklab/,
# share/locklab/ (scenarios, plot scripts), the man page.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan
