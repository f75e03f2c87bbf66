/* The GDB remote client's sans-I/O parts, shared by gdb_remote.c (the connection), the unit
 * test and the fuzz target: target-description XML, replies (qSupported, stop, run-length
 * encoding) and the mapping of described registers to spoor_regs. Internal. */
#ifndef SPOOR_GDB_REMOTE_INTERNAL_H
#define SPOOR_GDB_REMOTE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/gdb_remote.h"
#include "spoor/regs.h"

/* ---- replies and target descriptions (gdb_remote_reply.c, gdb_remote_tdesc.c) ------------ */

/* Decodes an 'm' reply: hex digits (run-length '*' encoding allowed) into at most cap bytes;
 * returns the byte count, or -1 for an error reply "Exx" or malformed text. */
long spoor_gdb_decode_hex_reply(const char *reply, size_t len, uint8_t *out, size_t cap);

/* One register of a target description. */
typedef struct spoor_gdb_reg {
    char name[16];
    unsigned regnum;  /* the number 'p' takes */
    unsigned bitsize; /* 32 or 64 */
    unsigned offset;  /* byte offset in the 'g' reply (registers in regnum order) */
} spoor_gdb_reg;

/* Parses target description XML (one document; xi:include'd documents are parsed by the
 * caller and fed in turn, numbering continuing from *next_regnum). Appends to regs (at most
 * cap); returns the new count, or -1 when the XML is malformed. */
long spoor_gdb_parse_tdesc(const char *xml, size_t len, spoor_gdb_reg *regs, size_t count,
                           size_t cap, unsigned *next_regnum);

/* Bounds on what a server may send. */
#define GDB_MAX_REGS 512              /* registers in one target description */
#define GDB_MAX_REG_BITS 1024         /* widest register accepted */
#define GDB_TDESC_MAX_BYTES (1 << 18) /* all documents of one description together */
#define GDB_TDESC_MAX_DOCS 16         /* target.xml and its includes */
#define GDB_TDESC_MAX_DEPTH 4         /* include nesting */
#define GDB_REPLY_MAX 16384           /* a reply after run-length expansion */

/* ---- target description XML (gdb_remote_tdesc.c) ---------------------------------------- */

typedef enum gdb_tdesc_kind {
    GDB_TDESC_END,     /* no more elements */
    GDB_TDESC_REG,     /* <reg name=... bitsize=... [regnum=...]/> */
    GDB_TDESC_INCLUDE, /* <xi:include href=.../> */
    GDB_TDESC_ERROR,   /* malformed XML or a <reg> without name/bitsize */
} gdb_tdesc_kind;

typedef struct gdb_tdesc_item {
    char name[16]; /* "" when the register's name does not fit (it is never looked up) */
    unsigned bitsize;
    long regnum; /* -1: not given (the next number) */
    char href[128];
} gdb_tdesc_item;

/* The next <reg> or <xi:include> of the document from *pos on (document order). */
gdb_tdesc_kind spoor_gdb_tdesc_next(const char *xml, size_t len, size_t *pos, gdb_tdesc_item *item);
/* Appends a <reg> (numbered *next_regnum unless it says regnum) to regs[0..*count); false for
 * a duplicate number or a full table. */
bool spoor_gdb_tdesc_add(spoor_gdb_reg *regs, size_t *count, size_t cap, const gdb_tdesc_item *item,
                         unsigned *next_regnum);
/* Sets each register's offset in the 'g' reply: registers in number order, whole bytes. */
void spoor_gdb_tdesc_layout(spoor_gdb_reg *regs, size_t count);

/* ---- replies (gdb_remote_reply.c) ---------------------------------------------------------- */

/* Expands run-length encoding in a received payload: marks[i] says that payload[i] was an
 * unescaped '*' on the wire (a literal '*' arrives escaped). Writes at most cap bytes plus a
 * NUL; returns the length, or -1 for a malformed run or one that does not fit. */
long spoor_gdb_expand_rle(const char *payload, size_t len, const uint8_t *marks, char *out,
                          size_t cap);

/* What qSupported answered. */
typedef struct gdb_supported {
    size_t packet_size; /* 0 when not given */
    bool xfer_features; /* qXfer:features:read+ */
    bool no_ack;        /* QStartNoAckMode+ */
} gdb_supported;
/* False when the reply is not a qSupported answer ("Exx", or a field that is not
 * name[+-?] or name=value). */
bool spoor_gdb_parse_supported(const char *reply, size_t len, gdb_supported *out);

/* A stop reply ("S05", "T05thread:1;...", "W00", "X09"): returns its letter and sets *signal
 * (the signal, or the exit status for W); 'O' (*signal untouched) for console output ("O" and
 * hex digits: not a stop, the stop reply follows it); 0 for anything else. */
char spoor_gdb_parse_stop_reply(const char *reply, size_t len, int *signal);

/* What a server answered to 'M' (GDB manual, "Packets": 'M addr,length:XX...' replies "OK" or
 * "E NN"; an empty reply means the packet is not supported). */
typedef enum gdb_write_reply {
    GDB_WRITE_OK,
    GDB_WRITE_ERROR,       /* "Exx" or "E.text" */
    GDB_WRITE_UNSUPPORTED, /* "" */
    GDB_WRITE_MALFORMED,   /* anything else */
} gdb_write_reply;
gdb_write_reply spoor_gdb_parse_write_reply(const char *reply, size_t len);

/* ---- registers (gdb_remote_regs.c) --------------------------------------------------------- */

/* Which registers of spoor_regs a server gave so far. */
typedef struct gdb_regs_seen {
    uint32_t core;   /* bit n: r[n]; bit 16: xpsr */
    uint32_t banked; /* bit 0 msp, 1 psp, 2 control, 3 msplim, 4 psplim */
    uint32_t s;      /* bit n: s[n] */
    bool fpscr;
    bool any_fp; /* the description has some FP register */
} gdb_regs_seen;

/* True when name is a register spoor_regs holds (so it is worth a 'p' packet). */
bool spoor_gdb_reg_wanted(const char *name);
/* True for s0-s31, d0-d15 and fpscr. */
bool spoor_gdb_reg_is_fp(const char *name);
/* Stores the value of register name (nbytes little-endian bytes) into out; false when spoor
 * does not hold such a register. */
bool spoor_gdb_reg_store(spoor_regs *out, gdb_regs_seen *seen, const char *name,
                         const uint8_t *bytes, size_t nbytes);
/* Sets out->have from what was seen, and missing to the groups not given ("" when none):
 * "msp/psp/control", "fpscr/s0-s31" (only when the description has FP registers). */
void spoor_gdb_regs_finish(spoor_regs *out, const gdb_regs_seen *seen, char *missing,
                           size_t missing_len);

#endif
