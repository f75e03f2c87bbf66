/* spoor crash: a crash dump (or raw debugger registers and memory) and the firmware ELF to
 * the fault in words, the registers and the backtrace. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "crash_report.h"
#include "crash_sections.h"
#include "crash_stacks.h"
#include "crash_threads.h"
#define MAX_INLINE 16

static const char crash_usage[] =
    "usage: spoor crash -e FW.elf [OPTIONS] DUMP\n"
    "       spoor crash -e FW.elf [OPTIONS] --regs regs.json [--mem ADDR:FILE ...]\n"
    "       spoor crash -e FW.elf [OPTIONS] --gdb HOST:PORT [--mem ADDR:FILE ...]\n"
    "Explains a crash: the fault in words (from CFSR/HFSR/SFSR), the registers, and the\n"
    "backtrace with function, file:line and <exception N: name> rows where the stack crosses\n"
    "an exception frame. Each frame says how it was unwound: registers, cfi (DWARF\n"
    ".debug_frame), ehabi (.ARM.exidx), prologue (code analysis), scan (stack scan), lr\n"
    "(a PC that was not code, continued from LR), exception (a hardware-stacked frame),\n"
    "tailcall (a function that tail-called the frame below it, from DWARF call sites).\n"
    "When the input holds them, the last branches of the MTB and the last calls of the call\n"
    "recorder's ring follow, as spoor mtb and spoor calls print them; then the main stack's\n"
    "usage (size, used at the snapshot, peak from a fill pattern), each thread's with "
    "--threads.\n\n"
    "  -e, --elf FILE     the firmware ELF the device ran\n"
    "  -j, --json         one JSON document instead of text\n"
    "      --stats        memory statistics on stderr (reads, GDB round trips, bytes, "
    "cache)\n"
    "      --threads      every thread of the RTOS (found by its symbols and DWARF types) with\n"
    "                     its state, priority, stack usage and backtrace from its saved "
    "context\n" CRASH_SECTIONS_HELP TARGET_INPUT_HELP "  -h, --help         this text\n\n"
    "A build-id in the dump that differs from the ELF's is reported as a warning, and so is\n"
    "each part of the ELF that cannot be read (a DWARF unit, a line table, a section: skipped,\n"
    "the rest still names frames). Without fault registers in the input, the fault status is\n"
    "read from target memory when it covers the System Control Space (CFSR 0xE000ED28 ...\n"
    "BFAR 0xE000ED38).\n"
    "Exit status: 0 report printed, 2 usage or input error (bad dump, wrong ELF, ...).\n";

static const char *reason_text(const spoor_crash *c, char *buf, size_t len)
{
    const spoor_dump *d = c->dump;
    if (!d) {
        snprintf(buf, len, "none recorded (a live target over GDB, stopped with signal %d)",
                 spoor_snapshot_signal(c->snap));
        return buf;
    }
    if (!d->has_reason && c->snap->fault_from == SPOOR_FAULT_FROM_LIVE_SCS) /* spoor core's */
        return "none recorded (a live target over GDB, saved by spoor core)";
    if (!d->has_reason && c->snap->fault.valid && c->snap->fault_from == SPOOR_FAULT_FROM_MEMORY)
        return "none recorded (a debugger snapshot; fault status from its System Control Space "
               "page)";
    if (!d->has_reason)
        return c->snap->fault.valid
                   ? "unknown (no reason record)"
                   : "none recorded (a debugger snapshot: no reason, no fault registers)";
    const char *name = spoor_dump_reason_name(d->reason);
    switch (d->reason) {
    case SPOOR_REASON_FAULT: {
        const char *exc = spoor_exception_name((int)d->reason_code);
        if (!exc && d->message) { /* another tool's dump: which exception is not known */
            snprintf(buf, len, "fault: %s", d->message);
            break;
        }
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

/* Whether the report explains a fault: the dump says so; or, without a reason, the state is a
 * fault handler's or fault status registers were found with a fault recorded in them (a target
 * halted at a breakpoint has them all clear, and DFSR records only debug events). */
static bool explains_fault(const spoor_crash *c)
{
    const spoor_dump *d = c->dump;
    if (d && d->has_reason)
        return d->reason == SPOOR_REASON_FAULT;
    const spoor_fault_status *f = &c->snap->fault;
    return f->valid && (c->snap->exception >= 3 || f->cfsr || f->hfsr || f->sfsr);
}

static void print_text(outbuf *o, spoor_crash *c)
{
    const spoor_regs *r = &c->snap->regs;
    const spoor_fault_status *fs = &c->snap->fault;
    char buf[1024];
    ob_str(o, "reason: ");
    ob_text(o, reason_text(c, buf, sizeof buf));
    ob_char(o, '\n');
    if (explains_fault(c) && !fs->valid && c->dump && c->dump->fault_words) {
        /* another tool's dump without the fault status registers: its own words for the fault */
        ob_text(o, c->dump->fault_words);
        ob_str(o, " (the dump's reason; the fault status registers are not in the dump)\n");
    } else if (explains_fault(c)) {
        spoor_fault_summary(&c->fault, buf, sizeof buf);
        ob_printf(o, "%s\n", buf);
    }
    if (r->flags & SPOOR_REGS_STACK_OVERFLOW)
        ob_printf(o, "the stack had overflowed when the fault was taken\n");
    ob_printf(o, "\nregisters:\n");
    for (int i = 0; i < 13; i++)
        ob_printf(o, "  r%-2d  0x%08x%s", i, r->r[i], i % 4 == 3 ? "\n" : "");
    ob_printf(o, "\n  sp   0x%08x  lr   0x%08x  pc   0x%08x  xpsr 0x%08x\n", r->r[13], r->r[14],
              r->r[15], r->xpsr);
    if (r->have & SPOOR_HAVE_BANKED_SP && c->dump && c->dump->exc_return_unknown)
        ob_printf(o,
                  "  msp  0x%08x  psp  0x%08x  control 0x%08x  exc_return unknown (not in "
                  "the input)\n",
                  r->msp, r->psp, r->control);
    else if (r->have & SPOOR_HAVE_BANKED_SP)
        ob_printf(o, "  msp  0x%08x  psp  0x%08x  control 0x%08x  exc_return 0x%08x\n", r->msp,
                  r->psp, r->control, r->exc_return);
    else
        ob_printf(o, "  msp, psp, control: not known (%s)\n",
                  c->snap->missing[0] ? "the GDB server does not give them" : "not in the input");
    if (fs->valid) {
        ob_printf(o, " ");
        for (int i = 0; i < 8; i++)
            if (fs->valid & (1u << i))
                ob_printf(o, " %s 0x%08x", spoor_crash_fault_register(i),
                          spoor_crash_fault_value(fs, i));
        ob_printf(o, "\n");
        if (c->snap->fault_from == SPOOR_FAULT_FROM_MEMORY ||
            c->snap->fault_from == SPOOR_FAULT_FROM_LIVE_SCS)
            ob_printf(o, "  (fault status read from %s)\n",
                      spoor_fault_source_name(c->snap->fault_from));
    }
    ob_printf(o, "\nbacktrace:\n");
    int num = 0;
    for (size_t i = 0; i < c->nframes; i++) {
        const spoor_frame *f = &c->frames[i];
        if (f->kind == SPOOR_FRAME_EXCEPTION) {
            const char *name = spoor_exception_name(f->exception);
            ob_printf(o, "      <exception %d: %s>%s\n", f->exception, name ? name : "?",
                      f->on_psp ? " (interrupted code was on PSP)" : "");
            continue;
        }
        size_t same = 0; /* deep recursion: fold repeats of this frame into one line */
        while (i + same + 1 < c->nframes && c->frames[i + same + 1].kind == f->kind &&
               c->frames[i + same + 1].pc == f->pc && c->frames[i + same + 1].method == f->method)
            same++;
        spoor_location loc[MAX_INLINE];
        size_t n = spoor_frame_symbolize(c->elf, f, loc, MAX_INLINE);
        for (size_t k = 0; k < n; k++) {
            if (k == 0 && same)
                ob_printf(o, "  #%d-#%d 0x%08x ", num, num + (int)same, f->pc);
            else if (k == 0)
                ob_printf(o, "  #%-2d 0x%08x ", num, f->pc);
            else
                ob_printf(o, "      inlined in ");
            ob_text(o, loc[k].function ? loc[k].function : "??");
            if (k + 1 == n && loc[0].has_offset) /* the offset into the real function */
                ob_printf(o, "+0x%x", spoor_frame_function_offset(c->elf, f, &loc[0]));
            if (loc[k].file) {
                ob_str(o, " at ");
                ob_text(o, loc[k].file);
                ob_printf(o, ":%u", loc[k].line);
            }
            if (k == 0)
                ob_printf(o, "  [%s]", spoor_unwind_method_name(f->method));
            if (k == 0 && same)
                ob_printf(o, "  (%zu frames alike)", same + 1);
            ob_printf(o, "\n");
        }
        if (c->frames[i + same].tailcalls_possible)
            ob_printf(o, "      (tail calls possible here: frames may be missing between this "
                         "one and the next)\n");
        num += 1 + (int)same;
        i += same;
    }
    const char *hook = spoor_crash_task_exit_hook(c);
    if (hook)
        ob_printf(o, "(stopped: %s: the task was started with return address %s, not called)\n",
                  spoor_unwind_stop_name(c->stop), hook);
    else
        ob_printf(o, "(stopped: %s)\n", spoor_unwind_stop_name(c->stop));
    crash_sections_text(o, c);
    crash_stacks_main_text(o, c);
}

static void print_stats(const struct crash *c)
{
    spoor_mem_stats st;
    spoor_mem_stats_get(c->snap->mem, &st);
    cli_note("crash",
             "memory: %" PRIu64 " reads; live target: %" PRIu64 " round trips, %" PRIu64
             " bytes, %" PRIu64 " page hits, %" PRIu64 " page misses",
             st.reads, st.round_trips, st.bytes_wire, st.cache_hits, st.cache_misses);
}

int cmd_crash(int argc, char **argv)
{
    enum { OPT_STATS = 300, OPT_THREADS };
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"json", no_argument, 0, 'j'},
                                         {"stats", no_argument, 0, OPT_STATS},
                                         {"threads", no_argument, 0, OPT_THREADS},
                                         CRASH_SECTIONS_LONG_OPTIONS,
                                         {"help", no_argument, 0, 'h'},
                                         TARGET_INPUT_LONG_OPTIONS,
                                         {0, 0, 0, 0}};
    static struct crash c;
    memset(&c, 0, sizeof c);
    c.options = (spoor_crash_options)SPOOR_CRASH_OPTIONS_DEFAULT;
    const char *elf_path = NULL;
    static target_input in;
    memset(&in, 0, sizeof in);
    int opt, rc;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:jh", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'j': c.json = 1; break;
        case OPT_STATS: c.stats = 1; break;
        case OPT_THREADS: c.options.threads = true; break;
        case CRASH_OPT_BRANCHES:
        case CRASH_OPT_CALLS:
        case CRASH_OPT_MTB_REGS:
            if ((rc = crash_sections_option("crash", &c.options, opt, optarg)))
                return rc;
            break;
        TARGET_INPUT_CASES:
            if ((rc = target_input_option("crash", &in, opt, optarg)))
                return rc;
            break;
        case 'h': fputs(crash_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("crash", argv);
        }
    }
    rc = crash_open(&c, "crash", elf_path, &in, argv + optind, argc - optind);
    if (rc)
        goto out;
    ob_init(&c.out, 1);
    if (c.json) {
        size_t len;
        char *json = spoor_crash_json(c.report, &len);
        if (!json) {
            rc = cli_fail("crash");
            goto out;
        }
        ob_write(&c.out, json, len);
        free(json);
    } else {
        print_text(&c.out, c.report);
        if (c.options.threads)
            crash_threads_text(&c.out, c.report);
    }
    /* A connection lost on the way: what was read after it is not the target's memory. */
    if (c.snap->gdb && !spoor_gdb_alive(c.snap->gdb)) {
        c.out.len = 0;
        rc = cli_fail("crash");
    } else if (!ob_flush(&c.out))
        rc = cli_error("crash", "cannot write the report: %s", strerror(errno));
    if (c.stats)
        print_stats(&c);
out:
    crash_close(&c);
    return rc;
}
