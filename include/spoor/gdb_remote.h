/* A GDB remote serial protocol client: talks to a GDB server (OpenOCD on 3333, pyOCD, the
 * J-Link GDB server, QEMU's gdbstub) to read a halted target's registers and memory (or a
 * running one's, halting it briefly for each batch of reads: spoor_gdb_continue). The
 * memory layer (spoor/memory.h) wraps it with a page cache; use it through that.
 *
 * Protocol reference: GDB manual, appendix "GDB Remote Serial Protocol": qSupported (PacketSize,
 * qXfer:features:read), '?', 'g', 'p', 'm', 'M', 'c', the interrupt byte 0x03
 * ("Interrupts"), qXfer:features:read:target.xml (the target description gives each
 * register's name, number and size). */
#ifndef SPOOR_GDB_REMOTE_H
#define SPOOR_GDB_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/regs.h"

typedef struct spoor_gdb spoor_gdb;

/* Connects to "HOST:PORT" and handshakes (qSupported, target description, '?'). timeout_ms
 * bounds each wait for a reply. NULL with the error set: "HOST:PORT: connection refused",
 * "HOST:PORT: no reply within N ms", "HOST:PORT: not a GDB server (...)". */
spoor_gdb *spoor_gdb_connect(const char *host_port, unsigned timeout_ms);
void spoor_gdb_close(spoor_gdb *g);

/* The largest packet the server accepts (qSupported PacketSize; 400 bytes when it says
 * nothing, GDB's own assumption). */
size_t spoor_gdb_packet_size(const spoor_gdb *g);
/* The most target bytes one 'm' reply can carry under that size. */
size_t spoor_gdb_max_read(const spoor_gdb *g);

/* The most target bytes one 'M' packet can carry under that size ("$M" ADDR "," LEN ":" hex
 * "#cs": 8-digit fields, two hex digits a byte, as GDB computes it). */
size_t spoor_gdb_max_write(const spoor_gdb *g);

/* Reads target memory with as few 'm' packets as the packet size allows; false when the server
 * answered an error for any part (the error names the address). */
bool spoor_gdb_read_memory(spoor_gdb *g, uint32_t addr, void *buf, size_t len);

/* Writes target memory with 'M' packets of at most spoor_gdb_max_write bytes, in address order,
 * each answered "OK". False when the server answered an error ("Exx": the error names the
 * address; the parts before it were written), does not write memory (an empty reply) or
 * answered anything else. */
bool spoor_gdb_write_memory(spoor_gdb *g, uint32_t addr, const void *buf, size_t len);

/* The registers by the target description's names (r0-r12, sp, lr, pc, xpsr; msp, psp, control,
 * s0-s31/d0-d15 and fpscr when the server describes them): 'g' first, 'p' for the rest. have
 * tells what the server gave; missing (when not NULL) receives the names of the groups it did
 * not give, e.g. "msp/psp/control" for QEMU 7.2's gdbstub, "" when none. */
bool spoor_gdb_read_registers(spoor_gdb *g, spoor_regs *out, char *missing, size_t missing_len);

/* True while the connection is usable; false once it broke (the server closed it, no reply
 * within the timeout, a reply that cannot be the answer to the request), with
 * spoor_last_error() set to the one line that says how, e.g. "HOST:PORT: the server closed
 * the connection". Every call after a break fails with that line; a caller that read through
 * a memory view (which may have gone on with other layers) asks here whether what it read
 * is whole. A target's refusal of some memory ("E01") does not break the connection. */
bool spoor_gdb_alive(spoor_gdb *g);

/* The signal of the last stop reply ('?'): 5 SIGTRAP for a breakpoint or halt, ... */
int spoor_gdb_stop_signal(const spoor_gdb *g);

/* ---- a target that runs between reads (spoor top -s with --gdb; docs/top.md) -------------
 * A server halts the target when a client connects (QEMU's gdbstub, OpenOCD), and the calls
 * above need it halted. spoor_gdb_continue() lets it run ('c'). While it runs, the next read or
 * write halts it first (spoor_gdb_halt: the interrupt byte 0x03, then the stop reply), and it
 * stays halted until the next spoor_gdb_continue(): halt, read in one batch, continue. Each
 * halt is counted with the time the target spent halted (spoor_gdb_stats). A target that stops
 * on its own while it runs (a breakpoint, a fault: a stop reply other than the interrupt's
 * signal 2) fails that halt once with "HOST:PORT: the target stopped on its own while it ran
 * (T05...); it stays halted", and is then read as it is and never continued; one that exits
 * (W/X) fails every later call with "HOST:PORT: the target has exited (W00)". A wait for the
 * stop is bounded by the connection's timeout. Closing leaves a target that was let run
 * running. Without spoor_gdb_continue() nothing changes: the target stays halted. */
bool spoor_gdb_continue(spoor_gdb *g);
/* Halts a running target (true at once when it is not running). */
bool spoor_gdb_halt(spoor_gdb *g);
bool spoor_gdb_running(const spoor_gdb *g);

typedef struct spoor_gdb_stats {
    uint64_t round_trips;       /* request/reply exchanges */
    uint64_t mem_packets;       /* 'm' requests among them */
    uint64_t mem_bytes;         /* target bytes the 'm' replies carried */
    uint64_t mem_write_packets; /* 'M' requests among them */
    uint64_t mem_write_bytes;   /* target bytes the server accepted ("OK") */
    uint64_t bytes_sent, bytes_received;
    uint64_t halts;     /* interrupts of a running target (spoor_gdb_halt) */
    uint64_t resumes;   /* 'c' packets (spoor_gdb_continue) */
    uint64_t halted_us; /* time from each interrupt to the next 'c', summed */
} spoor_gdb_stats;
void spoor_gdb_stats_get(const spoor_gdb *g, spoor_gdb_stats *out);

#endif
