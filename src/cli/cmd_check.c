/* spoor check: whether a firmware ELF has spoor's target library wired as it must be, item by
 * item (spoor/firmware_check.h, docs/check.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "spoor/elf.h"
#include "spoor/firmware_check.h"
#include "util/json_write.h"
#include "util/outbuf.h"

static const char check_usage[] =
    "usage: spoor check -e FW.elf [--json]\n"
    "Reads a firmware ELF and says, item by item, whether spoor's target library is wired:\n"
    "  HardFault vector ...  the fault entries of the vector table (HardFault; MemManage,\n"
    "                     BusFault, UsageFault from Armv7-M on; SecureFault on Armv8-M\n"
    "                     Mainline) point at spoor's handlers or at one that calls spoor\n"
    "  build-id           the GNU build-id note is there, in flash, inside\n"
    "                     __build_id_start/__build_id_end (spoor-sections.ld)\n"
    "  .noinit            the dump buffer's section is in no LOAD segment\n"
    "  EHABI tables       .ARM.exidx is there when spoor_backtrace is linked\n"
    "  instrumented handlers  no naked function (an RTOS's PendSV handler, say) calls\n"
    "                     __cyg_profile_func_enter\n"
    "  call recorder      instrumented code has spoor_calls_init called\n"
    "Each line: ok, FAIL or skip (does not apply), the item and what was found.\n\n"
    "  -e, --elf FILE     the firmware ELF\n"
    "  -j, --json         one JSON object: {\"elf\", \"ok\", \"items\": [{\"item\", \"status\",\n"
    "                     \"text\"}]}\n"
    "  -h, --help         this text\n\n"
    "Exit status: 0 every item ok or skipped, 1 something is mis-wired, 2 usage or input\n"
    "error (no ELF, not an ELF).\n";

static const char *status_word(spoor_check_status s, bool json)
{
    switch (s) {
    case SPOOR_CHECK_OK: return "ok";
    case SPOOR_CHECK_FAIL: return json ? "fail" : "FAIL";
    default: return "skip";
    }
}

int cmd_check(int argc, char **argv)
{
    static const struct option options[] = {{"elf", required_argument, 0, 'e'},
                                            {"json", no_argument, 0, 'j'},
                                            {"help", no_argument, 0, 'h'},
                                            {0, 0, 0, 0}};
    const char *elf_path = NULL;
    bool json = false;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "e:jh", options, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(check_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("check", argv);
        }
    }
    if (!elf_path)
        return cli_error("check", "no ELF: give -e FW.elf");
    if (optind < argc)
        return cli_error("check", "unexpected argument '%s'", argv[optind]);
    spoor_elf *elf = cli_open_elf("check", elf_path);
    if (!elf)
        return SPOOR_EXIT_USAGE;
    spoor_check_item items[SPOOR_CHECK_MAX_ITEMS];
    size_t n = spoor_firmware_check(elf, items, SPOOR_CHECK_MAX_ITEMS);
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok &= items[i].status != SPOOR_CHECK_FAIL;
    outbuf out;
    ob_init(&out, 1);
    if (json) {
        json_out j;
        json_init(&j, &out);
        json_object_begin(&j, NULL);
        json_string(&j, "elf", elf_path);
        json_bool(&j, "ok", ok);
        json_array_begin(&j, "items");
        for (size_t i = 0; i < n; i++) {
            json_object_begin(&j, NULL);
            json_string(&j, "item", items[i].name);
            json_string(&j, "status", status_word(items[i].status, true));
            json_string(&j, "text", items[i].text);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_object_end(&j);
        json_finish(&j);
    } else {
        for (size_t i = 0; i < n; i++)
            ob_printf(&out, "%-4s  %s: %s\n", status_word(items[i].status, false), items[i].name,
                      items[i].text);
        ob_printf(&out, "%s: %s\n", elf_path,
                  ok ? "spoor is wired" : "spoor is NOT wired (see FAIL above)");
    }
    spoor_elf_close(elf);
    if (!ob_flush(&out))
        return cli_error("check", "write to standard output failed");
    return ok ? SPOOR_EXIT_OK : SPOOR_EXIT_FAIL;
}
