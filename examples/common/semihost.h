/*
 * Arm semihosting for the example firmware: console output and program exit through
 * BKPT 0xAB, which QEMU (-semihosting-config enable=on) and debug probes service.
 */
#ifndef SPOOR_EXAMPLES_SEMIHOST_H
#define SPOOR_EXAMPLES_SEMIHOST_H

#include <stdint.h>

/* Semihosting operation numbers (Arm "Semihosting for AArch32 and AArch64", v2.0). */
#define SEMIHOST_SYS_OPEN 0x01u
#define SEMIHOST_SYS_CLOSE 0x02u
#define SEMIHOST_SYS_WRITEC 0x03u
#define SEMIHOST_SYS_WRITE0 0x04u
#define SEMIHOST_SYS_WRITE 0x05u
#define SEMIHOST_SYS_GET_CMDLINE 0x15u
#define SEMIHOST_SYS_EXIT 0x18u
#define SEMIHOST_SYS_EXIT_EXTENDED 0x20u

/* SYS_OPEN modes (the index of the fopen() mode string in the semihosting specification). */
#define SEMIHOST_OPEN_READ_BINARY 1u  /* "rb" */
#define SEMIHOST_OPEN_WRITE_BINARY 5u /* "wb" */

/* Reason codes for SYS_EXIT. */
#define SEMIHOST_ADP_STOPPED_APPLICATION_EXIT 0x20026u
#define SEMIHOST_ADP_STOPPED_RUNTIME_ERROR_UNKNOWN 0x20023u

/* Performs one semihosting call: operation in r0, argument in r1, result back in r0. */
static inline uint32_t semihost_call(uint32_t operation, const void *argument)
{
    register uint32_t r0 __asm__("r0") = operation;
    register const void *r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* Writes a NUL-terminated string to the host console. */
void semihost_write_string(const char *text);

/* Writes one character to the host console. */
void semihost_write_char(char c);

/* Writes an unsigned number in decimal. */
void semihost_write_decimal(uint32_t value);

/* Writes an unsigned number as 0x followed by eight hex digits. */
void semihost_write_hex(uint32_t value);

/* Opens a file on the host (mode: SEMIHOST_OPEN_*). Returns its handle, or -1. */
int semihost_open(const char *path, uint32_t mode);

/* Writes len bytes to an open host file. Returns 0 when all of them were written. */
uint32_t semihost_write(int handle, const void *data, uint32_t len);

/* Closes a host file. Returns 0 on success. */
int semihost_close(int handle);

/* Copies the command line the host was given for the program (QEMU: the arg= values of
 * -semihosting-config joined by spaces) into buffer, NUL-terminated. Returns 1, or 0 when the host
 * has none or it does not fit. */
int semihost_get_cmdline(char *buffer, uint32_t size);

/*
 * Ends the program: QEMU exits with `status` as its own exit status. Status 0 uses the plain
 * SYS_EXIT(ADP_Stopped_ApplicationExit); other values use SYS_EXIT_EXTENDED so the host sees them.
 */
void semihost_exit(int status) __attribute__((noreturn));

#endif
