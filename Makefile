# The two commands of the README. Both install missing Debian packages first.
JOBS ?= $(shell nproc)
CHECK_DIR := build/check
DEMO_DIR := build/demo

.PHONY: all demo check deps clean

all: demo

deps:
	@scripts/deps.sh

check: deps
	cmake -S . -B $(CHECK_DIR) -DCMAKE_BUILD_TYPE=Debug -DSPOOR_SANITIZE=ON >/dev/null
	cmake --build $(CHECK_DIR) -j $(JOBS)
	cd $(CHECK_DIR) && ctest --output-on-failure -j $(JOBS)

demo: deps
	cmake -S . -B $(DEMO_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(DEMO_DIR) -j $(JOBS) >/dev/null
	scripts/demo_crash.sh $(DEMO_DIR)

clean:
	rm -rf build
