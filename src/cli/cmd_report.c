/* spoor report: one self-contained HTML page of a crash (docs/report.md). libspoor makes the
 * page (spoor/analysis.h spoor_crash_html: the report spoor crash --json prints, so the page and
 * the CLI cannot disagree, and an annex of the source text and disassembly around it); here the
 * options are parsed, the input opened and the page written. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crash_report.h"
#include "html_page.h"

#define MAX_SOURCE_DIRS 16

static const char report_usage[] =
    "usage: spoor report -e FW.elf [OPTIONS] -o PAGE.html DUMP\n"
    "       spoor report -e FW.elf [OPTIONS] -o PAGE.html --regs regs.json [--mem ADDR:FILE ...]\n"
    "       spoor report -e FW.elf [OPTIONS] -o PAGE.html --gdb HOST:PORT [--mem ADDR:FILE ...]\n"
    "       spoor report -e FW.elf [--source-dir DIR] -o PAGE.html --from-json REPORT.json\n"
    "Writes one self-contained HTML page of a crash, to read offline or attach to a ticket:\n"
    "the fault in words, the registers, the backtrace with source lines (and the source text\n"
    "around them when the files are found), the disassembly around each address, the RTOS\n"
    "threads (--threads), and the last branches, calls and stack use when the report has\n"
    "them. The page holds the report spoor crash --json prints and renders it with its own\n"
    "inline script: no network, no other files.\n\n"
    "  -e, --elf FILE     the firmware ELF the device ran\n"
    "  -o, --output FILE  the page to write (- for standard output)\n"
    "      --threads      every thread of the RTOS, as spoor crash --threads\n" CRASH_SECTIONS_HELP
    "      --source-dir DIR  where to look for the source files DWARF names (repeatable);\n"
    "                     a relative name is also tried as DWARF gives it (joined with\n"
    "                     DW_AT_comp_dir) and with its leading directories removed\n"
    "      --from-json FILE  the page of a report saved with spoor crash --json, instead of\n"
    "                     reading the target\n" TARGET_INPUT_HELP
    "  -h, --help         this text\n\n"
    "Exit status: 0 page written, 2 usage or input error (bad dump, wrong ELF, ...).\n";

struct report_args {
    const char *elf_path, *output, *from_json;
    int sections_given; /* --branches, --calls or --mtb-regs */
    char input[512];
};

static void input_text(struct report_args *r, const target_input *in, char **args, int nargs)
{
    if (r->from_json)
        snprintf(r->input, sizeof r->input, "%s (spoor crash --json)", r->from_json);
    else if (nargs > 0)
        snprintf(r->input, sizeof r->input, "%s", args[0]);
    else if (in->src.gdb)
        snprintf(r->input, sizeof r->input, "--gdb %s", in->src.gdb);
    else
        snprintf(r->input, sizeof r->input, "--regs %s%s",
                 in->src.regs_path ? in->src.regs_path : "-", in->src.nmems ? " --mem ..." : "");
}

/* The page: of spoor crash's report of the target, or of the saved one of --from-json. */
static char *report_page(struct crash *c, const struct report_args *r, target_input *in,
                         char **args, int nargs, const spoor_report_options *o, size_t *len,
                         int *rc)
{
    char *page;
    *rc = SPOOR_EXIT_USAGE;
    if (r->from_json) {
        if (nargs || in->src.regs_path || in->src.gdb || in->src.nmems) {
            cli_error("report", "--from-json takes no DUMP, --regs, --mem or --gdb");
            return NULL;
        }
        if (c->options.threads || r->sections_given) {
            cli_error("report", "--from-json takes no --threads, --branches, --calls or "
                                "--mtb-regs (the saved report has its sections or not)");
            return NULL;
        }
        if (!(c->elf = cli_open_elf("report", r->elf_path)))
            return NULL;
        uint8_t *data; /* a regular file, bounded: never a FIFO waited on, /dev/zero read on */
        size_t data_len;
        if (!spoor_dump_read_file(r->from_json, &data, &data_len)) {
            cli_fail("report");
            return NULL;
        }
        page = spoor_crash_html_from_json(c->elf, (const char *)data, data_len, o, len);
        free(data);
        if (!page)
            cli_error("report", "%s: %s", r->from_json, spoor_last_error());
    } else {
        if ((*rc = crash_open(c, "report", r->elf_path, in, args, nargs)))
            return NULL;
        if (!(page = spoor_crash_html(c->report, o, len)))
            cli_error("report", "%s", spoor_last_error());
    }
    *rc = page ? SPOOR_EXIT_OK : SPOOR_EXIT_USAGE;
    return page;
}

int cmd_report(int argc, char **argv)
{
    enum { OPT_THREADS = 300, OPT_SOURCE_DIR, OPT_FROM_JSON };
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"output", required_argument, 0, 'o'},
                                         {"threads", no_argument, 0, OPT_THREADS},
                                         {"source-dir", required_argument, 0, OPT_SOURCE_DIR},
                                         {"from-json", required_argument, 0, OPT_FROM_JSON},
                                         CRASH_SECTIONS_LONG_OPTIONS,
                                         {"help", no_argument, 0, 'h'},
                                         TARGET_INPUT_LONG_OPTIONS,
                                         {0, 0, 0, 0}};
    static struct crash c;
    static target_input in;
    static const char *source_dirs[MAX_SOURCE_DIRS];
    struct report_args r = {0};
    spoor_report_options o = {.input = r.input, .source_dirs = source_dirs};
    memset(&c, 0, sizeof c);
    c.options = (spoor_crash_options)SPOOR_CRASH_OPTIONS_DEFAULT; /* as spoor crash's */
    memset(&in, 0, sizeof in);
    int opt, rc;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': r.elf_path = optarg; break;
        case 'o': r.output = optarg; break;
        case OPT_THREADS: c.options.threads = true; break;
        case OPT_FROM_JSON: r.from_json = optarg; break;
        case OPT_SOURCE_DIR:
            if (o.nsource_dirs == MAX_SOURCE_DIRS)
                return cli_error("report", "too many --source-dir (at most %d)", MAX_SOURCE_DIRS);
            source_dirs[o.nsource_dirs++] = optarg;
            break;
        case CRASH_OPT_BRANCHES:
        case CRASH_OPT_CALLS:
        case CRASH_OPT_MTB_REGS:
            if ((rc = crash_sections_option("report", &c.options, opt, optarg)))
                return rc;
            r.sections_given = 1;
            break;
        TARGET_INPUT_CASES:
            if ((rc = target_input_option("report", &in, opt, optarg)))
                return rc;
            break;
        case 'h': fputs(report_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("report", argv);
        }
    }
    if (!r.output)
        return cli_error("report", "no page to write (-o PAGE.html, or -o - for standard output)");
    input_text(&r, &in, argv + optind, argc - optind);
    size_t len = 0;
    char *page = report_page(&c, &r, &in, argv + optind, argc - optind, &o, &len, &rc);
    if (page)
        rc = html_write("report", r.output, page, len, NULL, NULL, NULL, 0);
    free(page);
    crash_close(&c);
    return rc;
}
