/* Arm semihosting (BKPT 0xAB), serviced by QEMU -semihosting-config enable=on and by debug
 * probes: console output, host files, the command line, exit. */
#ifndef SENSOR_FW_SEMIHOST_H
#define SENSOR_FW_SEMIHOST_H

#include <stdint.h>

#define SEMIHOST_SYS_OPEN 0x01u
#define SEMIHOST_SYS_CLOSE 0x02u
#define SEMIHOST_SYS_WRITE0 0x04u
#define SEMIHOST_SYS_WRITE 0x05u
#define SEMIHOST_SYS_GET_CMDLINE 0x15u
#define SEMIHOST_SYS_EXIT 0x18u
#define SEMIHOST_SYS_EXIT_EXTENDED 0x20u
#define SEMIHOST_OPEN_WRITE_BINARY 5u /* "wb" */
#define SEMIHOST_APPLICATION_EXIT 0x20026u

static inline uint32_t semihost_call(uint32_t operation, const void *argument)
{
    register uint32_t r0 __asm__("r0") = operation;
    register const void *r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static inline void semihost_puts(const char *text)
{
    semihost_call(SEMIHOST_SYS_WRITE0, text);
}

/* The program's command line (QEMU: the arg= values joined by spaces); 0 when there is none. */
static inline int semihost_cmdline(char *buffer, uint32_t size)
{
    volatile uint32_t block[2] = {(uint32_t)(uintptr_t)buffer, size - 1u};
    if (semihost_call(SEMIHOST_SYS_GET_CMDLINE, (const void *)block) != 0u || block[1] == 0u)
        return 0;
    buffer[block[1]] = '\0';
    return 1;
}

static inline void semihost_exit(int status) __attribute__((noreturn));
static inline void semihost_exit(int status)
{
    const uint32_t block[2] = {SEMIHOST_APPLICATION_EXIT, (uint32_t)status};
    semihost_call(SEMIHOST_SYS_EXIT_EXTENDED, block);
    for (;;) {
    }
}

#endif
