/* spoor triage: many crash dumps (from many firmware builds) grouped into buckets by signature,
 * each dump with its own ELF found by build-id; or earlier outputs merged. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "html_page.h"
#include "spoor/dump.h"
#include "spoor/elf_dir.h"
#include "spoor/triage.h"
#include "util/json_write.h"
#include "util/outbuf.h"

extern const unsigned char triage_template[];
extern const unsigned long triage_template_len;

static const char triage_usage[] =
    "usage: spoor triage --elf-dir DIR [-k K] [--json [--per-dump]] [--html OUT] [--jobs N]\n"
    "                    (DUMP | DIR)...\n"
    "       spoor triage --merge [--json [--per-dump]] [--html OUT [--elf-dir DIR]] FILE...\n"
    "Groups crash dumps into the bugs they are: one bucket per signature (the reason, the fault\n"
    "type and status bits, an assert's file and line, the names of the innermost K frames of\n"
    "the application; no addresses, so one bug in two builds is one bucket), by count, with the\n"
    "firmware builds (build-ids) it occurs in, first and last seen (file time) and an example\n"
    "dump for spoor crash. Each dump finds its ELF by build-id in --elf-dir; a dump that cannot\n"
    "be read or has no ELF there is listed apart, never fatal. A DIR argument is read\n"
    "recursively.\n\n"
    "      --elf-dir DIR  the firmware ELFs, found by their GNU build-id (read recursively;\n"
    "                     .build-id/xx/rest.debug trees too)\n"
    "  -k, --frames K     application frames in a signature (default 5, at most 32)\n"
    "  -j, --json         the shard line {\"spoor_triage\":1,\"shards\":[...]}, then one JSON\n"
    "                     object per bucket, then one per dump not signed\n"
    "      --per-dump     with --json: one line per input dump too: "
    "{\"dump\":PATH,\"bucket\":ID,...}\n"
    "      --html OUT     write a page of the buckets, OUT/index.html (self-contained, no\n"
    "                     network), and the spoor report page of each bucket's example beside\n"
    "                     it, OUT/BUCKET.html, linked from its row; prints nothing else unless\n"
    "                     --json is given\n"
    "      --jobs N       worker threads (default: one per online CPU)\n"
    "      --merge        read FILEs of earlier --json output (shards of a fleet) and print\n"
    "                     what one run over all their dumps prints (--elf-dir only with\n"
    "                     --html: the ELFs of the examples' pages); a shard merged twice,\n"
    "                     or edited by hand, is refused\n"
    "  -h, --help         this text\n\n"
    "Exit status: 0 report printed, 2 usage or input error (no ELF folder, a bad --merge file).\n";

struct opts {
    const char *elf_dir, *html;
    unsigned k, jobs;
    bool json, per_dump, merge;
};

/* The --json output (spoor_triage_json) onto o; false when memory runs out. */
static bool print_json(outbuf *o, spoor_triage *t, bool per_dump)
{
    size_t len;
    char *text = spoor_triage_json(t, per_dump, &len);
    if (!text)
        return false;
    ob_write(o, text, len);
    free(text);
    return true;
}

/* ---- --html OUT: the page of the buckets and a spoor report page per example ---- */

/* OUT/BUCKET.html: spoor report's page of the bucket's example, with the ELF its build-id
 * names in dir. False after a warning (the row then names the example without a link). */
static bool write_example_page(const char *out, const spoor_triage_bucket *b, spoor_elf_dir *dir)
{
    spoor_dump *dump = spoor_dump_load(b->example);
    const char *elf = dump ? spoor_elf_dir_find(dir, dump->build_id, dump->build_id_len) : NULL;
    char why[600];
    if (!elf)
        snprintf(why, sizeof why, "%s",
                 dump ? "no ELF with its build-id in --elf-dir" : spoor_last_error());
    spoor_dump_free(dump);
    if (!elf) {
        cli_warn("triage", "bucket %s: no page of its example %s: %s", b->sig.id, b->example, why);
        return false;
    }
    char page[4096];
    snprintf(page, sizeof page, "%s/%s.html", out, b->sig.id);
    char elf_path[4096];
    snprintf(elf_path, sizeof elf_path, "%s", elf);
    char *args[] = {"report", "-e", elf_path, "-o", page, "--", (char *)b->example, NULL};
    if (cmd_report(7, args) == SPOOR_EXIT_OK)
        return true;
    cli_warn("triage", "bucket %s: no page of its example %s (spoor report failed: above)",
             b->sig.id, b->example);
    return false;
}

/* The folder of --html, made when missing (before any dump is read). */
static int make_html_dir(const char *path)
{
    struct stat st;
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return cli_error("triage", "--html %s: cannot make the folder: %s", path, strerror(errno));
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return cli_error("triage", "--html %s: not a folder", path);
    return SPOOR_EXIT_OK;
}

