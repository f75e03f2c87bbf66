/* The regs.json reader: one flat JSON object of register names to hex strings, e.g.
 *   {"r0": "0x00000000", "sp": "0x20001fd0", "pc": "0x000001a4", "cfsr": "0x00020000"}
 * The text is read by spoor's JSON reader (util/json_read.h); this file checks the shape (one
 * object, no nesting) and each member's name and value. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/set_error.h"
#include "spoor/dump.h"
#include "util/json_read.h"
#include "util/number.h"

typedef enum reg_group {
    GROUP_CORE,
    GROUP_BANKED,
    GROUP_EXC_RETURN,
    GROUP_FP,
    GROUP_LIMIT,
    GROUP_FAULT
} reg_group;

typedef struct reg_slot {
    uint32_t *value;
    reg_group group;
    uint32_t fault_bit;
} reg_slot;

static bool find_slot(spoor_dump *d, const char *name, reg_slot *slot)
{
    static const char *const core[] = {"sp",         "lr",  "pc",  "xpsr",
                                       "exc_return", "msp", "psp", "control"};
    static const char *const fault[] = {"cfsr", "hfsr", "dfsr", "mmfar",
                                        "bfar", "afsr", "sfsr", "sfar"};
    spoor_regs *r = &d->regs;
    uint32_t *core_fields[] = {&r->r[13],      &r->r[14], &r->r[15], &r->xpsr,
                               &r->exc_return, &r->msp,   &r->psp,   &r->control};
    uint32_t *fault_fields[] = {&d->fault.cfsr, &d->fault.hfsr, &d->fault.dfsr, &d->fault.mmfar,
                                &d->fault.bfar, &d->fault.afsr, &d->fault.sfsr, &d->fault.sfar};
    *slot = (reg_slot){NULL, GROUP_CORE, 0};
    uint32_t n;
    /* r0..r15, s0..s15: a letter and decimal digits only (util/number.h reads them) */
    bool indexed = name[0] && name[1] && strspn(name + 1, "0123456789") == strlen(name + 1) &&
                   spoor_parse_u32z(name + 1, SPOOR_NUM_AUTO, &n);
    if ((name[0] == 'r' || name[0] == 'R') && indexed && n <= 15) {
        slot->value = &r->r[n];
        return true;
    }
    if ((name[0] == 's' || name[0] == 'S') && indexed && n < 16) {
        slot->value = &r->s[n];
        slot->group = GROUP_FP;
        return true;
    }
    if (strcasecmp(name, "fpscr") == 0) {
        *slot = (reg_slot){&r->fpscr, GROUP_FP, 0};
        return true;
    }
    if (strcasecmp(name, "msplim") == 0 || strcasecmp(name, "psplim") == 0) {
        *slot =
            (reg_slot){name[0] == 'm' || name[0] == 'M' ? &r->msplim : &r->psplim, GROUP_LIMIT, 0};
        return true;
    }
    for (size_t i = 0; i < sizeof core / sizeof *core; i++) {
        if (strcasecmp(name, core[i]) == 0) {
            slot->value = core_fields[i];
            slot->group = i == 4 ? GROUP_EXC_RETURN : i > 4 ? GROUP_BANKED : GROUP_CORE;
            return true;
        }
    }
    for (size_t i = 0; i < sizeof fault / sizeof *fault; i++) {
        if (strcasecmp(name, fault[i]) == 0) {
            *slot = (reg_slot){fault_fields[i], GROUP_FAULT, 1u << i};
            return true;
        }
    }
    return false;
}

typedef struct regs_reader {
    spoor_dump *d;
    uint32_t *seen[64];
    size_t nseen;
    bool any_core, any_fault;
    char msg[160];
} regs_reader;

/* A member's value: a hex string, a non-negative JSON integer, or null (*known = false). NULL
 * when it is one, else the message. */
static const char *read_value(regs_reader *rr, const spoor_json_item *it, uint32_t *out,
                              bool *known)
{
    *known = it->type != SPOOR_JSON_NULL;
    if (it->type == SPOOR_JSON_NULL)
        return NULL;
    if (it->type == SPOOR_JSON_STRING) {
        /* only the documented form: "0x" and hex digits ("304" would be read as 0x304 by a
         * hex reader and as 304 by a human) */
        if (!(it->text[0] == '0' && (it->text[1] == 'x' || it->text[1] == 'X'))) {
            snprintf(rr->msg, sizeof rr->msg,
                     "value of \"%s\" must be a hex string starting with 0x, got \"%.40s\"",
                     it->key, it->text);
            return rr->msg;
        }
        if (strlen(it->text) != it->len || !spoor_parse_u32z(it->text, SPOOR_NUM_HEX, out)) {
            snprintf(rr->msg, sizeof rr->msg,
                     "value of \"%s\" is not a 32-bit hex number: \"%.40s\"", it->key, it->text);
            return rr->msg;
        }
        return NULL;
    }
    /* a JSON integer as written: digits only (no sign, fraction or exponent), at most 2^32-1 */
    if (it->type == SPOOR_JSON_NUMBER && strspn(it->text, "0123456789") == it->len &&
        spoor_parse_u32z(it->text, SPOOR_NUM_AUTO, out))
        return NULL;
    snprintf(rr->msg, sizeof rr->msg, "value of \"%s\" must be a hex string like \"0x20001000\"",
             it->key);
    return rr->msg;
}

