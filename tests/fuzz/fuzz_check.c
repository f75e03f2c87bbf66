/* libFuzzer harness: spoor check's reading of a firmware ELF (spoor_firmware_check: the vector
 * table found and read, the build-id note, the program headers, the Thumb branches decoded from
 * every code section). Any input must open or be refused, and every check must end without a
 * crash or a leak, whatever the ELF's sections, symbols and code say. The seed
 * (corpus_check/wired_m3.elf) is a Cortex-M3 firmware with spoor wired: startup.c of
 * tests/e2e/install/firmware, a main that calls spoor_crash_init, the target library's crash
 * capture, linked small (-Wl,-n) and stripped of its debug information and local symbols. */
#include <stdint.h>

#include "fuzz_memfd.h"

#include "spoor/elf.h"
#include "spoor/firmware_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spoor_elf *e = spoor_elf_open(fuzz_memfd_path(data, size));
    if (!e)
        return 0;
    spoor_check_item items[SPOOR_CHECK_MAX_ITEMS];
    spoor_firmware_check(e, items, SPOOR_CHECK_MAX_ITEMS);
    spoor_firmware_check(e, items, 2); /* fewer items than the checks make */
    uint32_t target = size >= 4 ? (uint32_t)data[0] | (uint32_t)data[1] << 8 : 0;
    spoor_elf_refers_to(e, target, 0, UINT32_MAX);
    spoor_elf_refers_to(e, target, target, target + 64);
    spoor_elf_close(e);
    return 0;
}
