#!/usr/bin/env bash
# Installs the Debian packages spoor's build, tests and demo need, when missing.
# As root: runs apt-get. Otherwise: prints the apt-get line and stops.
set -euo pipefail

# package -> file (a glob) that proves it is installed
declare -A probe=(
  [build-essential]=/usr/bin/gcc
  [cmake]=/usr/bin/cmake
  [pkg-config]=/usr/bin/pkg-config
  [libdw-dev]=/usr/include/elfutils/libdw.h
  [libelf-dev]=/usr/include/libelf.h
  [zlib1g-dev]=/usr/include/zlib.h
  [libbz2-dev]=/usr/include/bzlib.h
  [liblzma-dev]=/usr/include/lzma.h
  [libcapstone-dev]=/usr/include/capstone/capstone.h
  [libiberty-dev]=/usr/include/libiberty/demangle.h
  [libmsgpack-dev]=/usr/include/msgpack.h
  [libcmocka-dev]=/usr/include/cmocka.h
  [gcc-arm-none-eabi]=/usr/bin/arm-none-eabi-gcc
  [binutils-arm-none-eabi]=/usr/bin/arm-none-eabi-addr2line
  [libnewlib-arm-none-eabi]=/usr/lib/arm-none-eabi/newlib/libc.a
  [qemu-system-arm]=/usr/bin/qemu-system-arm
  [gdb-multiarch]=/usr/bin/gdb-multiarch
  [python3]=/usr/bin/python3
  [python3-cffi]=/usr/lib/python3/dist-packages/cffi/__init__.py
  [python3-setuptools]=/usr/lib/python3/dist-packages/setuptools/__init__.py
  [python3-pip]=/usr/lib/python3/dist-packages/pip/__init__.py
  [python3-dev]='/usr/include/python3*/Python.h'
  [python3-venv]='/usr/lib/python3*/ensurepip/__init__.py'
  [python3-build]=/usr/lib/python3/dist-packages/build/__init__.py
  [python3-pytest]=/usr/lib/python3/dist-packages/pytest/__init__.py
  [python3-distributed]=/usr/lib/python3/dist-packages/distributed/__init__.py
  [tcl]=/usr/bin/tclsh
  [clang]=/usr/bin/clang
  [llvm]=/usr/bin/llvm-symbolizer
  [man-db]=/usr/bin/man
  [chromium]=/usr/bin/chromium
  [libclang-rt-14-dev]='/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a'
)

missing=()
for pkg in "${!probe[@]}"; do
  compgen -G "${probe[$pkg]}" >/dev/null || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

IFS=$'\n' missing=($(sort <<<"${missing[*]}")); unset IFS
line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
  echo "spoor: missing packages; as root run: apt-get update && $line" >&2
  exit 1
fi
echo "spoor: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
