/* A client of OpenOCD's telnet server (port 4444 by default) or its Tcl RPC server (6666):
 * target memory read while the target runs, and commands (`mww`, `mmw`, a Tcl procedure such
 * as orbtop-rtos's `rtos_dwt_config ADDR`). OpenOCD's manual, "Telnet", "Memory access
 * commands" and "Tcl RPC server".
 *
 * Telnet: each command is a line, its output what comes before the next "> " prompt; reads
 * are `mdw ADDR COUNT`, writes `mww` (`mmw` for a mask). OpenOCD's telnet output does not say
 * whether a command failed: a read fails when mdw does not print every word, a write when it
 * prints anything.
 *
 * Tcl RPC: each command goes out terminated by 0x1a and its result comes back terminated by
 * 0x1a; the result of a failed command is its error message, with nothing to tell it apart,
 * so each command is sent inside `catch` and the reply says which it was:
 *     if {[catch {COMMAND} spoor_r]} {set spoor_r "E$spoor_r"} else {set spoor_r "O$spoor_r"}
 * Reads are `read_memory ADDR 32 COUNT` (a Tcl list of 0x-prefixed words; OpenOCD 0.12 or
 * later), writes `write_memory ADDR 32 {VALUE}` (`mmw` for a mask). Connecting sends `version`.
 * Asynchronous notifications (tcl_notifications on) are not expected: leave them off.
 *
 * A read of any length is one command (the words covering it): one round trip. The memory
 * layer (spoor_mem_add_openocd) reads by 256-byte page, cached until spoor_mem_invalidate().
 * A connection that fails once (closed, no reply in time, a reply too long) stays failed. */
#ifndef SPOOR_OPENOCD_H
#define SPOOR_OPENOCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct spoor_openocd spoor_openocd;

/* Connects to "HOST:PORT" or "PORT" (localhost) and waits for the prompt. NULL with the error
 * set: "openocd HOST:PORT: connection refused", "... no prompt within N ms". */
spoor_openocd *spoor_openocd_connect(const char *where, unsigned timeout_ms);
/* Connects to the Tcl RPC server at "HOST:PORT" or "PORT" and checks that it evaluates Tcl
 * (the wrapped `version`). NULL with the error set: "openocd tcl HOST:PORT: connection
 * refused", "... no reply within N ms", "... not OpenOCD's Tcl RPC server: ...". */
spoor_openocd *spoor_openocd_connect_tcl(const char *where, unsigned timeout_ms);
void spoor_openocd_close(spoor_openocd *o);

/* Runs one command; out receives its output (telnet: the echo and the prompt removed; NUL
 * terminated, cut at cap). false when the connection fails or times out, and over Tcl when
 * the command fails ("openocd tcl HOST:PORT: COMMAND: MESSAGE", the message's first line). */
bool spoor_openocd_command(spoor_openocd *o, const char *command, char *out, size_t cap);

/* Reads target memory with one mdw or read_memory; false (error set) when OpenOCD does not
 * return every word ("openocd: mdw 0x...: ...", "openocd tcl HOST:PORT: read_memory ...:
 * ..."). */
bool spoor_openocd_read(spoor_openocd *o, uint32_t addr, void *buf, size_t len);

/* Writes a word (mww), or the bits of mask (mmw ADDR SET CLEAR). */
bool spoor_openocd_write(spoor_openocd *o, uint32_t addr, uint32_t value, uint32_t mask);

/* Commands sent (round trips). */
uint64_t spoor_openocd_round_trips(const spoor_openocd *o);

/* NULL while the connection works; once it failed (closed, timed out, garbled), why. */
const char *spoor_openocd_broken(const spoor_openocd *o);

/* ---- sans-I/O pieces, for tests ---------------------------------------------------------- */

/* Removes telnet negotiation (IAC sequences, RFC 854) and CR from len bytes in place;
 * returns the new length. */
size_t spoor_openocd_strip_telnet(char *text, size_t len);

/* Parses mdw output ("0x20000000: 00000001 00000002 ...", one or more lines) into count words
 * starting at addr; false when a word is missing or a line is malformed. */
bool spoor_openocd_parse_mdw(const char *text, uint32_t addr, uint32_t *words, size_t count);

/* Parses read_memory's result (a Tcl list: "0x1 0x20000400 0xdeadbeef", 1 to 8 hex digits
 * after 0x) into exactly count words; false for anything else (an error message, too few or
 * too many elements). */
bool spoor_openocd_parse_read_memory(const char *text, uint32_t *words, size_t count);

#endif
