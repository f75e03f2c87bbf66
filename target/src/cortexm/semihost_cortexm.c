/*
 * Arm semihosting (spoor/semihost.h): the BKPT 0xAB call and the few file operations a dump
 * hand-over needs. Thumb-1 only, so it runs on every Cortex-M.
 */
#include "spoor/semihost.h"

#include "spoor/crash.h"
#include "spoor/no_instrument.h"

#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

SPOOR_NO_INSTRUMENT uint32_t spoor_semihost_call(uint32_t operation, const void *argument)
{
    register uint32_t r0 __asm__("r0") = operation;
    register const void *r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

SPOOR_NO_INSTRUMENT static uint32_t length(const char *s)
{
    uint32_t n = 0;
    while (s[n])
        n++;
    return n;
}

SPOOR_NO_INSTRUMENT int spoor_semihost_open(const char *path, uint32_t mode)
{
    uint32_t args[3] = {(uint32_t)(uintptr_t)path, mode, length(path)};
    return (int)spoor_semihost_call(SPOOR_SEMIHOST_SYS_OPEN, args);
}

SPOOR_NO_INSTRUMENT bool spoor_semihost_write(int handle, const void *data, uint32_t len)
{
    uint32_t args[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)data, len};
    return spoor_semihost_call(SPOOR_SEMIHOST_SYS_WRITE, args) == 0; /* bytes not written */
}

SPOOR_NO_INSTRUMENT bool spoor_semihost_close(int handle)
{
    uint32_t args[1] = {(uint32_t)handle};
    return spoor_semihost_call(SPOOR_SEMIHOST_SYS_CLOSE, args) == 0;
}

SPOOR_NO_INSTRUMENT void spoor_semihost_print(const char *text)
{
    spoor_semihost_call(SPOOR_SEMIHOST_SYS_WRITE0, text);
}

SPOOR_NO_INSTRUMENT void spoor_semihost_exit(int status)
{
    if (status == 0) {
        spoor_semihost_call(SPOOR_SEMIHOST_SYS_EXIT,
                            (const void *)(uintptr_t)ADP_STOPPED_APPLICATION_EXIT);
    } else {
        uint32_t args[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
        spoor_semihost_call(SPOOR_SEMIHOST_SYS_EXIT_EXTENDED, args);
    }
    for (;;) {
    }
}

SPOOR_NO_INSTRUMENT bool spoor_semihost_sink(void *ctx, const uint8_t *bytes, uint32_t len)
{
    return spoor_semihost_write(*(const int *)ctx, bytes, len);
}

SPOOR_NO_INSTRUMENT bool spoor_crash_to_host_file(const char *path)
{
    if (!spoor_crash_valid())
        return false;
    int handle = spoor_semihost_open(path, SPOOR_SEMIHOST_OPEN_WRITE_BINARY);
    if (handle == -1)
        return false;
    bool ok = spoor_crash_stream(spoor_semihost_sink, &handle, 256);
    return spoor_semihost_close(handle) && ok;
}
