/* Fault status registers to words (ARMv7-M ARM B3.2.15-B3.2.17, ARMv8-M ARM D1.2 SFSR). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "spoor/fault.h"

#include "base/byteorder.h"

enum addr_kind { NO_ADDR, ADDR_MMFAR, ADDR_BFAR, ADDR_SFAR, ADDR_PC };

struct bit_def {
    uint8_t bit;
    const char *type; /* the fault this bit belongs to */
    const char *name;
    const char *meaning;
    enum addr_kind addr;
};

/* CFSR: MemManage (bits 0-7), BusFault (8-15), UsageFault (16-31). The *ARVALID bits only say
 * that the address register is valid and are not listed as causes. */
static const struct bit_def cfsr_bits[] = {
    {0, "MemManage", "IACCVIOL", "instruction fetch from a region the MPU forbids or an XN region",
     ADDR_PC},
    {1, "MemManage", "DACCVIOL", "data access the MPU forbids", ADDR_MMFAR},
    {3, "MemManage", "MUNSTKERR", "MPU fault while unstacking an exception return", NO_ADDR},
    {4, "MemManage", "MSTKERR", "MPU fault while stacking for an exception (stack overflow?)",
     NO_ADDR},
    {5, "MemManage", "MLSPERR", "MPU fault during lazy floating-point state preservation", NO_ADDR},
    {8, "BusFault", "IBUSERR", "bus error on instruction fetch (PC in unmapped or bad memory)",
     ADDR_PC},
    {9, "BusFault", "PRECISERR", "precise data bus error: the faulting access is at the stacked PC",
     ADDR_BFAR},
    {10, "BusFault", "IMPRECISERR",
     "imprecise data bus error: the stacked PC is after the faulting write", NO_ADDR},
    {11, "BusFault", "UNSTKERR", "bus error while unstacking an exception return", NO_ADDR},
    {12, "BusFault", "STKERR", "bus error while stacking for an exception (stack overflow?)",
     NO_ADDR},
    {13, "BusFault", "LSPERR", "bus error during lazy floating-point state preservation", NO_ADDR},
    {16, "UsageFault", "UNDEFINSTR", "undefined instruction", ADDR_PC},
    {17, "UsageFault", "INVSTATE",
     "branch to an address without the Thumb bit / bad function pointer", ADDR_PC},
    {18, "UsageFault", "INVPC", "invalid EXC_RETURN or exception return (corrupt LR or stack)",
     ADDR_PC},
    {19, "UsageFault", "NOCP", "coprocessor/FPU instruction with the coprocessor disabled",
     ADDR_PC},
    {20, "UsageFault", "STKOF", "stack overflow: SP went below its stack limit register", NO_ADDR},
    {24, "UsageFault", "UNALIGNED", "unaligned access with UNALIGN_TRP set or a multi-word access",
     ADDR_PC},
    {25, "UsageFault", "DIVBYZERO", "integer division by zero with DIV_0_TRP set", ADDR_PC},
};

static const struct bit_def hfsr_bits[] = {
    {1, "HardFault", "VECTTBL", "bus error reading the vector table", NO_ADDR},
    {30, "HardFault", "FORCED",
     "a configurable fault escalated to HardFault (disabled or of too low priority)", NO_ADDR},
    {31, "HardFault", "DEBUGEVT",
     "debug event while halting debug is off (e.g. BKPT with no debugger)", ADDR_PC},
};

static const struct bit_def sfsr_bits[] = {
    {0, "SecureFault", "INVEP",
     "non-secure code called a secure address that is not a valid entry point", NO_ADDR},
    {1, "SecureFault", "INVIS", "integrity signature of the secure stack frame is invalid",
     NO_ADDR},
    {2, "SecureFault", "INVER", "invalid exception return", NO_ADDR},
    {3, "SecureFault", "AUVIOL", "non-secure access to secure memory (attribution unit violation)",
     ADDR_SFAR},
    {4, "SecureFault", "INVTRAN", "branch from secure to non-secure without BLXNS/BXNS", NO_ADDR},
    {5, "SecureFault", "LSPERR", "SAU/IDAU violation during lazy floating-point state preservation",
     NO_ADDR},
    {7, "SecureFault", "LSERR", "lazy state activation or deactivation error", NO_ADDR},
};

static const char *exception_fault_name(int exception)
{
    switch (exception) {
    case 3: return "HardFault";
    case 4: return "MemManage";
    case 5: return "BusFault";
    case 6: return "UsageFault";
    case 7: return "SecureFault";
    default: return NULL;
    }
}

