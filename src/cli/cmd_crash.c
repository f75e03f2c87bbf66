/* spoor crash: a crash dump (or raw debugger registers and memory) and the firmware ELF to
 * the fault in words, the registers and the backtrace. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dump_input.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/fault.h"
#include "spoor/unwind.h"

#define MAX_FRAMES 128
#define MAX_INLINE 16

static const char crash_usage[] =
    "usage: spoor crash -e FW.elf [--json] DUMP\n"
    "       spoor crash -e FW.elf [--json] --regs regs.json [--mem ADDR:FILE ...]\n"
    "Explains a crash: the fault in words (from CFSR/HFSR/SFSR), the registers, and the\n"
    "backtrace with function, file:line and <exception N: name> rows where the stack crosses\n"
    "an exception frame. Each frame says how it was unwound: registers, cfi (DWARF\n"
    ".debug_frame), ehabi (.ARM.exidx), prologue (code analysis), scan (stack scan), lr\n"
    "(a PC that was not code, continued from LR), exception (a hardware-stacked frame).\n\n"
    "  -e, --elf FILE     the firmware ELF the device ran\n"
    "  -j, --json         one JSON document instead of text\n" DUMP_INPUT_HELP
    "  -h, --help         this text\n\n"
    "A build-id in the dump that differs from the ELF's is reported as a warning.\n"
    "Exit status: 0 report printed, 2 usage or input error (bad dump, wrong ELF, ...).\n";

struct crash {
    spoor_elf *elf;
    spoor_dump *dump;
    int json;
    spoor_fault_info fault;
    spoor_frame frames[MAX_FRAMES];
    size_t nframes;
    spoor_unwind_stop stop;
    char build_id_warning[512];
};

static bool read_dump(void *ctx, uint32_t addr, void *buf, size_t len)
{
    return spoor_dump_read(ctx, addr, buf, len);
}

static void hex_string(char *out, size_t outlen, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i < n && 2 * i + 2 < outlen; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * i] = 0;
}

static void check_build_id(struct crash *c)
{
    const uint8_t *eid;
    size_t elen;
    if (!c->dump->build_id || !spoor_elf_build_id(c->elf, &eid, &elen))
        return;
    if (elen == c->dump->build_id_len && !memcmp(eid, c->dump->build_id, elen))
        return;
    char d[130], e[130];
    hex_string(d, sizeof d, c->dump->build_id, c->dump->build_id_len);
    hex_string(e, sizeof e, eid, elen);
    snprintf(c->build_id_warning, sizeof c->build_id_warning,
             "build-id mismatch: the dump is from %s, the ELF is %s; names and lines may be wrong",
             d, e);
}

static void decode_fault(struct crash *c)
{
    const spoor_dump *d = c->dump;
    spoor_fault_regs r = {.exception = -1, .pc = d->regs.pc};
    if (d->has_fault) {
        const spoor_dump_fault *f = &d->fault;
        r.has_cfsr = f->valid & SPOOR_FAULT_HAS_CFSR;
        r.has_hfsr = f->valid & SPOOR_FAULT_HAS_HFSR;
        r.has_mmfar = f->valid & SPOOR_FAULT_HAS_MMFAR;
        r.has_bfar = f->valid & SPOOR_FAULT_HAS_BFAR;
        r.has_sfsr = f->valid & SPOOR_FAULT_HAS_SFSR;
        r.has_sfar = f->valid & SPOOR_FAULT_HAS_SFAR;
        r.cfsr = f->cfsr;
        r.hfsr = f->hfsr;
        r.mmfar = f->mmfar;
        r.bfar = f->bfar;
        r.sfsr = f->sfsr;
        r.sfar = f->sfar;
    }
    if (d->has_reason && d->reason == SPOOR_REASON_FAULT)
        r.exception = (int)d->reason_code;
    spoor_fault_decode(&r, &c->fault);
}

static void unwind(struct crash *c)
{
    const spoor_dump_registers *dr = &c->dump->regs;
    spoor_regs regs = {0};
    memcpy(regs.r, dr->r, sizeof dr->r);
    regs.r[13] = dr->sp;
    regs.r[14] = dr->lr;
    regs.r[15] = dr->pc;
    regs.xpsr = dr->xpsr;
    regs.msp = dr->msp;
    regs.psp = dr->psp;
    regs.control = dr->control;
    regs.have |= ((dr->msp | dr->psp) != 0) ? SPOOR_HAVE_BANKED_SP : 0u;
    c->nframes =
        spoor_unwind(c->elf, &regs, read_dump, c->dump, NULL, c->frames, MAX_FRAMES, &c->stop);
}

/* The inline chain of a frame's code address (a return address names its call). */
static size_t frame_locations(const struct crash *c, const spoor_frame *f, spoor_location *loc)
{
    uint32_t lookup = (f->pc_is_return ? f->pc - 1 : f->pc) & ~1u;
    size_t n = spoor_elf_symbolize(c->elf, lookup, loc, MAX_INLINE);
    if (loc[0].has_offset) /* the offset of the address shown, not of the lookup */
        loc[0].offset = f->pc - (lookup - loc[0].offset);
    return n;
}