static int write_html(const struct opts *o, spoor_triage *t, spoor_elf_dir *dir)
{
    const spoor_triage_bucket *b;
    size_t nb = spoor_triage_buckets(t, &b);
    bool *page = calloc(nb ? nb : 1, sizeof *page);
    if (!page)
        return cli_error("triage", "out of memory");
    if (!dir && nb)
        cli_warn("triage", "no --elf-dir: the page links no report of the examples");
    for (size_t i = 0; dir && i < nb; i++)
        page[i] = write_example_page(o->html, &b[i], dir);
    static outbuf ob;
    FILE *tmp = html_capture_begin(&ob);
    if (!tmp) {
        free(page);
        return cli_error("triage", "cannot make a temporary file: %s", strerror(errno));
    }
    json_out j;
    bool out_of_memory = false;
    json_init(&j, &ob);
    json_object_begin(&j, NULL);
    json_string(&j, "spoor", SPOOR_VERSION);
    json_string(&j, "elf_dir", o->elf_dir);
    json_array_begin(&j, "buckets");
    for (size_t i = 0; i < nb; i++) {
        size_t len;
        char *bucket = spoor_triage_bucket_json(&b[i], &len);
        if (bucket)
            json_raw(&j, NULL, bucket, len);
        out_of_memory |= !bucket;
        free(bucket);
    }
    json_array_end(&j);
    json_array_begin(&j, "not_signed");
    const spoor_triage_dump *d;
    size_t nd = spoor_triage_dumps(t, &d);
    for (size_t i = 0; i < nd; i++) {
        if (!d[i].error)
            continue;
        json_object_begin(&j, NULL);
        json_string(&j, "dump", d[i].path);
        json_string(&j, "error", d[i].error);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_array_begin(&j, "warnings"); /* what could not be read, as on stderr */
    const char *const *warnings;
    for (size_t i = 0, n = spoor_triage_warnings(t, &warnings); i < n; i++)
        json_string(&j, NULL, warnings[i]);
    json_array_end(&j);
    json_object_begin(&j, "reports"); /* bucket id: its example's page, beside the index */
    for (size_t i = 0; i < nb; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s.html", b[i].sig.id);
        if (page[i])
            json_string(&j, b[i].sig.id, name);
    }
    json_object_end(&j);
    json_object_end(&j);
    json_finish(&j);
    free(page);
    size_t len;
    char *doc = html_capture_end(&ob, tmp, &len);
    if (out_of_memory) {
        free(doc);
        return cli_out_of_memory("triage");
    }
    if (!doc)
        return cli_error("triage", "cannot keep the page's data: %s", strerror(errno));
    char index[4096];
    snprintf(index, sizeof index, "%s/index.html", o->html);
    const char *marker = "@SPOOR_TRIAGE_JSON@", *docs[] = {doc};
    int rc = html_write("triage", index, (const char *)triage_template, triage_template_len,
                        &marker, docs, &len, 1);
    free(doc);
    return rc;
}

static void print_text(outbuf *o, spoor_triage *t)
{
    const spoor_triage_bucket *b;
    size_t nb = spoor_triage_buckets(t, &b);
    const spoor_triage_dump *d;
    size_t nd = spoor_triage_dumps(t, &d), bad = 0;
    uint64_t signed_dumps = 0;
    for (size_t i = 0; i < nb; i++)
        signed_dumps += b[i].count;
    for (size_t i = 0; i < nd; i++)
        bad += d[i].error != NULL;
    ob_printf(o, "%zu bucket%s from %" PRIu64 " dump%s; %zu not signed\n\n", nb, nb == 1 ? "" : "s",
              signed_dumps, signed_dumps == 1 ? "" : "s", bad);
    char first[32], last[32];
    /* the strings come from dumps, ELFs, file names and --merge files: through ob_text */
    for (size_t i = 0; i < nb; i++) {
        ob_printf(o, "%6" PRIu64 "  ", b[i].count);
        ob_text(o, b[i].sig.id);
        ob_str(o, "  ");
        ob_text(o, b[i].sig.text);
        ob_printf(o, "\n        builds:");
        for (size_t v = 0; v < b[i].nversions; v++) {
            char id[13];
            snprintf(id, sizeof id, "%s", b[i].versions[v].build_id);
            ob_char(o, ' ');
            ob_text(o, id);
            if (b[i].versions[v].version) {
                ob_char(o, ' ');
                ob_text(o, b[i].versions[v].version);
            }
            ob_printf(o, " (%" PRIu64 ")", b[i].versions[v].count);
        }
        ob_printf(o, "\n        first %s  last %s\n        example: ",
                  spoor_triage_time_text(b[i].first, first),
                  spoor_triage_time_text(b[i].last, last));
        ob_text(o, b[i].example);
        ob_char(o, '\n');
    }
    if (bad)
        ob_printf(o, "\nnot signed (%zu):\n", bad);
    for (size_t i = 0; i < nd; i++)
        if (d[i].error) {
            ob_str(o, "  ");
            ob_text(o, d[i].path);
            ob_str(o, ": ");
            ob_text(o, d[i].error);
            ob_char(o, '\n');
        }
}

static int parse(int argc, char **argv, struct opts *o)
{
    enum { OPT_ELF_DIR = 300, OPT_PER_DUMP, OPT_JOBS, OPT_MERGE, OPT_HTML };
    static const struct option opts[] = {{"elf-dir", required_argument, 0, OPT_ELF_DIR},
                                         {"frames", required_argument, 0, 'k'},
                                         {"json", no_argument, 0, 'j'},
                                         {"per-dump", no_argument, 0, OPT_PER_DUMP},
                                         {"jobs", required_argument, 0, OPT_JOBS},
                                         {"merge", no_argument, 0, OPT_MERGE},
                                         {"html", required_argument, 0, OPT_HTML},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int opt;
    uint32_t v;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "k:jh", opts, NULL)) != -1) {
        switch (opt) {
        case OPT_ELF_DIR: o->elf_dir = optarg; break;
        case 'k':
            if (!cli_parse_u32(optarg, &v) || v < 1 || v > SPOOR_TRIAGE_MAX_K)
                return cli_error("triage", "-k %s: expected 1 to %d frames", optarg,
                                 SPOOR_TRIAGE_MAX_K);
            o->k = v;
            break;
        case 'j': o->json = true; break;
        case OPT_PER_DUMP: o->per_dump = true; break;
        case OPT_JOBS:
            if (!cli_parse_u32(optarg, &v) || v < 1 || v > 1024)
                return cli_error("triage", "--jobs %s: expected 1 to 1024 threads", optarg);
            o->jobs = v;
            break;
        case OPT_MERGE: o->merge = true; break;
        case OPT_HTML: o->html = optarg; break;
        case 'h': fputs(triage_usage, stdout); return -1;
        default: return cli_bad_option("triage", argv);
        }
    }
    if (optind == argc)
        return cli_error("triage",
                         o->merge ? "no FILE to merge given" : "no DUMP or folder of dumps given");
    if (o->per_dump && !o->json)
        return cli_error("triage", "--per-dump is a JSON output: give --json too");
    if (!o->merge && !o->elf_dir)
        return cli_error("triage",
                         "give --elf-dir DIR: each dump's ELF is found there by build-id");
    if (o->merge && o->elf_dir && !o->html)
        return cli_error("triage", "--merge reads earlier output and signs nothing: --elf-dir "
                                   "only with --html (the ELFs of the examples' pages)");
    return 0;
}

