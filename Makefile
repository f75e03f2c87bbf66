# The two commands of the README. Both install missing Debian packages first.
JOBS ?= $(shell nproc)
CHECK_DIR := build/check
DEMO_DIR := build/demo

.PHONY: all demo check deps clean fuzz-long

all: demo

deps:
	@scripts/deps.sh

check: deps
	cmake -S . -B $(CHECK_DIR) -DCMAKE_BUILD_TYPE=Debug -DSPOOR_SANITIZE=ON >/dev/null
	cmake --build $(CHECK_DIR) -j $(JOBS)
	cd $(CHECK_DIR) && ctest --output-on-failure -j $(JOBS)

# Every libFuzzer target for 10 minutes each (make check runs them for 20 s).
FUZZ_DIR := build/fuzz-long
fuzz-long: deps
	cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=Debug -DSPOOR_SANITIZE=ON -DSPOOR_FUZZ_TIME=600 >/dev/null
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	cd $(FUZZ_DIR) && ctest --output-on-failure -R '^fuzz/' --timeout 900

demo: deps
	cmake -S . -B $(DEMO_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(DEMO_DIR) -j $(JOBS) >/dev/null
	scripts/demo_crash.sh $(DEMO_DIR)

clean:
	rm -rf build
