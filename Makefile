# The two commands of the README (both install missing Debian packages first), and install.
JOBS ?= $(shell nproc)
CHECK_DIR := build/check
DEMO_DIR := build/demo

.PHONY: all demo demo-top check deps clean fuzz-long install python

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

# The scheduler example in QEMU under the virtual trace probe, spoor top live on its stream
# (docs/vprobe.md); says so and stops when this spoor has no top command yet.
demo-top: deps
	cmake -S . -B $(DEMO_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(DEMO_DIR) -j $(JOBS) >/dev/null
	tools/vprobe_demo_top.sh $(DEMO_DIR)

# spoor, libspoor (static, shared, pkg-config, CMake package), the man page, bash completion
# and the target library as sources for firmware builds under PREFIX (docs/integrating.md).
# A release build without the tests or the example firmware; needs the build dependencies
# only (cmake, a C compiler, pkg-config, libdw-dev, libelf-dev, libcapstone-dev, libiberty-dev).
PREFIX ?= /usr/local
INSTALL_DIR := build/install
RELEASE_CONFIG := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPOOR_TESTS=OFF -DSPOOR_FIRMWARE=OFF \
  -DSPOOR_SANITIZE=OFF
install:
	cmake -S . -B $(INSTALL_DIR) $(RELEASE_CONFIG) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(INSTALL_DIR) -j $(JOBS)
	cmake --install $(INSTALL_DIR) --prefix $(PREFIX)

# The spoor Python package as one wheel in dist/ (spoor-VERSION-cp39-abi3-linux_*.whl, every
# CPython >= 3.9) that carries libspoor: the release build's libspoor.a (install's build folder)
# linked into its extension. Offline, with Debian's python3 and its packages (python3-build,
# python3-cffi, python3-setuptools, python3-dev) besides the build dependencies above;
# python/build is made afresh, so the wheel holds nothing of an earlier build (docs/python.md).
WHEEL_DIR := dist
python:
	cmake -S . -B $(INSTALL_DIR) $(RELEASE_CONFIG) >/dev/null
	cmake --build $(INSTALL_DIR) -j $(JOBS) --target spoor
	rm -rf python/build
	SPOOR_BUILD_DIR=$(CURDIR)/$(INSTALL_DIR) /usr/bin/python3 -m build --no-isolation --wheel \
	  --outdir $(WHEEL_DIR) python

clean:
	rm -rf build $(WHEEL_DIR)
