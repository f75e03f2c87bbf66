/* spoor report: one self-contained HTML page of a crash (docs/report.md). The page is the
 * template src/cli/report_template.html (compiled in) with two JSON documents in it: the report
 * spoor crash --json prints (spoor_crash_json, so the page and the CLI cannot disagree) and an
 * annex of what only the page shows: the source text around the report's lines and the
 * disassembly around its addresses. The page's own script renders both; nothing is fetched. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crash_report.h"
#include "html_page.h"
#include "json_scan.h"
#include "report_annex.h"
#include "util/json_write.h"

extern const unsigned char report_template[];
extern const unsigned long report_template_len;

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

/* The report's JSON: spoor crash's from the target, or the saved one of --from-json (checked). */
static char *report_json(struct crash *c, const struct report_args *r, target_input *in,
                         char **args, int nargs, size_t *len, int *rc)
{
    char *text;
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
        if (!spoor_dump_read_file(r->from_json, &data, len)) {
            cli_fail("report");
            return NULL;
        }
        *rc = SPOOR_EXIT_OK;
        return (char *)data;
    }
    if ((*rc = crash_open(c, "report", r->elf_path, in, args, nargs)))
        return NULL;
    text = spoor_crash_json(c->report, len);
    /* A connection lost on the way: what was read after it is not the target's memory. */
    bool lost = c->snap->gdb && !spoor_gdb_alive(c->snap->gdb);
    if (lost || !text) {
        free(text);
        *rc = cli_error("report", "%s", spoor_last_error());
        return NULL;
    }
    return text;
}

static char *annex_json(const struct crash *c, struct annex *a, const struct report_args *r,
                        size_t *len)
{
    static outbuf ob;
    FILE *tmp = html_capture_begin(&ob);
    if (!tmp)
        return NULL;
    json_out j;
    json_init(&j, &ob);
    json_object_begin(&j, NULL);
    json_string(&j, "spoor", SPOOR_VERSION);
    json_string(&j, "elf", spoor_elf_path(c->elf)); /* -e's, or the one --elf-dir found */
    json_string(&j, "input", r->input);
    report_annex_code(&j, c->elf, a);
    a->ncomp_dirs = spoor_elf_comp_dirs(c->elf, a->comp_dirs, REPORT_MAX_COMP_DIRS);
    report_annex_sources(&j, a);
    json_object_end(&j);
    json_finish(&j);
    return html_capture_end(&ob, tmp, len);
}

/* The page: the template with the report and the annex in its two script elements. */
static int write_output(const char *path, const char *report, size_t report_len, const char *annex,
                        size_t annex_len)
{
    static const char *const markers[] = {"@SPOOR_CRASH_JSON@", "@SPOOR_ANNEX_JSON@"};
    const char *const docs[] = {report, annex};
    const size_t lens[] = {report_len, annex_len};
    return html_write("report", path, (const char *)report_template, report_template_len, markers,
                      docs, lens, 2);
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
    static struct annex a;
    struct report_args r = {0};
    memset(&c, 0, sizeof c);
    c.options = (spoor_crash_options)SPOOR_CRASH_OPTIONS_DEFAULT; /* as spoor crash's */
    memset(&in, 0, sizeof in);
    memset(&a, 0, sizeof a);
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
            if (a.nsource_dirs == REPORT_MAX_SOURCE_DIRS)
                return cli_error("report", "too many --source-dir (at most %d)",
                                 REPORT_MAX_SOURCE_DIRS);
            a.source_dirs[a.nsource_dirs++] = optarg;
            break;
        case CRASH_OPT_BRANCHES:
        case CRASH_OPT_CALLS:
        case CRASH_OPT_MTB_REGS:
            if ((rc = crash_sections_option("report", &c.options, opt, optarg)))
                return rc;
            r.sections_given = 1;
            break;
        case TARGET_OPT_REGS:
        case TARGET_OPT_MEM:
        case TARGET_OPT_GDB:
        case TARGET_OPT_FORMAT:
        case TARGET_OPT_ELF_DIR:
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
    size_t report_len = 0, annex_len = 0;
    char *annex = NULL,
         *report = report_json(&c, &r, &in, argv + optind, argc - optind, &report_len, &rc);
    if (!report)
        goto out;
    char error[200];
    if (!json_scan(report, report_len, report_annex_collect, &a, error, sizeof error)) {
        rc = cli_error("report", "%s: not a spoor crash --json report: %s",
                       r.from_json ? r.from_json : "spoor crash --json", error);
        goto out;
    }
    if (a.out_of_memory || !(annex = annex_json(&c, &a, &r, &annex_len))) {
        rc = cli_error("report", "out of memory or no temporary file");
        goto out;
    }
    rc = write_output(r.output, report, report_len, annex, annex_len);
out:
    for (size_t i = 0; i < a.nlines; i++)
        free(a.lines[i].file);
    free(report);
    free(annex);
    crash_close(&c);
    return rc;
}
