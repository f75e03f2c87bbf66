#include "target_input.h"

#include "cli.h"
#include "spoor/dump_formats.h"

int target_input_option(const char *cmd, target_input *in, int opt, const char *arg)
{
    switch (opt) {
    case TARGET_OPT_REGS: in->src.regs_path = arg; return 0;
    case TARGET_OPT_GDB: in->src.gdb = arg; return 0;
    case TARGET_OPT_FORMAT:
        return spoor_dump_format_parse(arg, &in->src.format)
                   ? 0
                   : cli_error(cmd, "%s", spoor_last_error());
    case TARGET_OPT_ELF_DIR: return cli_elf_dir_option(cmd, arg);
    default: break;
    }
    if (in->src.nmems == TARGET_INPUT_MAX_MEMS)
        return cli_error(cmd, "too many --mem (at most %d)", TARGET_INPUT_MAX_MEMS);
    if (!spoor_raw_memory_parse(arg, &in->mems[in->src.nmems]))
        return cli_error(cmd, "%s", spoor_last_error());
    in->src.nmems++;
    return 0;
}

spoor_snapshot *target_input_open(const char *cmd, target_input *in, char **args, int nargs,
                                  const spoor_elf *elf)
{
    if (nargs > 1) {
        cli_error(cmd, "more than one DUMP given");
        return NULL;
    }
    in->src.dump_path = nargs ? args[0] : NULL;
    in->src.mems = in->mems;
    spoor_snapshot *s = spoor_snapshot_open(&in->src, elf);
    if (!s)
        cli_error(cmd, "%s", spoor_last_error());
    return s;
}

spoor_elf *target_input_elf(const char *cmd, const char *path, char **args, int nargs)
{
    return cli_open_elf_for(cmd, path, nargs == 1 ? args[0] : NULL);
}
