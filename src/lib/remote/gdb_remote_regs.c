/* The registers a GDB server describes, by name, into spoor_regs. Names are those of GDB's
 * standard ARM features (org.gnu.gdb.arm.m-profile: r0-r12, sp, lr, pc, xpsr;
 * org.gnu.gdb.arm.m-system: msp, psp; org.gnu.gdb.arm.vfp: d0-d15, fpscr) and of the names
 * OpenOCD, pyOCD and J-Link use for the rest (control, msplim, psplim, s0-s31). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "remote/gdb_remote_internal.h"

enum { SLOT_NONE, SLOT_CORE, SLOT_BANKED, SLOT_S, SLOT_D, SLOT_FPSCR };

/* Index 16 is xpsr ("cpsr" in GDB's default ARM layout, used without a description). */
static const struct {
    const char *name;
    int index;
} core_alias[] = {{"sp", 13}, {"lr", 14}, {"pc", 15}, {"xpsr", 16}, {"cpsr", 16}};
static const char *const banked_names[] = {"msp", "psp", "control", "msplim", "psplim"};

/* "r7" -> 7, "s31" -> 31 for prefix 's': the number after one letter, or -1. */
static int numbered(const char *name, char prefix, int limit)
{
    if ((name[0] | 0x20) != prefix || name[1] < '0' || name[1] > '9' || (name[1] == '0' && name[2]))
        return -1;
    int v = 0;
    for (const char *p = name + 1; *p; p++) {
        if (*p < '0' || *p > '9' || (v = v * 10 + (*p - '0')) >= limit)
            return -1;
    }
    return v;
}

/* Which slot of spoor_regs name is, with its index. */
static int slot_of(const char *name, int *index)
{
    for (size_t i = 0; i < sizeof core_alias / sizeof core_alias[0]; i++)
        if (!strcasecmp(name, core_alias[i].name)) {
            *index = core_alias[i].index;
            return SLOT_CORE;
        }
    for (size_t i = 0; i < sizeof banked_names / sizeof banked_names[0]; i++)
        if (!strcasecmp(name, banked_names[i])) {
            *index = (int)i;
            return SLOT_BANKED;
        }
    if (!strcasecmp(name, "fpscr"))
        return SLOT_FPSCR;
    if ((*index = numbered(name, 'r', 16)) >= 0)
        return SLOT_CORE;
    if ((*index = numbered(name, 's', 32)) >= 0)
        return SLOT_S;
    if ((*index = numbered(name, 'd', 16)) >= 0)
        return SLOT_D;
    return SLOT_NONE;
}

bool spoor_gdb_reg_wanted(const char *name)
{
    int index;
    return slot_of(name, &index) != SLOT_NONE;
}

bool spoor_gdb_reg_is_fp(const char *name)
{
    int index, slot = slot_of(name, &index);
    return slot == SLOT_S || slot == SLOT_D || slot == SLOT_FPSCR;
}

static uint64_t le_value(const uint8_t *b, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n && i < 8; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

bool spoor_gdb_reg_store(spoor_regs *out, gdb_regs_seen *seen, const char *name,
                         const uint8_t *bytes, size_t nbytes)
{
    int i;
    int slot = slot_of(name, &i);
    uint64_t v = le_value(bytes, nbytes);
    uint32_t *banked[] = {&out->msp, &out->psp, &out->control, &out->msplim, &out->psplim};
    switch (slot) {
    case SLOT_CORE:
        if (i == 16)
            out->xpsr = (uint32_t)v;
        else
            out->r[i] = (uint32_t)v;
        seen->core |= 1u << i;
        return true;
    case SLOT_BANKED:
        *banked[i] = (uint32_t)v;
        seen->banked |= 1u << i;
        return true;
    case SLOT_S:
        out->s[i] = (uint32_t)v;
        seen->s |= 1u << i;
        return true;
    case SLOT_D:
        if (nbytes < 8)
            return false;
        out->s[2 * i] = (uint32_t)v;
        out->s[2 * i + 1] = (uint32_t)(v >> 32);
        seen->s |= 3u << (2 * i);
        return true;
    case SLOT_FPSCR:
        out->fpscr = (uint32_t)v;
        seen->fpscr = true;
        return true;
    }
    return false;
}

void spoor_gdb_regs_finish(spoor_regs *out, const gdb_regs_seen *seen, char *missing,
                           size_t missing_len)
{
    out->have = 0;
    if (seen->core == 0x1FFFFu)
        out->have |= SPOOR_HAVE_CORE;
    if ((seen->banked & 7u) == 7u)
        out->have |= SPOOR_HAVE_BANKED_SP;
    if ((seen->banked & 0x18u) == 0x18u)
        out->have |= SPOOR_HAVE_LIMITS;
    if ((seen->s & 0xFFFFu) == 0xFFFFu && seen->fpscr)
        out->have |= SPOOR_HAVE_FP;
    if ((seen->s & 0xFFFF0000u) == 0xFFFF0000u && (out->have & SPOOR_HAVE_FP))
        out->have |= SPOOR_HAVE_FP_HIGH;
    if (!missing || !missing_len)
        return;
    const char *banked = out->have & SPOOR_HAVE_BANKED_SP ? "" : "msp/psp/control";
    const char *fp = seen->any_fp && !(out->have & SPOOR_HAVE_FP) ? "fpscr/s0-s15" : "";
    snprintf(missing, missing_len, "%s%s%s", banked, banked[0] && fp[0] ? ", " : "", fp);
}