static void add_bits(spoor_fault_info *info, const spoor_fault_status *r, uint32_t pc,
                     const char *reg, uint32_t value, const struct bit_def *defs, size_t ndefs,
                     const char **first_type)
{
    for (size_t i = 0; i < ndefs; i++) {
        const struct bit_def *d = &defs[i];
        if (!(value & (1u << d->bit)) || info->nbits == SPOOR_FAULT_MAX_BITS)
            continue;
        info->bits[info->nbits++] = (spoor_fault_bit){reg, d->name, d->meaning};
        if (!*first_type && strcmp(d->name, "FORCED") != 0)
            *first_type = d->type;
        if (info->has_address)
            continue;
        switch (d->addr) {
        case ADDR_MMFAR:
            if ((r->valid & SPOOR_FAULT_HAS_MMFAR) && (r->cfsr & (1u << 7))) {
                info->has_address = true;
                info->address = r->mmfar;
                info->address_from = "MMFAR";
            }
            break;
        case ADDR_BFAR:
            if ((r->valid & SPOOR_FAULT_HAS_BFAR) && (r->cfsr & (1u << 15))) {
                info->has_address = true;
                info->address = r->bfar;
                info->address_from = "BFAR";
            }
            break;
        case ADDR_SFAR:
            if ((r->valid & SPOOR_FAULT_HAS_SFAR) && (r->sfsr & (1u << 6))) {
                info->has_address = true;
                info->address = r->sfar;
                info->address_from = "SFAR";
            }
            break;
        case ADDR_PC:
            info->has_address = true;
            info->address = pc;
            info->address_from = "PC";
            break;
        case NO_ADDR: break;
        }
    }
}

void spoor_fault_decode(const spoor_fault_status *r, int exception, uint32_t pc,
                        spoor_fault_info *info)
{
    memset(info, 0, sizeof *info);
    const char *type = NULL;
    if ((r->valid & SPOOR_FAULT_HAS_SFSR))
        add_bits(info, r, pc, "SFSR", r->sfsr, sfsr_bits, sizeof sfsr_bits / sizeof *sfsr_bits,
                 &type);
    if ((r->valid & SPOOR_FAULT_HAS_CFSR))
        add_bits(info, r, pc, "CFSR", r->cfsr, cfsr_bits, sizeof cfsr_bits / sizeof *cfsr_bits,
                 &type);
    if ((r->valid & SPOOR_FAULT_HAS_HFSR)) {
        add_bits(info, r, pc, "HFSR", r->hfsr, hfsr_bits, sizeof hfsr_bits / sizeof *hfsr_bits,
                 &type);
        info->escalated = (r->hfsr & (1u << 30)) != 0;
    }
    if (!type)
        type = exception_fault_name(exception);
    info->type = type ? type : "fault";
}

size_t spoor_fault_summary(const spoor_fault_info *info, char *buf, size_t len)
{
    size_t n = 0;
#define OUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__);                            \
        if (k_ > 0)                                                                                \
            n += (size_t)k_;                                                                       \
    } while (0)
    OUT("%s%s", info->type, info->escalated ? " (escalated to HardFault)" : "");
    const char *sep = ": ";
    for (size_t i = 0; i < info->nbits; i++) {
        if (!strcmp(info->bits[i].name, "FORCED"))
            continue;
        OUT("%s%s - %s", sep, info->bits[i].name, info->bits[i].meaning);
        sep = "; ";
    }
    if (info->has_address)
        OUT(", %s 0x%08x", info->address_from, info->address);
#undef OUT
    return n;
}

bool spoor_fault_status_read(spoor_read_fn read, void *ctx, spoor_fault_status *out)
{
    static const struct {
        uint32_t addr, bit;
        size_t field;
    } regs[] = {
        {SPOOR_SCS_CFSR, SPOOR_FAULT_HAS_CFSR, offsetof(spoor_fault_status, cfsr)},
        {SPOOR_SCS_HFSR, SPOOR_FAULT_HAS_HFSR, offsetof(spoor_fault_status, hfsr)},
        {SPOOR_SCS_DFSR, SPOOR_FAULT_HAS_DFSR, offsetof(spoor_fault_status, dfsr)},
        {SPOOR_SCS_MMFAR, SPOOR_FAULT_HAS_MMFAR, offsetof(spoor_fault_status, mmfar)},
        {SPOOR_SCS_BFAR, SPOOR_FAULT_HAS_BFAR, offsetof(spoor_fault_status, bfar)},
        {SPOOR_SCS_AFSR, SPOOR_FAULT_HAS_AFSR, offsetof(spoor_fault_status, afsr)},
        {SPOOR_SCS_SFSR, SPOOR_FAULT_HAS_SFSR, offsetof(spoor_fault_status, sfsr)},
        {SPOOR_SCS_SFAR, SPOOR_FAULT_HAS_SFAR, offsetof(spoor_fault_status, sfar)},
    };
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof regs / sizeof *regs; i++) {
        uint8_t b[4];
        if (!read(ctx, regs[i].addr, b, sizeof b))
            continue;
        uint32_t v = spoor_le32(b);
        memcpy((char *)out + regs[i].field, &v, sizeof v);
        out->valid |= regs[i].bit;
    }
    /* SFSR and SFAR exist on ARMv8-M with the Security Extension only; elsewhere the words
     * are reserved (read as zero). A zero SFSR says nothing either way: leave both out. */
    if (!out->sfsr)
        out->valid &= ~(uint32_t)(SPOOR_FAULT_HAS_SFSR | SPOOR_FAULT_HAS_SFAR);
    return out->valid != 0;
}
