/* The JSON document of spoor crash --json and of the page spoor report writes (crash_report.h). */
#include <stdio.h>

#include "crash_frames.h"
#include "crash_report.h"
#include "crash_sections.h"
#include "crash_stacks.h"
#include "crash_threads.h"
#include "json_out.h"

const char *const crash_fault_names[8] = {"CFSR", "HFSR", "DFSR", "MMFAR",
                                          "BFAR", "AFSR", "SFSR", "SFAR"};

uint32_t crash_fault_value(const spoor_fault_status *f, int i)
{
    const uint32_t vals[] = {f->cfsr, f->hfsr, f->dfsr, f->mmfar,
                             f->bfar, f->afsr, f->sfsr, f->sfar};
    return vals[i];
}

const char *crash_task_exit_hook(const struct crash *c)
{
    const char *name = NULL;
    if (c->stop != SPOOR_STOP_TASK_ENTRY || c->nframes == 0)
        return NULL;
    uint32_t hook = c->frames[c->nframes - 1].task_exit_hook;
    if (!spoor_elf_function(c->elf, hook, &name, NULL, NULL) || !name)
        return "??";
    return name;
}

void crash_print_json(struct crash *c)
{
    const spoor_dump *d = c->dump;
    const spoor_regs *r = &c->snap->regs;
    const spoor_fault_status *fs = &c->snap->fault;
    json_out j;
    json_init(&j, &c->out);
    json_object_begin(&j, NULL);
    json_string(&j, "reason", d && d->has_reason ? spoor_dump_reason_name(d->reason) : NULL);
    if (d && d->has_reason && d->reason == SPOOR_REASON_ASSERT) {
        json_object_begin(&j, "assert");
        json_string(&j, "file", d->file);
        json_uint(&j, "line", d->line);
        json_string(&j, "message", d->message);
        json_object_end(&j);
    }
    json_object_begin(&j, "fault");
    json_string(&j, "type", c->fault.type);
    json_bool(&j, "escalated", c->fault.escalated);
    json_array_begin(&j, "bits");
    for (size_t i = 0; i < c->fault.nbits; i++) {
        json_object_begin(&j, NULL);
        json_string(&j, "register", c->fault.bits[i].reg);
        json_string(&j, "name", c->fault.bits[i].name);
        json_string(&j, "meaning", c->fault.bits[i].meaning);
        json_object_end(&j);
    }
    json_array_end(&j);
    if (c->fault.has_address)
        json_hex32(&j, "address", c->fault.address);
    else
        json_null(&j, "address");
    json_bool(&j, "stack_overflow", (r->flags & SPOOR_REGS_STACK_OVERFLOW) != 0);
    json_string(&j, "status_from", spoor_fault_source_name(c->snap->fault_from));
    json_object_end(&j);
    json_object_begin(&j, "registers");
    char name[8];
    for (int i = 0; i < 13; i++) {
        snprintf(name, sizeof name, "r%d", i);
        json_hex32(&j, name, r->r[i]);
    }
    json_hex32(&j, "sp", r->r[13]);
    json_hex32(&j, "lr", r->r[14]);
    json_hex32(&j, "pc", r->r[15]);
    json_hex32(&j, "xpsr", r->xpsr);
    static const char *const banked[] = {"msp", "psp", "control"};
    const uint32_t banked_values[] = {r->msp, r->psp, r->control};
    for (int i = 0; i < 3; i++) /* unknown: null, never omitted */
        if (r->have & SPOOR_HAVE_BANKED_SP)
            json_hex32(&j, banked[i], banked_values[i]);
        else
            json_null(&j, banked[i]);
    if (r->have & (SPOOR_HAVE_EXC_RETURN | SPOOR_HAVE_BANKED_SP))
        json_hex32(&j, "exc_return", r->exc_return);
    else
        json_null(&j, "exc_return");
    static const char *const lower[] = {"cfsr", "hfsr", "dfsr", "mmfar",
                                        "bfar", "afsr", "sfsr", "sfar"};
    for (int i = 0; i < 8; i++)
        if (fs->valid & (1u << i))
            json_hex32(&j, lower[i], crash_fault_value(fs, i));
    json_object_end(&j);
    crash_frames_json(&j, c->elf, c->frames, c->nframes);
    json_string(&j, "stop", spoor_unwind_stop_name(c->stop));
    json_string(&j, "task_exit_hook", crash_task_exit_hook(c));
    crash_sections_json(&j, c->elf, c->snap, &c->sections);
    crash_stacks_main_json(&j, c->elf, c->snap);
    if (c->threads)
        crash_threads_json(&j, c->elf, c->snap, c->frames, c->nframes, c->stop);
    json_array_begin(&j, "warnings");
    if (c->build_id_warning[0])
        json_string(&j, NULL, c->build_id_warning);
    const char *const *elf_warnings;
    size_t nwarnings = spoor_elf_warnings(c->elf, &elf_warnings);
    for (size_t i = 0; i < nwarnings; i++)
        json_string(&j, NULL, elf_warnings[i]);
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
}
