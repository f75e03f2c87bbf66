/*
 * sensor: a firmware outside spoor's tree that uses the installed target library, the test bed
 * of tests/e2e/test_install.py and the worked example of docs/integrating.md.
 *
 * It reads a sensor register that does not exist (nothing answers at 0x60001230 on QEMU's
 * mps2-an385): a precise BusFault in read_channel(). spoor's fault handler writes the dump into
 * .noinit RAM and resets the core. After the reset a dump is waiting: the firmware writes it to
 * the host file named on its command line through semihosting and exits with status 0.
 *   qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
 *     -semihosting-config enable=on,target=native,arg=/tmp/crash.bin -kernel sensor.elf
 */
#include <stdint.h>

#include "semihost.h"
#include "spoor/calls.h"
#include "spoor/crash.h"

#define SENSOR_BASE 0x60001230u /* the register block of a sensor this board does not have */

/* Linker script symbols (sensor.ld) */
extern uint8_t __flash_start[], __flash_end[], __ram_start[], __ram_end[];

/* The dump buffer: in .noinit (spoor-sections.ld), neither loaded nor zeroed. */
__attribute__((section(".noinit"), aligned(8))) static uint8_t crash_buffer[4096];
/* The call recorder's ring: it records only when the firmware is built with
 * -finstrument-functions (make EXTRA_CFLAGS=-finstrument-functions), and every dump holds it. */
static uint32_t call_ring[256];
static spoor_range ram[1];
static spoor_range flash[1];

static void crash_setup(void)
{
    ram[0].start = (uint32_t)(uintptr_t)__ram_start;
    ram[0].end = (uint32_t)(uintptr_t)__ram_end;
    flash[0].start = (uint32_t)(uintptr_t)__flash_start;
    flash[0].end = (uint32_t)(uintptr_t)__flash_end;
    spoor_crash_config config = {0};
    config.buffer = crash_buffer;
    config.buffer_size = sizeof crash_buffer;
    config.stack_window = 1024u;
    config.ram = ram;
    config.ram_count = 1u;
    config.flash = flash;
    config.flash_count = 1u;
    config.after_capture = 0; /* reset through AIRCR.SYSRESETREQ */
    if (!spoor_crash_init(&config)) {
        semihost_puts("spoor_crash_init failed\n");
        semihost_exit(3);
    }
    spoor_dump_add_region(&spoor_calls_state, sizeof spoor_calls_state, SPOOR_REGION_DATA);
    spoor_dump_add_region(call_ring, sizeof call_ring, SPOOR_REGION_DATA);
}

static bool write_to_host(void *ctx, const uint8_t *bytes, uint32_t len)
{
    const uint32_t block[3] = {*(const uint32_t *)ctx, (uint32_t)(uintptr_t)bytes, len};
    return semihost_call(SEMIHOST_SYS_WRITE, block) == 0u;
}

/* Second boot: hands the waiting dump to the host file `path`. */
static int save_dump(const char *path)
{
    uint32_t length = 0;
    while (path[length] != '\0')
        length++;
    const uint32_t open_block[3] = {(uint32_t)(uintptr_t)path, SEMIHOST_OPEN_WRITE_BINARY, length};
    uint32_t handle = semihost_call(SEMIHOST_SYS_OPEN, open_block);
    if (handle == 0xFFFFFFFFu) {
        semihost_puts("cannot open the dump file\n");
        return 1;
    }
    bool written = spoor_crash_stream(write_to_host, &handle, 256u);
    semihost_call(SEMIHOST_SYS_CLOSE, &handle);
    if (!written)
        return 1;
    spoor_crash_take();
    semihost_puts("crash dump saved\n");
    return 0;
}

__attribute__((noinline)) static uint32_t read_channel(uint32_t channel)
{
    return *(volatile uint32_t *)(SENSOR_BASE + 4u * channel); /* BusFault */
}

__attribute__((noinline)) static uint32_t sample_sensors(uint32_t channels)
{
    uint32_t sum = 0;
    for (uint32_t channel = 0; channel < channels; channel++)
        sum += read_channel(channel) * (channel + 1u);
    return sum;
}

int main(void)
{
    static char dump_path[200];
    crash_setup();
    if (!semihost_cmdline(dump_path, sizeof dump_path)) {
        semihost_puts("usage: give the dump file as the command line\n");
        return 2;
    }
    if (spoor_crash_valid())
        return save_dump(dump_path);
    spoor_calls_init(call_ring, sizeof call_ring);
    semihost_puts("sampling the sensors\n");
    uint32_t sum = sample_sensors(4u);
    semihost_puts("no fault?\n");
    return sum == 0u ? 4 : 5;
}
