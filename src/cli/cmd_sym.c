/* spoor sym: addresses to function+offset, file:line and the chain of inlined frames. */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "outbuf.h"
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

static void print_location(outbuf *ob, const char *file, unsigned line)
{
    ob_write(ob, " at ", 4);
    ob_str(ob, file);
    ob_char(ob, ':');
    if (line)
        ob_u32(ob, line);
    else
        ob_char(ob, '?');
}

static void print_text(outbuf *ob, uint32_t addr, const spoor_location *f, size_t n)
{
    ob_hex8(ob, addr);
    ob_char(ob, ' ');
    if (f[0].function) {
        ob_str(ob, f[0].function);
        ob_char(ob, '+');
        ob_hex(ob, f[0].offset);
    } else {
        ob_write(ob, "??", 2);
    }
    if (f[0].file)
        print_location(ob, f[0].file, f[0].line);
    ob_char(ob, '\n');
    for (size_t i = 1; i < n; i++) {
        ob_write(ob, "  inlined in ", 13);
        ob_str(ob, f[i].function ? f[i].function : "??");
        if (f[i].file)
            print_location(ob, f[i].file, f[i].line);
        ob_char(ob, '\n');
    }
}

static void print_json_line(outbuf *ob, unsigned line)
{
    if (line)
        ob_u32(ob, line);
    else
        ob_write(ob, "null", 4);
}

static void print_json(outbuf *ob, uint32_t addr, const spoor_location *f, size_t n)
{
    ob_str(ob, "{\"addr\":\"");
    ob_hex8(ob, addr);
    ob_str(ob, "\",\"function\":");
    ob_json_string(ob, f[0].function);
    ob_str(ob, ",\"offset\":");
    if (f[0].has_offset)
        ob_u32(ob, f[0].offset);
    else
        ob_write(ob, "null", 4);
    ob_str(ob, ",\"file\":");
    ob_json_string(ob, f[0].file);
    ob_str(ob, ",\"line\":");
    print_json_line(ob, f[0].line);
    ob_str(ob, ",\"inlined\":[");
    for (size_t i = 1; i < n; i++) {
        ob_str(ob, i > 1 ? ",{\"function\":" : "{\"function\":");
        ob_json_string(ob, f[i].function);
        ob_str(ob, ",\"file\":");
        ob_json_string(ob, f[i].file);
        ob_str(ob, ",\"line\":");
        print_json_line(ob, f[i].line);
        ob_char(ob, '}');
    }
    ob_str(ob, "]}\n");
}

struct sym_ctx {
    spoor_elf *elf;
    int json;
    int bad; /* tokens that were not addresses */
    outbuf out;
};

static void symbolize_token(struct sym_ctx *c, const char *tok, size_t len)
{
    uint32_t addr;
    if (!cli_parse_u32n(tok, len, &addr)) {
        ob_flush(&c->out);
        cli_error("sym", "not an address: '%.*s'", (int)(len > 64 ? 64 : len), tok);
        c->bad++;
        return;
    }
    spoor_location frames[MAX_FRAMES];
    size_t n = spoor_elf_symbolize(c->elf, addr, frames, MAX_FRAMES);
    (c->json ? print_json : print_text)(&c->out, addr, frames, n);
}

/* Reads white-space separated tokens from stdin in blocks. Unless stdin is a regular file,
 * output is flushed after each block read, so that spoor sym can serve as a coprocess (one
 * address written, its answer read back) like addr2line. */
static int symbolize_stdin(struct sym_ctx *c)
{
    struct stat st;
    int flush = !(fstat(0, &st) == 0 && S_ISREG(st.st_mode));
    static char in[1 << 16];
    size_t kept = 0; /* bytes of a token cut by the end of the previous block */
    for (;;) {
        ssize_t n = read(0, in + kept, sizeof in - kept);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cli_error("sym", "cannot read standard input: %s", strerror(errno));
        size_t end = kept + (size_t)n, start = 0;
        for (size_t i = 0; i < end; i++) {
            if ((unsigned char)in[i] > ' ')
                continue;
            if (i > start)
                symbolize_token(c, in + start, i - start);
            start = i + 1;
        }
        kept = end - start; /* the unfinished token moves to the front */
        if (n == 0 || kept == sizeof in) {
            if (kept)
                symbolize_token(c, in + start, kept);
            if (n == 0)
                return SPOOR_EXIT_OK;
            kept = 0;
        }
        memmove(in, in + start, kept);
        if (flush)
            ob_flush(&c->out);
    }
}

int cmd_sym(int argc, char **argv)
{
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"json", no_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *elf_path = NULL;
    static struct sym_ctx c;
    memset(&c, 0, sizeof c);
    ob_init(&c.out, 1);
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:jh", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'j': c.json = 1; break;
        case 'h': fputs(sym_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("sym", argv);
        }
    }
    if (!(c.elf = cli_open_elf("sym", elf_path)))
        return SPOOR_EXIT_USAGE;
    if (!spoor_elf_has_symbols(c.elf)) {
        cli_error("sym", "%s: no symbols (no symbol table and no DWARF)", elf_path);
        spoor_elf_close(c.elf);
        return SPOOR_EXIT_USAGE;
    }
    int rc = SPOOR_EXIT_OK;
    if (optind < argc)
        for (int i = optind; i < argc; i++)
            symbolize_token(&c, argv[i], strlen(argv[i]));
    else
        rc = symbolize_stdin(&c);
    spoor_elf_close(c.elf);
    if (!ob_flush(&c.out))
        return cli_error("sym", "cannot write output: %s", strerror(errno));
    return rc ? rc : c.bad ? SPOOR_EXIT_USAGE : SPOOR_EXIT_OK;
}
