#!/usr/bin/env bash
# Symbolizer speed for ONE address, the cost of a crash's first lookup: `spoor sym -e ELF ADDR`
# against the baseline `arm-none-eabi-addr2line -f -i -e ELF ADDR`, each a whole process (start,
# open the ELF, find the unit, decode it, answer), best wall time of N runs each, interleaved and
# measured in the same run. Prints both times and the ratio per address, and with valgrind
# installed the instructions each whole process executes (callgrind: steadier than wall time on
# a busy machine).
# usage: bench/sym_one.sh [SPOOR_BIN] [ELF] [ADDR...]   (defaults: a release build in build/bench,
#   its printf-m4f.elf, and two addresses: in _vfprintf_r, the largest unit, and in main)
# SYM_ONE_RUNS (default 30) sets how many runs each.
exec env SYM_BENCH_ONE=1 "$(dirname "$0")/sym.sh" "$@"
