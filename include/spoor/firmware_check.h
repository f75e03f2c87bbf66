/* Whether a firmware ELF has spoor's target library wired as it must be (spoor check,
 * docs/check.md): read from the ELF alone, item by item. */
#ifndef SPOOR_FIRMWARE_CHECK_H
#define SPOOR_FIRMWARE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/elf.h"

typedef enum spoor_check_status {
    SPOOR_CHECK_OK,   /* wired */
    SPOOR_CHECK_FAIL, /* mis-wired: the text says what goes wrong and what to do */
    SPOOR_CHECK_SKIP, /* does not apply to this firmware (the text says why) */
} spoor_check_status;

typedef struct spoor_check_item {
    const char *name; /* "HardFault vector", "build-id", ".noinit", "EHABI tables", ... */
    spoor_check_status status;
    char text[480];
} spoor_check_item;

#define SPOOR_CHECK_MAX_ITEMS 24

/* Checks elf and writes the items (at most max) into items; returns how many were written:
 * the fault entries of the vector table (HardFault, and MemManage, BusFault, UsageFault from
 * Armv7-M on, SecureFault on Armv8-M Mainline) point at spoor's handlers or at a handler that
 * calls spoor; the build-id note is there, in flash, between __build_id_start and
 * __build_id_end; .noinit (the dump buffer) is in no LOAD segment; the EHABI tables are there
 * when spoor_backtrace is linked; no naked function (e.g. an RTOS's PendSV handler) calls
 * __cyg_profile_func_enter; instrumented code has its recorder initialised (a call to
 * spoor_calls_init). */
size_t spoor_firmware_check(const spoor_elf *elf, spoor_check_item *items, size_t max);

/* Whether code of elf in [lo, hi) branches to target (Thumb B, B<c>, BL, B.W, B<c>.W, decoded
 * from the start of each executable section, or of lo) or a word of an allocated section
 * holds target with the Thumb bit (a function pointer: a vector table, a callback). */
bool spoor_elf_refers_to(const spoor_elf *elf, uint32_t target, uint32_t lo, uint32_t hi);

/* Whether the function named name (a symbol) exists and something in elf refers to it
 * (spoor_elf_refers_to over the whole ELF). */
bool spoor_elf_function_used(const spoor_elf *elf, const char *name);

#endif
