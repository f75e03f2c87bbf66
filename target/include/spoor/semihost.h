/*
 * Arm semihosting for handing a crash dump over to a debugger's host (docs/crash-capture.md):
 * a BKPT 0xAB the debugger (QEMU with -semihosting, OpenOCD with `arm semihosting enable`,
 * pyOCD, J-Link) services with a file operation on the host.
 *
 * Only while a debugger that services semihosting is attached: without one, the BKPT is a
 * HardFault (Armv7-M/Armv8-M with no debugger halting it) or a lockup. Call these after
 * the reset that follows a capture, from thread mode, never from the fault path.
 *
 *   if (spoor_crash_valid() && spoor_crash_to_host_file("crash.bin"))
 *       spoor_crash_take();
 */
#ifndef SPOOR_SEMIHOST_H
#define SPOOR_SEMIHOST_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Operation numbers (Arm "Semihosting for AArch32 and AArch64", version 2.0). */
#define SPOOR_SEMIHOST_SYS_OPEN 0x01u
#define SPOOR_SEMIHOST_SYS_CLOSE 0x02u
#define SPOOR_SEMIHOST_SYS_WRITE0 0x04u
#define SPOOR_SEMIHOST_SYS_WRITE 0x05u
#define SPOOR_SEMIHOST_SYS_EXIT 0x18u
#define SPOOR_SEMIHOST_SYS_EXIT_EXTENDED 0x20u
/* SYS_OPEN modes: the index of the fopen() mode string ("wb" is 5). */
#define SPOOR_SEMIHOST_OPEN_WRITE_BINARY 5u

/* One semihosting call: operation in r0, argument (a parameter block) in r1; returns r0. */
uint32_t spoor_semihost_call(uint32_t operation, const void *argument);

/* Opens path on the host in mode (SPOOR_SEMIHOST_OPEN_*); the handle, or -1. */
int spoor_semihost_open(const char *path, uint32_t mode);
/* Writes len bytes to an open host file; true when all were written. */
bool spoor_semihost_write(int handle, const void *data, uint32_t len);
/* Closes a host file; true on success. */
bool spoor_semihost_close(int handle);
/* Writes a NUL-terminated string to the debugger's console (SYS_WRITE0). */
void spoor_semihost_print(const char *text);
/* Ends the session: QEMU exits with status (0: SYS_EXIT ApplicationExit, others
 * SYS_EXIT_EXTENDED). A debugger may just halt the core. */
void spoor_semihost_exit(int status) __attribute__((noreturn));

/* A spoor_crash_sink_fn (spoor/crash.h): ctx points to the int handle of an open host file. */
bool spoor_semihost_sink(void *ctx, const uint8_t *bytes, uint32_t len);

/* Writes the waiting dump to the host file path (created or truncated); true when all of it
 * was written. Does not take the dump: call spoor_crash_take() after. */
bool spoor_crash_to_host_file(const char *path);

#ifdef __cplusplus
}
#endif

#endif
