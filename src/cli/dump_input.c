#include "dump_input.h"

#include "cli.h"

int dump_input_option(const char *cmd, dump_input *in, int opt, const char *arg)
{
    if (opt == DUMP_OPT_REGS) {
        in->regs = arg;
        return 0;
    }
    if (in->nmems == DUMP_INPUT_MAX_MEMS)
        return cli_error(cmd, "too many --mem (at most %d)", DUMP_INPUT_MAX_MEMS);
    if (!spoor_raw_memory_parse(arg, &in->mems[in->nmems]))
        return cli_error(cmd, "%s", spoor_last_error());
    in->nmems++;
    return 0;
}

spoor_dump *dump_input_load(const char *cmd, const dump_input *in, char **args, int nargs)
{
    int raw = in->regs || in->nmems;
    if (raw && nargs) {
        cli_error(cmd, "give either a DUMP or --regs/--mem, not both");
        return NULL;
    }
    if (!raw && nargs != 1) {
        cli_error(cmd, nargs ? "more than one DUMP given" : "no DUMP given (or --regs/--mem)");
        return NULL;
    }
    spoor_dump *d =
        raw ? spoor_dump_from_raw(in->regs, in->mems, in->nmems) : spoor_dump_load(args[0]);
    if (!d) {
        cli_error(cmd, "%s", spoor_last_error());
        return NULL;
    }
    if (!d->has_registers) {
        cli_error(cmd, "%s: no registers in the dump",
                  raw ? (in->regs ? in->regs : "--mem") : args[0]);
        spoor_dump_free(d);
        return NULL;
    }
    return d;
}