/* The offset of pc into the out-of-line function that holds it (an inlined function's
 * own offset counts from its inlined block, which no disassembly shows). */
static uint32_t outer_offset(const struct crash *c, uint32_t pc, const spoor_location *inner)
{
    uint32_t start;
    if (spoor_elf_function(c->elf, pc, NULL, &start, NULL) && pc >= start)
        return pc - start;
    return inner->offset;
}

static const char *reason_text(const spoor_dump *d, char *buf, size_t len)
{
    if (!d->has_reason)
        return d->has_fault ? "unknown (no reason record)"
                            : "none recorded (a debugger snapshot: no reason, no fault registers)";
    const char *name = spoor_dump_reason_name(d->reason);
    switch (d->reason) {
    case SPOOR_REASON_FAULT: {
        const char *exc = spoor_exception_name((int)d->reason_code);
        snprintf(buf, len, "fault (exception %u: %s)", d->reason_code, exc ? exc : "?");
        break;
    }
    case SPOOR_REASON_ASSERT:
        snprintf(buf, len, "assert failed at %s:%u%s%s", d->file ? d->file : "?", d->line,
                 d->message ? ": " : "", d->message ? d->message : "");
        break;
    default:
        snprintf(buf, len, "%s (code %u)%s%s", name, d->reason_code, d->message ? ": " : "",
                 d->message ? d->message : "");
    }
    return buf;
}

