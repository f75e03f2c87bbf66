/* A client of OpenOCD's telnet server (port 4444 by default): target memory read with `mdw`
 * while the target runs, and commands (`mww`, `mmw`, a Tcl procedure such as orbtop-rtos's
 * `rtos_dwt_config ADDR`). OpenOCD's manual, "Telnet" and "Memory access commands".
 *
 * A read of any length is one `mdw ADDR COUNT` command (the words covering it): one round trip.
 * The memory layer (spoor_mem_add_openocd) reads by 256-byte page, cached until
 * spoor_mem_invalidate(). */
#ifndef SPOOR_OPENOCD_H
#define SPOOR_OPENOCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/memory.h"

typedef struct spoor_openocd spoor_openocd;

/* Connects to "HOST:PORT" or "PORT" (localhost) and waits for the prompt. NULL with the error
 * set: "openocd HOST:PORT: connection refused", "... no prompt within N ms". */
spoor_openocd *spoor_openocd_connect(const char *where, unsigned timeout_ms);
void spoor_openocd_close(spoor_openocd *o);

/* Runs one command line; out receives its output (the echo and the prompt removed, NUL
 * terminated, cut at cap). false when the connection fails or times out. */
bool spoor_openocd_command(spoor_openocd *o, const char *command, char *out, size_t cap);

/* Reads target memory with one mdw; false (error set) when OpenOCD does not return every
 * word ("openocd: mdw 0x...: ..."). */
bool spoor_openocd_read(spoor_openocd *o, uint32_t addr, void *buf, size_t len);

/* Writes a word (mww), or the bits of mask (mmw ADDR SET CLEAR). */
bool spoor_openocd_write(spoor_openocd *o, uint32_t addr, uint32_t value, uint32_t mask);

/* Commands sent (round trips). */
uint64_t spoor_openocd_round_trips(const spoor_openocd *o);

/* A live memory layer over the connection (borrowed), cached by page. */
bool spoor_mem_add_openocd(spoor_mem *m, spoor_openocd *o);

/* ---- sans-I/O pieces, for tests ---------------------------------------------------------- */

/* Removes telnet negotiation (IAC sequences, RFC 854) and CR from len bytes in place;
 * returns the new length. */
size_t spoor_openocd_strip_telnet(char *text, size_t len);

/* Parses mdw output ("0x20000000: 00000001 00000002 ...", one or more lines) into count words
 * starting at addr; false when a word is missing or a line is malformed. */
bool spoor_openocd_parse_mdw(const char *text, uint32_t addr, uint32_t *words, size_t count);

#endif
