# multilane — the two commands a newcomer needs:
#   make demo   install dependencies, build, and compare the papers' algorithms on a two-site grid
#   make test   install dependencies, build, and run the whole suite twice (plain and ASan+UBSan),
#               and the threaded MPI programs under ThreadSanitizer
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=

.PHONY: all deps build build-asan build-tsan test test-plain test-asan test-tsan test-perf demo fuzz \
	fuzz-run format clean

all: build

deps:
	@scripts/install-deps.sh

# -g1: line tables (enough for perf and for backtraces) without the type information, which costs
# a third of the compile time; pass CMAKE_FLAGS=-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g" for gdb.
# Ninja: it starts a target's compilations before the libraries it links are done, so both
# cores stay busy across target boundaries.
$(BUILD)/CMakeCache.txt:
	cmake -G Ninja -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -G Ninja -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMULTILANE_SANITIZE=ON $(CMAKE_FLAGS)

build-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The `perf` label (rates and times that need the CPU to themselves) is left out: `make test-perf`.
test-plain: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE perf

test-asan: build-asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE perf

test-perf: build
	cd $(BUILD) && ctest --output-on-failure -L perf

# ThreadSanitizer: only what the threaded MPI programs need (tests/mpi.cmake) is built and run.
$(TSAN_BUILD)/CMakeCache.txt:
	cmake -G Ninja -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMULTILANE_SANITIZE_THREADS=ON \
	  $(CMAKE_FLAGS)

build-tsan: deps $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) --target mpi_sanitized_programs -j $(JOBS)

test-tsan: build-tsan
	cd $(TSAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L threads

test: test-plain test-asan test-tsan

demo: build
	@scripts/demo.sh $(BUILD)

# The fuzz targets of tests/fuzz (tests/fuzz.cmake), built with clang's libFuzzer, and each
# fuzzed for FUZZ_SECONDS from its corpus (`make test` only replays the corpus).
$(FUZZ_BUILD)/CMakeCache.txt:
	cmake -G Ninja -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DMULTILANE_FUZZ=ON $(CMAKE_FLAGS)

fuzz:
	@scripts/install-deps.sh fuzz
	$(MAKE) $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) --target fuzz -j $(JOBS)

fuzz-run: fuzz
	scripts/fuzz-run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
