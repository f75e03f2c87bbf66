/* spoor sym: addresses to function+offset, file:line and the chain of inlined frames. */
#include <ctype.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "spoor/elf.h"

#define MAX_FRAMES 64

static const char sym_usage[] =
    "usage: spoor sym -e FW.elf [--json] [ADDR ...]\n"
    "Symbolizes code addresses with the ELF's DWARF (functions, inlined functions, lines)\n"
    "and its symbol table where there is no DWARF. Reads addresses from standard input,\n"
    "separated by white space, when none are given. The Thumb bit of an address is ignored.\n\n"
    "  -e, --elf FILE  the firmware ELF (32-bit ARM)\n"
    "  -j, --json      one JSON object per address:\n"
    "                  {\"addr\":\"0x..\",\"function\":..,\"offset\":..,\"file\":..,\"line\":..,\n"
    "                   \"inlined\":[{\"function\":..,\"file\":..,\"line\":..}]}\n"
    "  -h, --help      this text\n\n"
    "Text output: '0x000001a4 main+0xc at src/main.c:42', then for an address in inlined\n"
    "code one line '  inlined in CALLER at FILE:LINE' per enclosing function, innermost first.\n"
    "Unknown parts print as ?? (JSON: null).\n";

static void print_text(FILE *out, uint32_t addr, const spoor_location *f, size_t n)
{
    fprintf(out, "0x%08x ", addr);
    if (f[0].function)
        fprintf(out, "%s+0x%x", f[0].function, f[0].offset);
    else
        fputs("??", out);
    if (f[0].file)
        fprintf(out, f[0].line ? " at %s:%u\n" : " at %s:?\n", f[0].file, f[0].line);
    else
        fputc('\n', out);
    for (size_t i = 1; i < n; i++) {
        fprintf(out, "  inlined in %s", f[i].function ? f[i].function : "??");
        if (f[i].file)
            fprintf(out, f[i].line ? " at %s:%u" : " at %s:?", f[i].file, f[i].line);
        fputc('\n', out);
    }
}

static void print_line_field(FILE *out, unsigned line)
{
    if (line)
        fprintf(out, "%u", line);
    else
        fputs("null", out);
}

static void print_json(FILE *out, uint32_t addr, const spoor_location *f, size_t n)
{
    fprintf(out, "{\"addr\":\"0x%08x\",\"function\":", addr);
    cli_json_string(out, f[0].function);
    if (f[0].has_offset)
        fprintf(out, ",\"offset\":%u,\"file\":", f[0].offset);
    else
        fputs(",\"offset\":null,\"file\":", out);
    cli_json_string(out, f[0].file);
    fputs(",\"line\":", out);
    print_line_field(out, f[0].line);
    fputs(",\"inlined\":[", out);
    for (size_t i = 1; i < n; i++) {
        fputs(i > 1 ? ",{\"function\":" : "{\"function\":", out);
        cli_json_string(out, f[i].function);
        fputs(",\"file\":", out);
        cli_json_string(out, f[i].file);
        fputs(",\"line\":", out);
        print_line_field(out, f[i].line);
        fputc('}', out);
    }
    fputs("]}\n", out);
}

struct sym_ctx {
    spoor_elf *elf;
    int json;
    int bad; /* tokens that were not addresses */
};

static void symbolize_token(struct sym_ctx *c, const char *tok)
{
    uint32_t addr;
    if (!cli_parse_u32(tok, &addr)) {
        cli_error("sym", "not an address: '%s'", tok);
        c->bad++;
        return;
    }
    spoor_location frames[MAX_FRAMES];
    size_t n = spoor_elf_symbolize(c->elf, addr, frames, MAX_FRAMES);
    (c->json ? print_json : print_text)(stdout, addr, frames, n);
}

/* Reads white-space separated tokens from stdin. Flushes after each line unless stdin is a
 * regular file, so that spoor sym can serve as a coprocess like addr2line. */
static void symbolize_stdin(struct sym_ctx *c)
{
    struct stat st;
    int flush = !(fstat(0, &st) == 0 && S_ISREG(st.st_mode));
    char tok[128];
    size_t len = 0;
    int ch;
    do {
        ch = getchar();
        if (ch == EOF || isspace(ch)) {
            if (len) {
                tok[len] = 0;
                symbolize_token(c, tok);
                len = 0;
            }
            if (ch == '\n' && flush)
                fflush(stdout);
        } else if (len < sizeof tok - 1) {
            tok[len++] = (char)ch;
        }
    } while (ch != EOF);
}

int cmd_sym(int argc, char **argv)
{
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"json", no_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *elf_path = NULL;
    struct sym_ctx c = {0};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:jh", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'j': c.json = 1; break;
        case 'h': fputs(sym_usage, stdout); return SPOOR_EXIT_OK;
        default:
            return cli_error("sym", "unknown or incomplete option '%s' (see spoor sym --help)",
                             argv[optind - 1]);
        }
    }
    if (!elf_path)
        return cli_error("sym", "no ELF given (-e FW.elf)");
    c.elf = spoor_elf_open(elf_path);
    if (!c.elf)
        return cli_error("sym", "%s", spoor_last_error());
    if (!spoor_elf_has_symbols(c.elf)) {
        cli_error("sym", "%s: no symbols (no symbol table and no DWARF)", elf_path);
        spoor_elf_close(c.elf);
        return SPOOR_EXIT_USAGE;
    }
    if (optind < argc)
        for (int i = optind; i < argc; i++)
            symbolize_token(&c, argv[i]);
    else
        symbolize_stdin(&c);
    spoor_elf_close(c.elf);
    if (fflush(stdout) != 0)
        return cli_error("sym", "cannot write output");
    return c.bad ? SPOOR_EXIT_USAGE : SPOOR_EXIT_OK;
}