static bool seen_slot(const regs_reader *rr, const uint32_t *slot)
{
    for (size_t i = 0; i < rr->nseen; i++)
        if (rr->seen[i] == slot)
            return true;
    return false;
}

static void mark(regs_reader *rr, const reg_slot *slot)
{
    spoor_regs *r = &rr->d->regs;
    switch (slot->group) {
    case GROUP_CORE: rr->any_core = true; break;
    case GROUP_BANKED:
        rr->any_core = true;
        r->have |= SPOOR_HAVE_BANKED_SP;
        break;
    case GROUP_EXC_RETURN:
        rr->any_core = true;
        r->have |= SPOOR_HAVE_EXC_RETURN;
        break;
    case GROUP_FP:
        r->flags |= SPOOR_REGS_FP_VALID;
        r->have |= SPOOR_HAVE_FP;
        break;
    case GROUP_LIMIT:
        r->flags |= SPOOR_REGS_HAS_LIMITS;
        r->have |= SPOOR_HAVE_LIMITS;
        break;
    case GROUP_FAULT:
        rr->any_fault = true;
        rr->d->fault.valid |= slot->fault_bit;
        break;
    }
}

static const char *on_item(void *ctx, const spoor_json_item *it)
{
    regs_reader *rr = ctx;
    if (it->type == SPOOR_JSON_END)
        return NULL;
    if (it->depth == 0)
        return it->type == SPOOR_JSON_OBJECT ? NULL : "expected '{'";
    reg_slot slot;
    if (strlen(it->key) != it->key_len || !find_slot(rr->d, it->key, &slot)) {
        snprintf(rr->msg, sizeof rr->msg, "unknown register \"%.40s\"", it->key);
        return rr->msg;
    }
    if (seen_slot(rr, slot.value)) {
        snprintf(rr->msg, sizeof rr->msg, "register \"%s\" given twice", it->key);
        return rr->msg;
    }
    if (rr->nseen < sizeof rr->seen / sizeof *rr->seen)
        rr->seen[rr->nseen++] = slot.value;
    uint32_t value = 0;
    bool known;
    const char *bad = read_value(rr, it, &value, &known);
    if (bad)
        return bad;
    if (!known && (slot.value == &rr->d->regs.r[13] || slot.value == &rr->d->regs.r[15])) {
        snprintf(rr->msg, sizeof rr->msg, "\"%s\" is required and cannot be null", it->key);
        return rr->msg;
    }
    if (known) {
        *slot.value = value;
        mark(rr, &slot);
    }
    return NULL;
}

bool spoor_regs_json_parse(const char *text, size_t len, const char *name, spoor_dump *d)
{
    regs_reader rr = {.d = d};
    name = name ? name : "regs.json";
    memset(&d->regs, 0, sizeof d->regs);
    memset(&d->fault, 0, sizeof d->fault);
    d->regs.r[14] = 0xFFFFFFFFu;
    spoor_json_error err;
    size_t lead = 0; /* an empty file: "expected '{'", as for any other text that is no object */
    while (lead < len && strchr(" \t\r\n", text[lead]) && text[lead])
        lead++;
    if (lead == len) {
        err = (spoor_json_error){.offset = len, .message = "expected '{'"};
    } else if (spoor_json_read(text, len, 2, on_item, &rr, &err)) {
        err.message[0] = 0;
    }
    if (err.message[0]) {
        unsigned line = 1;
        for (size_t i = 0; i < err.offset && i < len; i++)
            line += text[i] == '\n';
        spoor_set_error(SPOOR_ERR_FORMAT, "%s: line %u: %s", name, line, err.message);
        return false;
    }
    if (rr.any_core && (!seen_slot(&rr, &d->regs.r[13]) || !seen_slot(&rr, &d->regs.r[15]))) {
        spoor_set_error(SPOOR_ERR_FORMAT, "%s: \"pc\" and \"sp\" are required", name);
        return false;
    }
    d->has_registers = rr.any_core;
    if (rr.any_core)
        d->regs.have |= SPOOR_HAVE_CORE;
    d->has_fault = rr.any_fault;
    return true;
}
