/* A return address that is a function's first byte: the return from a call that was the last
 * instruction of the function before it (a call to a noreturn function), or the made-up first
 * return address an RTOS gives a task (FreeRTOS's prvTaskExitError through
 * portTASK_RETURN_ADDRESS, RTX5's osThreadExit, ...), which no call ever returns to.
 *
 * Rules, in order:
 *   1. the two bytes before it are `BLX Rm`: a return (the call could have gone anywhere);
 *   2. the four bytes before it are `BL label`: a return, unless the function is a known
 *      task-exit hook and the BL calls another function than the frame's own;
 *   3. no call before it and the function is a known task-exit hook, or nothing calls it: no
 *      branch in the code (BL, B.W, B<c>.W, B, B<c>) goes to it and no DWARF call site names
 *      it: a task's start;
 *   4. otherwise it is no return address at all.
 * "Nothing calls it" is a decode of every halfword of the executable sections as the start of
 * a branch (no capstone: only branch encodings matter), done only when rules 1-2 did not
 * decide, so at most a few times per walk. A halfword that is really data or the second half
 * of another instruction can look like a branch there: that errs towards "called", that is,
 * towards rule 4, never towards inventing a task start. */
#include <string.h>

#include "base/byteorder.h"
#include "elf/dwarf_call_sites.h"
#include "spoor/cortexm_facts.h"
#include "unwind/unwind_task_entry_internal.h"

/* Functions an RTOS port puts as a task's first return address. */
static const char *const task_exit_hooks[] = {
    "prvTaskExitError",   /* FreeRTOS ports (portTASK_RETURN_ADDRESS) */
    "vPortTaskExitError", /* FreeRTOS forks */
    "osThreadExit",       /* CMSIS-RTOS2 RTX5 */
};

/* Functions every thread starts in and that never return: no caller above them. Zephyr's
 * arch_new_thread and ThreadX's _tx_thread_stack_build make them a new thread's first PC (not
 * a return address): the thread's function is called from them. */
static const char *const thread_roots[] = {
    "z_thread_entry",         /* Zephyr lib/os/thread_entry.c */
    "_tx_thread_shell_entry", /* ThreadX common/src/tx_thread_shell_entry.c */
};

static bool known_hook(const char *name)
{
    for (size_t i = 0; name && i < sizeof task_exit_hooks / sizeof task_exit_hooks[0]; i++)
        if (strcmp(name, task_exit_hooks[i]) == 0)
            return true;
    return false;
}

bool spoor_unwind_thread_root(const spoor_elf *elf, uint32_t addr)
{
    const char *name = NULL;
    if (elf == NULL || !spoor_elf_function(elf, addr, &name, NULL, NULL) || name == NULL)
        return false;
    for (size_t i = 0; i < sizeof thread_roots / sizeof thread_roots[0]; i++)
        if (strcmp(name, thread_roots[i]) == 0)
            return true;
    return false;
}

static uint32_t sign_extend(uint32_t value, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    return (value ^ m) - m;
}

/* BL (T1); *target is where it goes. */
static bool decode_bl(uint16_t h1, uint16_t h2, uint32_t at, uint32_t *target)
{
    if (!spoor_cortexm_is_bl(h1, h2))
        return false;
    uint32_t s = (h1 >> 10) & 1u, j1 = (h2 >> 13) & 1u, j2 = (h2 >> 11) & 1u;
    uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
    uint32_t imm = s << 24 | i1 << 23 | i2 << 22 | (h1 & 0x3FFu) << 12 | (h2 & 0x7FFu) << 1;
    *target = (at + 4u + sign_extend(imm, 25)) & ~1u;
    return true;
}

/* Every branch encoding with an immediate target, taken as starting at halfword p (at). */
static bool branches_to(const uint8_t *p, size_t left, uint32_t at, uint32_t target)
{
    uint16_t h1 = spoor_le16(p);
    if ((h1 & 0xF800u) == 0xE000u) /* B (T2) */
        return at + 4u + sign_extend((h1 & 0x7FFu) << 1, 12) == target;
    if ((h1 & 0xF000u) == 0xD000u && (h1 & 0x0E00u) != 0x0E00u) /* B<c> (T1) */
        return at + 4u + sign_extend((h1 & 0xFFu) << 1, 9) == target;
    if (left < 4 || (h1 & 0xF800u) != 0xF000u)
        return false;
    uint16_t h2 = spoor_le16(p + 2);
    uint32_t to;
    if (decode_bl(h1, h2, at, &to)) /* BL */
        return to == target;
    if ((h2 & 0xD000u) == 0x9000u) { /* B.W (T4): BL's encoding with bit 14 clear */
        decode_bl(h1, (uint16_t)(h2 | 0x4000u), at, &to);
        return to == target;
    }
    if ((h2 & 0xD000u) == 0x8000u && (h1 & 0x0380u) != 0x0380u) { /* B<c>.W (T3) */
        uint32_t s = (h1 >> 10) & 1u, j1 = (h2 >> 13) & 1u, j2 = (h2 >> 11) & 1u;
        uint32_t imm = s << 20 | j2 << 19 | j1 << 18 | (h1 & 0x3Fu) << 12 | (h2 & 0x7FFu) << 1;
        return at + 4u + sign_extend(imm, 21) == target;
    }
    return false;
}

/* True when some branch in the ELF's code outside the function [entry, entry + size) (its own
 * loops do not count: `for (;;);` is a branch to itself), or some DWARF call site, goes to
 * entry. */
static bool called(const spoor_elf *elf, uint32_t entry, uint32_t size)
{
    if (spoor_call_site_targets(elf, entry))
        return true;
    spoor_elf_range ranges[64];
    size_t n = spoor_elf_ranges(elf, ranges, sizeof ranges / sizeof ranges[0]);
    if (n > sizeof ranges / sizeof ranges[0])
        return true; /* more sections than looked at: do not claim nobody calls it */
    for (size_t i = 0; i < n; i++) {
        const spoor_elf_range *r = &ranges[i];
        if (!r->code || r->data == NULL)
            continue;
        for (uint32_t off = 0; off + 2 <= r->size; off += 2)
            if ((r->addr + off < entry || r->addr + off - entry >= size) &&
                branches_to(r->data + off, r->size - off, r->addr + off, entry))
                return true;
    }
    return false;
}

unwind_return_kind spoor_unwind_return_kind(const unwind_env *env, uint32_t return_address,
                                            uint32_t callee_entry, uint32_t *hook)
{
    uint32_t ra = return_address & ~1u, start, size = 0;
    const char *name = NULL;
    if (env->elf == NULL || !spoor_elf_function(env->elf, ra, &name, &start, &size) ||
        start != ra || ra < 4)
        return UNWIND_RETURN_CALL;
    uint8_t before[4];
    bool have = spoor_unwind_read_code(env, ra - 4u, before, sizeof before);
    uint16_t h1 = spoor_le16(before), h2 = spoor_le16(before + 2);
    uint32_t target;
    if (have && spoor_cortexm_is_blx_register(h2))
        return UNWIND_RETURN_CALL;
    bool hooked = known_hook(name);
    if (have && decode_bl(h1, h2, ra - 4u, &target) && (!hooked || target == callee_entry))
        return UNWIND_RETURN_CALL;
    if (hooked || !called(env->elf, ra, size)) {
        *hook = ra;
        return UNWIND_RETURN_TASK_START;
    }
    return UNWIND_RETURN_NONE;
}
