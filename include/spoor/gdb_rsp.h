/* The GDB remote serial protocol, sans I/O: a byte-at-a-time packet parser, packet framing,
 * and a request handler that serves a stopped Cortex-M (registers plus a memory reader) to
 * GDB. Sockets live in the caller (src/cli/cmd_gdbserver.c). Protocol reference: GDB manual,
 * appendix "GDB Remote Serial Protocol" (packets, qSupported, qXfer:features:read). */
#ifndef SPOOR_GDB_RSP_H
#define SPOOR_GDB_RSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/error.h"
#include "spoor/read.h"
#include "spoor/regs.h"

#define SPOOR_RSP_MAX_PACKET 4096

typedef enum spoor_rsp_event {
    SPOOR_RSP_NONE,         /* need more bytes */
    SPOOR_RSP_PACKET,       /* a packet with a good checksum: spoor_rsp_parser.packet */
    SPOOR_RSP_BAD_CHECKSUM, /* a packet whose checksum did not match (answer '-') */
    SPOOR_RSP_ACK,          /* '+' */
    SPOOR_RSP_NACK,         /* '-': resend the last reply */
    SPOOR_RSP_INTERRUPT,    /* 0x03 */
} spoor_rsp_event;

typedef struct spoor_rsp_parser {
    int state;
    uint8_t sum, expect;
    size_t len;
    bool overflow;
    char packet[SPOOR_RSP_MAX_PACKET + 1]; /* NUL-terminated payload, '}' escapes undone */
} spoor_rsp_parser;

void spoor_rsp_init(spoor_rsp_parser *p);
spoor_rsp_event spoor_rsp_feed(spoor_rsp_parser *p, uint8_t byte);

/* Frames payload as "$...#cs" (escaping $ # } *) into out; returns the length, 0 if out is
 * too small. */
size_t spoor_rsp_frame(const char *payload, size_t len, char *out, size_t cap);

/* One thread of an RTOS, as GDB sees it (thread id = index + 1). */
typedef struct spoor_rsp_thread {
    spoor_regs regs; /* what it resumes with: the snapshot's for the current thread */
    char extra[160]; /* qThreadExtraInfo: "sensor (blocked on semaphore sem_ready, prio 3)" */
} spoor_rsp_thread;

/* ---- branch trace ----------------------------------------------------------------------
 * The history of the stopped thread as GDB's Branch Trace Store format (GDB manual, "Branch
 * Trace Format", gdb-btrace.dtd): blocks of instructions executed in sequence, begin the first
 * instruction's address, end the last one's (the branch that left the block). The newest block
 * ends at the stop pc, which GDB takes for the current instruction, not part of the history. A
 * block whose end lies below its begin is a gap: GDB walks past its end at once and records a
 * gap there ("[decode error (1): instruction overflow]" in record instruction-history, "(N
 * gaps)" in info record), what ran there being unknown. */
typedef struct spoor_rsp_block {
    uint32_t begin, end;
} spoor_rsp_block;

/* A gap block at pc (the address GDB names in its warning). */
spoor_rsp_block spoor_rsp_gap(uint32_t pc);

typedef struct spoor_rsp_btrace {
    char *xml; /* the qXfer:btrace:read document, newest block first */
    size_t len;
    bool sent; /* read once: ":new" then answers "nothing new" */
} spoor_rsp_btrace;

/* Writes the document for blocks (oldest first) into bt. False (out of memory, the error set)
 * leaves bt empty. */
bool spoor_rsp_btrace_set(spoor_rsp_btrace *bt, const spoor_rsp_block *blocks, size_t count);
void spoor_rsp_btrace_free(spoor_rsp_btrace *bt);

/* A stopped target: its registers (r0-r15 and xPSR; with fp also d0-d15 from s0-s31 and fpscr)
 * and its memory through a reader. */
