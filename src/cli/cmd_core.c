/* spoor core: writes an ELF core file of any target input (a dump, --regs/--mem, a live target
 * over --gdb) that `gdb-multiarch FW.elf FW.core` opens, every RTOS thread a GDB thread with
 * --threads. The writer is the library's (spoor/core_write.h); this parses the options. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "spoor/core_write.h"
#include "spoor/elf.h"
#include "spoor/snapshot.h"
#include "target_input.h"

#define MAX_RANGES 64

static const char core_usage[] =
    "usage: spoor core -e FW.elf [--threads] -o FW.core DUMP\n"
    "       spoor core -e FW.elf [--threads] -o FW.core --regs regs.json [--mem ADDR:FILE ...]\n"
    "       spoor core -e FW.elf [--threads] -o FW.core --gdb HOST:PORT [--range ADDR:SIZE ...]\n"
    "Writes an ELF core file of the stopped target that GDB opens:\n"
    "  gdb-multiarch FW.elf FW.core -ex 'info threads' -ex 'thread apply all bt'\n"
    "Memory: the regions the dump (or the --mem images) holds; from a live target, the ELF's\n"
    "RAM sections (.data, .bss, ...), 4 KiB above each stack pointer, and each --range.\n"
    "Registers: the input's; with --threads every RTOS thread is a GDB thread, a parked one\n"
    "with the registers its saved context gives. spoor reads the core back (spoor crash).\n\n"
    "  -e, --elf FILE  the firmware ELF\n"
    "  -o, --output FILE  the core file to write (written whole or not at all)\n"
    "      --threads   one thread per RTOS thread (FreeRTOS, Zephyr, RTX5, ThreadX, ...)\n"
    "      --range ADDR:SIZE  more memory to put in the core (repeatable), e.g. a live\n"
    "                     target's heap or a stack outside the ELF's sections\n" TARGET_INPUT_HELP
    "  -h, --help      this text\n";

static bool parse_range(const char *arg, spoor_core_range *r)
{
    char buf[64];
    const char *colon = strchr(arg, ':');
    if (!colon || (size_t)(colon - arg) >= sizeof buf)
        return false;
    memcpy(buf, arg, (size_t)(colon - arg));
    buf[colon - arg] = '\0';
    return cli_parse_u32(buf, &r->addr) && cli_parse_u32(colon + 1, &r->size) && r->size &&
           (uint64_t)r->addr + r->size <= 0x100000000ull;
}

int cmd_core(int argc, char **argv)
{
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"output", required_argument, 0, 'o'},
                                         {"threads", no_argument, 0, 'M'},
                                         {"range", required_argument, 0, 'R'},
                                         {"help", no_argument, 0, 'h'},
                                         TARGET_INPUT_LONG_OPTIONS,
                                         {0, 0, 0, 0}};
    const char *elf_path = NULL, *out = NULL;
    static target_input in;
    static spoor_core_range ranges[MAX_RANGES];
    memset(&in, 0, sizeof in);
    spoor_core_options o = {.ranges = ranges};
    int opt, err;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'o': out = optarg; break;
        case 'M': o.threads = true; break;
        case 'R':
            if (o.nranges == MAX_RANGES)
                return cli_error("core", "more than %d --range options", MAX_RANGES);
            if (!parse_range(optarg, &ranges[o.nranges]))
                return cli_error("core", "bad --range '%s' (ADDR:SIZE, e.g. 0x20000000:0x1000)",
                                 optarg);
            o.nranges++;
            break;
        TARGET_INPUT_CASES:
            if ((err = target_input_option("core", &in, opt, optarg)))
                return err;
            break;
        case 'h': fputs(core_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("core", argv);
        }
    }
    if (!out)
        return cli_error("core", "no output file: give -o FW.core");
    spoor_elf *elf = NULL;
    spoor_snapshot *snap = NULL;
    int rc = SPOOR_EXIT_USAGE;
    if (!(elf = target_input_elf("core", elf_path, argv + optind, argc - optind)))
        goto done;
    if (!(snap = target_input_open("core", &in, argv + optind, argc - optind, elf)))
        goto done;
    cli_warn_build_id("core", snap->dump, elf);
    spoor_core_summary sum;
    if (!spoor_core_write(elf, snap, &o, out, &sum)) {
        rc = cli_fail("core");
        goto done;
    }
    if (sum.note[0])
        cli_note("core", "--threads: %s; the core has the input's registers alone", sum.note);
    if (sum.threads_left)
        cli_note("core", "%zu thread%s without registers left out (spoor crash --threads says why)",
                 sum.threads_left, sum.threads_left == 1 ? "" : "s");
    if (sum.ranges_missing)
        cli_note("core",
                 "%zu memory range%s could not be read whole: the parts read are in the core",
                 sum.ranges_missing, sum.ranges_missing == 1 ? "" : "s");
    printf("%s: %zu thread%s, %zu memory segment%s (%llu bytes)%s\n", out, sum.threads,
           sum.threads == 1 ? "" : "s", sum.segments, sum.segments == 1 ? "" : "s",
           (unsigned long long)sum.bytes, sum.fp ? ", FP registers" : "");
    rc = SPOOR_EXIT_OK;
done:
    spoor_snapshot_close(snap);
    spoor_elf_close(elf);
    return rc;
}
