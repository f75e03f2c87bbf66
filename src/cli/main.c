/* spoor: what a Cortex-M did before it crashed or while it ran. */
#include <string.h>

#include "cli.h"
#include "spoor/dump_format.h"

struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
#define SPOOR_COMMAND(name, summary) {#name, summary, cmd_##name},
#include "commands.def"
#undef SPOOR_COMMAND
};

static void usage(FILE *out)
{
    fputs("usage: spoor COMMAND [OPTIONS] [ARGS]\n"
          "       spoor COMMAND --help\n"
          "       spoor --version\n\n"
          "Shows what a Cortex-M microcontroller did before it crashed or while it ran.\n\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\nexit status: 0 success, 1 a reported failure, 2 usage or input error\n", out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SPOOR_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return SPOOR_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        /* the dump reader accepts exactly the format version of spoor/dump_format.h */
        printf("spoor %s (dump format versions read: %u)\n", SPOOR_VERSION,
               (unsigned)SPOOR_DUMP_VERSION);
        return SPOOR_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "spoor: unknown command '%s' (see spoor --help)\n", argv[1]);
    return SPOOR_EXIT_USAGE;
}