static void print_text(struct crash *c)
{
    const spoor_dump *d = c->dump;
    const spoor_dump_registers *r = &d->regs;
    char buf[1024];
    printf("reason: %s\n", reason_text(d, buf, sizeof buf));
    if ((d->has_reason && d->reason == SPOOR_REASON_FAULT) || (!d->has_reason && d->has_fault)) {
        spoor_fault_summary(&c->fault, buf, sizeof buf);
        printf("%s\n", buf);
    }
    if (d->regs.flags & SPOOR_REGS_STACK_OVERFLOW)
        printf("the stack had overflowed when the fault was taken\n");
    printf("\nregisters:\n");
    for (int i = 0; i < 13; i++)
        printf("  r%-2d  0x%08x%s", i, r->r[i], i % 4 == 3 ? "\n" : "");
    printf("\n  sp   0x%08x  lr   0x%08x  pc   0x%08x  xpsr 0x%08x\n", r->sp, r->lr, r->pc,
           r->xpsr);
    printf("  msp  0x%08x  psp  0x%08x  control 0x%08x  exc_return 0x%08x\n", r->msp, r->psp,
           r->control, r->exc_return);
    if (d->has_fault) {
        static const char *const names[] = {"CFSR", "HFSR", "DFSR", "MMFAR",
                                            "BFAR", "AFSR", "SFSR", "SFAR"};
        const uint32_t vals[] = {d->fault.cfsr, d->fault.hfsr, d->fault.dfsr, d->fault.mmfar,
                                 d->fault.bfar, d->fault.afsr, d->fault.sfsr, d->fault.sfar};
        printf(" ");
        for (int i = 0; i < 8; i++)
            if (d->fault.valid & (1u << i))
                printf(" %s 0x%08x", names[i], vals[i]);
        printf("\n");
    }
    printf("\nbacktrace:\n");
    int num = 0;
    for (size_t i = 0; i < c->nframes; i++) {
        const spoor_frame *f = &c->frames[i];
        if (f->kind == SPOOR_FRAME_EXCEPTION) {
            const char *name = spoor_exception_name(f->exception);
            printf("      <exception %d: %s>%s\n", f->exception, name ? name : "?",
                   f->on_psp ? " (interrupted code was on PSP)" : "");
            continue;
        }
        size_t same = 0; /* deep recursion: fold repeats of this frame into one line */
        while (i + same + 1 < c->nframes && c->frames[i + same + 1].kind == f->kind &&
               c->frames[i + same + 1].pc == f->pc && c->frames[i + same + 1].method == f->method)
            same++;
        spoor_location loc[MAX_INLINE];
        size_t n = frame_locations(c, f, loc);
        for (size_t k = 0; k < n; k++) {
            if (k == 0 && same)
                printf("  #%d-#%d 0x%08x ", num, num + (int)same, f->pc);
            else if (k == 0)
                printf("  #%-2d 0x%08x ", num, f->pc);
            else
                printf("      inlined in ");
            printf("%s", loc[k].function ? loc[k].function : "??");
            if (k + 1 == n && loc[0].has_offset) /* the offset into the real function */
                printf("+0x%x", outer_offset(c, f->pc, &loc[0]));
            if (loc[k].file)
                printf(" at %s:%u", loc[k].file, loc[k].line);
            if (k == 0)
                printf("  [%s]", spoor_unwind_method_name(f->method));
            if (k == 0 && same)
                printf("  (%zu frames alike)", same + 1);
            printf("\n");
        }
        num += 1 + (int)same;
        i += same;
    }
    printf("(stopped: %s)\n", spoor_unwind_stop_name(c->stop));
}

static void json_hex(const char *key, uint32_t v, int comma)
{
    printf("%s\"%s\":\"0x%08x\"", comma ? "," : "", key, v);
}

