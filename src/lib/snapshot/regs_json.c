/* The regs.json reader: one flat JSON object of register names to hex strings, e.g.
 *   {"r0": "0x00000000", "sp": "0x20001fd0", "pc": "0x000001a4", "cfsr": "0x00020000"}
 * A small hand-written parser for exactly that shape (no nesting, no arrays). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "spoor/dump.h"
#include "spoor/error.h"
#include "spoor/number.h"

typedef struct json_cursor {
    const char *p, *end;
    unsigned line;
    const char *name; /* the file, for messages */
} json_cursor;

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

static bool fail(const json_cursor *c, const char *what)
{
    spoor_set_error(SPOOR_ERR_FORMAT, "%s: line %u: %s", c->name, c->line, what);
    return false;
}

static void skip_space(json_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')) {
        if (*c->p == '\n')
            c->line++;
        c->p++;
    }
}

static bool expect(json_cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    char msg[48];
    snprintf(msg, sizeof msg, "expected '%c'", ch);
    return fail(c, msg);
}

/* A JSON string without escapes (register names and hex numbers need none). */
static bool read_string(json_cursor *c, char *out, size_t cap)
{
    if (!expect(c, '"'))
        return false;
    size_t n = 0;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p == '\\')
            return fail(c, "escapes are not supported in register names or values");
        if ((unsigned char)*c->p < 0x20)
            return fail(c, "unterminated string");
        if (n + 1 >= cap)
            return fail(c, "string too long");
        out[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return fail(c, "unterminated string");
    c->p++;
    out[n] = '\0';
    return true;
}

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
    /* r0..r15, s0..s15: a letter and decimal digits only (spoor/number.h reads them) */
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

/* A value: a hex string, a non-negative JSON integer, or null (*known = false). */
static bool read_value(json_cursor *c, const char *key, uint32_t *out, bool *known)
{
    char text[64], msg[160];
    skip_space(c);
    *known = true;
    if (c->p < c->end && *c->p == '"') {
        if (!read_string(c, text, sizeof text))
            return false;
        /* only the documented form: "0x" and hex digits ("304" would be read as 0x304 by a
         * hex reader and as 304 by a human) */
        if (!(text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))) {
            snprintf(msg, sizeof msg,
                     "value of \"%s\" must be a hex string starting with 0x, got \"%s\"", key,
                     text);
            return fail(c, msg);
        }
        if (!spoor_parse_u32z(text, SPOOR_NUM_HEX, out)) {
            snprintf(msg, sizeof msg, "value of \"%s\" is not a 32-bit hex number: \"%s\"", key,
                     text);
            return fail(c, msg);
        }
        return true;
    }
    if (c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) {
        c->p += 4;
        *known = false;
        return true;
    }
    uint64_t v = 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && v <= 0xFFFFFFFFull)
        v = v * 10 + (uint64_t)(*c->p++ - '0');
    if (c->p == start || v > 0xFFFFFFFFull ||
        (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E'))) {
        snprintf(msg, sizeof msg, "value of \"%s\" must be a hex string like \"0x20001000\"", key);
        return fail(c, msg);
    }
    *out = (uint32_t)v;
    return true;
}

static bool seen_slot(uint32_t *const *seen, size_t n, const uint32_t *slot)
{
    for (size_t i = 0; i < n; i++)
        if (seen[i] == slot)
            return true;
    return false;
}

bool spoor_regs_json_parse(const char *text, size_t len, const char *name, spoor_dump *d)
{
    json_cursor c = {text, text + len, 1, name ? name : "regs.json"};
    uint32_t *seen[64];
    size_t nseen = 0;
    memset(&d->regs, 0, sizeof d->regs);
    memset(&d->fault, 0, sizeof d->fault);
    d->regs.r[14] = 0xFFFFFFFFu;
    bool any_core = false, any_fault = false;

    if (!expect(&c, '{'))
        return false;
    skip_space(&c);
    if (c.p < c.end && *c.p == '}') {
        c.p++;
    } else {
        for (;;) {
            char key[32];
            char msg[96];
            if (!read_string(&c, key, sizeof key))
                return false;
            reg_slot slot;
            if (!find_slot(d, key, &slot)) {
                snprintf(msg, sizeof msg, "unknown register \"%s\"", key);
                return fail(&c, msg);
            }
            for (size_t i = 0; i < nseen; i++)
                if (seen[i] == slot.value) {
                    snprintf(msg, sizeof msg, "register \"%s\" given twice", key);
                    return fail(&c, msg);
                }
            if (nseen < sizeof seen / sizeof *seen)
                seen[nseen++] = slot.value;
            if (!expect(&c, ':'))
                return false;
            uint32_t value = 0;
            bool known;
            if (!read_value(&c, key, &value, &known))
                return false;
            if (!known && (slot.value == &d->regs.r[13] || slot.value == &d->regs.r[15])) {
                snprintf(msg, sizeof msg, "\"%s\" is required and cannot be null", key);
                return fail(&c, msg);
            }
            if (known) {
                *slot.value = value;
                switch (slot.group) {
                case GROUP_CORE: any_core = true; break;
                case GROUP_BANKED:
                    any_core = true;
                    d->regs.have |= SPOOR_HAVE_BANKED_SP;
                    break;
                case GROUP_EXC_RETURN:
                    any_core = true;
                    d->regs.have |= SPOOR_HAVE_EXC_RETURN;
                    break;
                case GROUP_FP:
                    d->regs.flags |= SPOOR_REGS_FP_VALID;
                    d->regs.have |= SPOOR_HAVE_FP;
                    break;
                case GROUP_LIMIT:
                    d->regs.flags |= SPOOR_REGS_HAS_LIMITS;
                    d->regs.have |= SPOOR_HAVE_LIMITS;
                    break;
                case GROUP_FAULT:
                    any_fault = true;
                    d->fault.valid |= slot.fault_bit;
                    break;
                }
            }
            skip_space(&c);
            if (c.p < c.end && *c.p == ',') {
                c.p++;
                continue;
            }
            if (!expect(&c, '}'))
                return false;
            break;
        }
    }
    skip_space(&c);
    if (c.p != c.end)
        return fail(&c, "unexpected text after the object");
    if (any_core &&
        (!seen_slot(seen, nseen, &d->regs.r[13]) || !seen_slot(seen, nseen, &d->regs.r[15]))) {
        spoor_set_error(SPOOR_ERR_FORMAT, "%s: \"pc\" and \"sp\" are required", c.name);
        return false;
    }
    d->has_registers = any_core;
    if (any_core)
        d->regs.have |= SPOOR_HAVE_CORE;
    d->has_fault = any_fault;
    return true;
}