int cmd_triage(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? SPOOR_EXIT_OK : rc;
    if (o.html && (rc = make_html_dir(o.html)))
        return rc;
    spoor_elf_dir *dir = NULL;
    if (o.elf_dir && !(dir = spoor_elf_dir_scan(o.elf_dir)))
        return cli_fail("triage");
    spoor_triage *t = spoor_triage_new(dir, o.k);
    char **paths = NULL;
    size_t npaths = 0;
    rc = SPOOR_EXIT_OK;
    for (int i = optind; t && i < argc && rc == SPOOR_EXIT_OK; i++)
        if (o.merge ? !spoor_triage_merge_file(t, argv[i])
                    : !spoor_triage_list_files(t, argv[i], &paths, &npaths))
            rc = cli_fail("triage");
    if (!t)
        rc = cli_fail("triage");
    else if (rc == SPOOR_EXIT_OK && !o.merge && !spoor_triage_add_files(t, paths, npaths, o.jobs))
        rc = cli_fail("triage");
    const char *const *warnings;
    for (size_t i = 0, n = t ? spoor_triage_warnings(t, &warnings) : 0; i < n; i++)
        cli_warn_input("triage", "%s", warnings[i]);
    if (rc == SPOOR_EXIT_OK && o.html)
        rc = write_html(&o, t, dir);
    if (rc == SPOOR_EXIT_OK && (o.json || !o.html)) {
        static outbuf out;
        ob_init(&out, 1);
        if (o.json ? !print_json(&out, t, o.per_dump) : (print_text(&out, t), false))
            rc = cli_out_of_memory("triage");
        else if (!ob_flush(&out))
            rc = cli_error("triage", "cannot write the report: %s", strerror(errno));
    }
    for (size_t i = 0; i < npaths; i++)
        free(paths[i]);
    free(paths);
    spoor_triage_free(t);
    spoor_elf_dir_free(dir);
    return rc;
}