typedef struct spoor_rsp_target {
    spoor_regs regs;
    /* With fp the target also has the "org.gnu.gdb.arm.vfp" registers d0-d15 and fpscr
     * (numbers 17-33). GDB needs them to unwind through an extended (FP) exception frame, and
     * reads FPCCR/FPCAR, which a dump does not hold: they are answered with their reset values
     * (ARMv7-M B3.2.20: FPCCR.ASPEN and LSPEN set; FPCAR 0) when the reader has nothing. */
    bool fp;
    int signal; /* reported in the stop reply: 11 SIGSEGV for a fault, 5 SIGTRAP */
    spoor_read_fn read;
    void *ctx;
    /* RTOS threads (qfThreadInfo, qThreadExtraInfo, Hg, T): threads[0] is the current one.
     * NULL: one thread with regs. selected (the caller's storage) is the index Hg chose; 'g'
     * and 'p' answer with that thread's registers. */
    const spoor_rsp_thread *threads;
    size_t nthreads;
    size_t *selected;
    /* The stopped thread's branch trace (with threads, threads[0]'s; the others have none).
     * NULL: none is offered, and the btrace packets are answered as unknown. With one,
     * qSupported offers Qbtrace:bts+, Qbtrace:off+, qXfer:btrace:read+ and
     * qXfer:btrace-conf:read+, and the configuration says BTS from the start (GDB then records
     * at connect, "Target is recording using Branch Trace Store"); qXfer:btrace:read:all and
     * :new give the blocks (:new nothing once they were read: a stopped target has nothing
     * new), :delta E01 (GDB then reads :new). */
    spoor_rsp_btrace *btrace;
} spoor_rsp_target;

/* Answers one packet into reply (NUL-terminated, unframed). *detach is set when the client
 * detached or killed the session. The target is read-only: writes, resume and step get
 * errors. */
size_t spoor_rsp_handle(const spoor_rsp_target *t, const char *packet, char *reply, size_t cap,
                        bool *detach);

/* ---- the session: acknowledgements and retransmission, sans I/O --------------------------
 * One GDB connection: the caller hands in the bytes it received and sends what the session
 * gives back. A packet is acknowledged ('+') at once, before it is answered (a slow answer,
 * reading a live target, must not make GDB send the packet again); a packet with a bad checksum
 * gets '-'; a '-' makes the last reply (or stop) go out again, unless the '-' was received
 * before that reply went out (GDB sent it while it waited, its timeout shorter than the
 * answer); 0x03 repeats the stop ("S0b": the target is already stopped). The loop:
 *
 *     while (i < n) {
 *         i += spoor_rsp_session_feed(&s, in + i, n - i, &io);   send io.out
 *         if (io.event == SPOOR_RSP_PACKET) {
 *             spoor_rsp_session_answer(&s, &io);
 *             (receive what came meanwhile into in + n, n += that)
 *             spoor_rsp_session_replied(&s, n - i);              send io.out; io.detach: end
 *         }
 *     } */
typedef struct spoor_rsp_session {
    spoor_rsp_parser parser;
    const spoor_rsp_target *target;
    bool spoken;      /* the client sent a packet (a port scan sends none) */
    size_t stale;     /* bytes still to feed that were received before the last reply went out */
    size_t frame_len; /* frame: the last reply or stop, what a '-' asks for again */
    char reply[SPOOR_RSP_MAX_PACKET + 1];
    char frame[2 * SPOOR_RSP_MAX_PACKET + 8];
} spoor_rsp_session;

/* What the caller does next. */
typedef struct spoor_rsp_io {
    spoor_rsp_event event; /* what the last byte fed completed (SPOOR_RSP_NONE: all fed) */
    const char *out;       /* send these bytes now (the session's storage, until the next call) */
    size_t out_len;        /* 0: nothing to send (an ack, a stale '-', nothing yet to resend) */
    bool detach;           /* spoor_rsp_session_answer: the client detached or killed the
                              session; send out, then close */
} spoor_rsp_io;

void spoor_rsp_session_init(spoor_rsp_session *s, const spoor_rsp_target *t);
/* Feeds in[0..n) up to and including the first byte that completes an event; returns how many
 * bytes were used (n when none did: io->event is then SPOOR_RSP_NONE). For SPOOR_RSP_PACKET,
 * io->out is the ack: send it, then call spoor_rsp_session_answer. */
size_t spoor_rsp_session_feed(spoor_rsp_session *s, const uint8_t *in, size_t n, spoor_rsp_io *io);
/* Answers the packet the last feed completed: io->out is the framed reply, io->detach set when
 * the session ends after it. */
void spoor_rsp_session_answer(spoor_rsp_session *s, spoor_rsp_io *io);
/* The reply is about to go out; unfed bytes were received before it (the rest of the last
 * input, and what came while it was made): a '-' among them does not ask for it again. */
void spoor_rsp_session_replied(spoor_rsp_session *s, size_t unfed);

#endif
