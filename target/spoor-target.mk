# spoor's target library in a Make-based firmware build (arm-none-eabi-gcc).
#
#   include $(SPOOR_PREFIX)/share/spoor/spoor-target.mk
#   SRCS    += $(SPOOR_TARGET_SRCS)
#   CFLAGS  += $(addprefix -I,$(SPOOR_TARGET_INC)) $(SPOOR_TARGET_CFLAGS)
#   LDFLAGS += $(SPOOR_TARGET_LDFLAGS)
#
# Defines:
#   SPOOR_TARGET_SRCS     the C sources: the portable part and the Cortex-M port. They select
#                         their code from the compiler's -mcpu flags (Armv6-M, Armv7-M with or
#                         without FPU, Armv8-M Mainline), so compile them with the firmware's.
#   SPOOR_TARGET_INC      the include directories (folders, not -I flags): #include "spoor/crash.h"
#   SPOOR_TARGET_CFLAGS   one section per function and object (for --gc-sections),
#                         freestanding; the sources are C99 and build as C99 or later.
#                         The application's -finstrument-functions or -pg may be in the same
#                         CFLAGS: every function of the library is marked no_instrument_function
#                         (spoor/no_instrument.h), so none of it is instrumented.
#
# The library calls memcpy, memset and memcmp (GCC may emit them for struct copies in any
# freestanding code too): a firmware linked with -nostdlib must provide them.
#   SPOOR_TARGET_LD_DIR   the directory of spoor-sections.ld, the linker-script lines to
#                         INCLUDE in the firmware's SECTIONS (see the file)
#   SPOOR_TARGET_LDFLAGS  -L$(SPOOR_TARGET_LD_DIR) and the GNU build-id the dump names the ELF by
#   SPOOR_POST_LINK       the command to end the link recipe with: `spoor check -e $@`
#                         (docs/check.md), which fails the build when spoor is not wired (fault
#                         vectors, build-id, .noinit, instrumented naked handlers, ...). It runs
#                         the spoor installed beside this file (or SPOOR_CHECK_BIN); SPOOR_CHECK=0
#                         turns it off, and without a spoor it only says that it was skipped.
#
#   $(BUILD)/fw.elf: $(OBJS)
#   	$(CC) $(LDFLAGS) $(OBJS) -o $@
#   	$(SPOOR_POST_LINK)
#
# Installed, this file sits in <prefix>/share/spoor beside the sources in target/; in spoor's
# source tree it is target/spoor-target.mk, beside src/ and include/. Paths must not contain
# spaces (Make). docs/integrating.md has a complete firmware.

SPOOR_TARGET_LD_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
SPOOR_TARGET_ROOT := $(if $(wildcard $(SPOOR_TARGET_LD_DIR)/target/src),$(SPOOR_TARGET_LD_DIR)/target,$(SPOOR_TARGET_LD_DIR))

SPOOR_TARGET_SRCS := $(sort $(wildcard $(SPOOR_TARGET_ROOT)/src/*.c)) \
                     $(sort $(wildcard $(SPOOR_TARGET_ROOT)/src/cortexm/*.c))
SPOOR_TARGET_INC := $(SPOOR_TARGET_ROOT)/include
SPOOR_TARGET_CFLAGS := -ffunction-sections -fdata-sections -ffreestanding
SPOOR_TARGET_LDFLAGS := -L$(SPOOR_TARGET_LD_DIR) -Wl,--build-id=sha1

SPOOR_CHECK ?= 1
SPOOR_CHECK_BIN ?= $(firstword $(wildcard $(abspath $(SPOOR_TARGET_LD_DIR)/../../bin/spoor)))
SPOOR_POST_LINK = $(if $(filter 0 no off OFF,$(SPOOR_CHECK)),@:,$(if $(SPOOR_CHECK_BIN),$(SPOOR_CHECK_BIN) check -e $@,@echo "spoor check skipped: no spoor beside $(SPOOR_TARGET_LD_DIR) (set SPOOR_CHECK_BIN)"))