static void print_json(struct crash *c)
{
    const spoor_dump *d = c->dump;
    const spoor_dump_registers *r = &d->regs;
    printf("{\"reason\":");
    cli_json_string(stdout, d->has_reason ? spoor_dump_reason_name(d->reason) : NULL);
    if (d->has_reason && d->reason == SPOOR_REASON_ASSERT) {
        printf(",\"assert\":{\"file\":");
        cli_json_string(stdout, d->file);
        printf(",\"line\":%u,\"message\":", d->line);
        cli_json_string(stdout, d->message);
        printf("}");
    }
    printf(",\"fault\":{\"type\":");
    cli_json_string(stdout, c->fault.type);
    printf(",\"escalated\":%s,\"bits\":[", c->fault.escalated ? "true" : "false");
    for (size_t i = 0; i < c->fault.nbits; i++) {
        printf("%s{\"register\":\"%s\",\"name\":\"%s\",\"meaning\":", i ? "," : "",
               c->fault.bits[i].reg, c->fault.bits[i].name);
        cli_json_string(stdout, c->fault.bits[i].meaning);
        printf("}");
    }
    printf("],\"address\":");
    if (c->fault.has_address)
        printf("\"0x%08x\"", c->fault.address);
    else
        printf("null");
    printf(",\"stack_overflow\":%s},\"registers\":{",
           d->regs.flags & SPOOR_REGS_STACK_OVERFLOW ? "true" : "false");
    char name[8];
    for (int i = 0; i < 13; i++) {
        snprintf(name, sizeof name, "r%d", i);
        json_hex(name, r->r[i], i);
    }
    json_hex("sp", r->sp, 1);
    json_hex("lr", r->lr, 1);
    json_hex("pc", r->pc, 1);
    json_hex("xpsr", r->xpsr, 1);
    json_hex("msp", r->msp, 1);
    json_hex("psp", r->psp, 1);
    json_hex("control", r->control, 1);
    json_hex("exc_return", r->exc_return, 1);
    if (d->has_fault) {
        static const char *const names[] = {"cfsr", "hfsr", "dfsr", "mmfar",
                                            "bfar", "afsr", "sfsr", "sfar"};
        const uint32_t vals[] = {d->fault.cfsr, d->fault.hfsr, d->fault.dfsr, d->fault.mmfar,
                                 d->fault.bfar, d->fault.afsr, d->fault.sfsr, d->fault.sfar};
        for (int i = 0; i < 8; i++)
            if (d->fault.valid & (1u << i))
                json_hex(names[i], vals[i], 1);
    }
    printf("},\"backtrace\":[");
    int first = 1;
    for (size_t i = 0; i < c->nframes; i++) {
        const spoor_frame *f = &c->frames[i];
        if (f->kind == SPOOR_FRAME_EXCEPTION) {
            printf("%s{\"pc\":\"0x%08x\",\"kind\":\"exception\",\"exception\":%d,\"function\":",
                   first ? "" : ",", f->pc, f->exception);
            const char *n = spoor_exception_name(f->exception);
            cli_json_string(stdout, n);
            printf(",\"file\":null,\"line\":null,\"method\":\"exception\"}");
            first = 0;
            continue;
        }
        spoor_location loc[MAX_INLINE];
        size_t n = frame_locations(c, f, loc);
        for (size_t k = 0; k < n; k++) {
            printf("%s{\"pc\":\"0x%08x\",\"kind\":\"frame\",\"function\":", first ? "" : ",",
                   f->pc);
            cli_json_string(stdout, loc[k].function);
            printf(",\"file\":");
            cli_json_string(stdout, loc[k].file);
            printf(",\"line\":");
            if (loc[k].line)
                printf("%u", loc[k].line);
            else
                printf("null");
            printf(",\"inlined\":%s,\"method\":\"%s\"}", k + 1 < n ? "true" : "false",
                   spoor_unwind_method_name(f->method));
            first = 0;
        }
    }
    printf("],\"stop\":\"%s\",\"warnings\":[", spoor_unwind_stop_name(c->stop));
    if (c->build_id_warning[0])
        cli_json_string(stdout, c->build_id_warning);
    printf("]}\n");
}

int cmd_crash(int argc, char **argv)
{
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"json", no_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},
                                         DUMP_INPUT_LONG_OPTIONS,
                                         {0, 0, 0, 0}};
    static struct crash c;
    memset(&c, 0, sizeof c);
    const char *elf_path = NULL;
    static dump_input in;
    memset(&in, 0, sizeof in);
    int opt, rc;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:jh", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'j': c.json = 1; break;
        case DUMP_OPT_REGS:
        case DUMP_OPT_MEM:
            if ((rc = dump_input_option("crash", &in, opt, optarg)))
                return rc;
            break;
        case 'h': fputs(crash_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("crash", argv);
        }
    }
    if (!(c.elf = cli_open_elf("crash", elf_path)))
        return SPOOR_EXIT_USAGE;
    rc = SPOOR_EXIT_OK;
    c.dump = dump_input_load("crash", &in, argv + optind, argc - optind);
    if (!c.dump) {
        rc = SPOOR_EXIT_USAGE;
        goto out;
    }
    check_build_id(&c);
    if (c.build_id_warning[0])
        fprintf(stderr, "spoor crash: WARNING: %s\n", c.build_id_warning);
    decode_fault(&c);
    unwind(&c);
    (c.json ? print_json : print_text)(&c);
out:
    spoor_dump_free(c.dump);
    spoor_elf_close(c.elf);
    return rc;
}
