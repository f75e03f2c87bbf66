/* Fleet triage: many crash dumps from many firmware builds grouped into the few bugs they are.
 *
 * A dump's signature is what stays the same when the same bug hits another build: the reason
 * (fault, assert, watchdog, ...), the fault type and its status bits, an assert's file (base
 * name) and line, and the names of the innermost K application frames: frames of the target
 * library (spoor_* functions, code from target/src), of the C library and compiler runtime
 * (code without source, newlib, libgcc, __names) and unnamed code are left out, and no address
 * or offset is part of it. Dumps with one signature form a bucket: how many, from which builds
 * (build-ids), first and last seen, one example dump.
 *
 * Each dump finds its own ELF by build-id (spoor/elf_dir.h). Dumps are read and signed in
 * parallel; a dump that cannot be read, has no build-id or no ELF is listed with its error,
 * never fatal. The JSON Lines output (bucket lines, per-dump lines) can be read back and merged
 * (spoor_triage_merge_text): merging is associative and commutative, so shards of a fleet
 * signed on many machines merge to what one run over all of them gives. */
#ifndef SPOOR_TRIAGE_H
#define SPOOR_TRIAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/elf_dir.h"

#define SPOOR_TRIAGE_MAX_K 32
#define SPOOR_TRIAGE_SHARD_VERSION 1 /* of the --json output merged back (docs/triage.md) */
#define SPOOR_TRIAGE_DEFAULT_K 5

/* A signature: its parts and, joined, its text and id (16 hex digits of its 64-bit FNV-1a
 * hash). Strings are owned (spoor_triage_sig_clear); fault and assert_at are NULL when they do
 * not apply. */
typedef struct spoor_triage_sig {
    char *reason; /* spoor_dump_reason_name(), "unknown" without a reason record */
    char *fault;  /* "UsageFault", ...; NULL unless the dump is a fault */
    char **bits;  /* status bit names: "INVSTATE", "FORCED" */
    size_t nbits;
    char *assert_at; /* "crash.c:412" */
    char **frames;   /* innermost first */
    size_t nframes;
    char *text; /* "fault UsageFault INVSTATE | dispatch_tick_callback < timer_tick" */
    char id[17];
} spoor_triage_sig;

/* Signs one dump with its ELF: at most k application frames (0: SPOOR_TRIAGE_DEFAULT_K, at
 * most SPOOR_TRIAGE_MAX_K). Takes the dump over (it is freed here); name names it in errors.
 * False with spoor_last_error() set: "NAME: no registers in the dump", out of memory. Not
 * thread-safe for one elf (its lazily built tables): spoor_triage_add_files gives each thread
 * a handle of its own. */
bool spoor_triage_sign(const spoor_elf *elf, spoor_dump *dump, const char *name, unsigned k,
                       spoor_triage_sig *out);
void spoor_triage_sig_clear(spoor_triage_sig *sig);
/* Sets text and id from the parts (the one place the text is made). False when out of memory. */
bool spoor_triage_sig_finish(spoor_triage_sig *sig);

/* One firmware build a bucket's dumps come from. */
typedef struct spoor_triage_version {
    char *build_id; /* lowercase hex; "" for a dump without one */
    char *version;  /* a version string the dump carries, NULL when none */
    uint64_t count;
} spoor_triage_version;

typedef struct spoor_triage_bucket {
    spoor_triage_sig sig;
    uint64_t count;
    spoor_triage_version *versions; /* sorted by build_id */
    size_t nversions;
    int64_t first, last; /* Unix seconds: the dump's own time, else the file's mtime */
    char *example;       /* the earliest dump (equal times: the smallest path) */
} spoor_triage_bucket;

/* One input file: signed into a bucket, or not (error set). */
typedef struct spoor_triage_dump {
    char *path;
    char *error;     /* NULL when signed */
    char bucket[17]; /* the bucket's id */
    char *build_id;  /* lowercase hex, NULL unknown */
    int64_t time;
} spoor_triage_dump;

typedef struct spoor_triage spoor_triage;

/* An empty triage; elf_dir (borrowed, may be NULL for merging only) gives each dump its ELF.
 * k: frames per signature (0: SPOOR_TRIAGE_DEFAULT_K). */
spoor_triage *spoor_triage_new(spoor_elf_dir *elf_dir, unsigned k);
void spoor_triage_free(spoor_triage *t);

/* Every regular file at path (a folder read recursively, sorted; or one file) appended to
 * *paths (*n entries, malloc'd, free each and the array); a folder that cannot be read or lies
 * deeper than 32 levels is skipped with a warning (spoor_triage_warnings). False with the
 * error set when path cannot be read. */
bool spoor_triage_list_files(spoor_triage *t, const char *path, char ***paths, size_t *n);

/* Reads and signs the files on threads workers (0: one per online CPU). An ELF is opened once
 * (elf_dir) and shared; a thread that needs it while another signs with it gets a copy of it
 * (opened from the same file, kept for the run). A file that cannot be signed becomes a dump
 * with its error. False only when out of memory or without an elf_dir. */
bool spoor_triage_add_files(spoor_triage *t, char *const *paths, size_t n, unsigned threads);

/* Adds the JSON Lines a triage printed (name for errors): a shard line first
 * ({"spoor_triage":1,"shards":[ID,...]}: the format's version and the ids of the shards the
 * lines come from), then bucket lines, which add to the buckets, and per-dump and error lines,
 * which add to the dumps; several such runs may follow one another. False with "NAME: line N:
 * ..." on a line that is not such an object, a line before any shard line, another format
 * version, a key twice in an object, a count above 2^53 (or counts adding up to more); "NAME:
 * bucket ID twice in one shard"; "NAME: shard ID is merged twice (from A and B)" when a shard
 * comes again (one file given twice, or in two merged outputs). */
bool spoor_triage_merge_text(spoor_triage *t, const char *text, size_t len, const char *name);

/* The same for a file's contents: a regular file of at most 256 MiB (the errors of
 * spoor_dump_read_file: "FILE: cannot open: ...", "FILE: not a regular file (a FIFO)", ...). */
bool spoor_triage_merge_file(spoor_triage *t, const char *path);

/* The ids of the shards the triage holds (sorted; into ids when not NULL, each valid until the
 * triage changes): one for the dumps it signed (of their paths, times and buckets or errors),
 * and those of the shard lines merged. The first line of --json output names them. */
size_t spoor_triage_shards(spoor_triage *t, const char *ids[]);

/* The buckets, by count (most first), then id. Valid until the triage changes. */
size_t spoor_triage_buckets(spoor_triage *t, const spoor_triage_bucket **out);
/* The dumps, by path (each path once: of lines for one path, the first by bucket, error). */
size_t spoor_triage_dumps(spoor_triage *t, const spoor_triage_dump **out);

/* What the run could not read, one line each, in the order found: the ELF folder's
 * (spoor_elf_dir_warnings), folders of dumps skipped, and the warnings of every ELF that
 * signed dumps (spoor_elf_warnings: a part it could not read can change signatures). */
size_t spoor_triage_warnings(spoor_triage *t, const char *const **list);

/* "2024-05-01T12:00:00Z" (21 bytes) / back: false when s is not that form. */
char *spoor_triage_time_text(int64_t t, char out[32]);
bool spoor_triage_time_parse(const char *s, int64_t *t);

/* The JSON Lines output spoor_triage_merge_text reads back (docs/triage.md): the shard line,
 * a line per bucket, then a line per dump that could not be signed (per_dump: per dump), in
 * memory the caller frees (*len: its length). NULL with the error set when memory runs out. */
char *spoor_triage_json(spoor_triage *t, bool per_dump, size_t *len);
/* One bucket as the JSON object of its line (without the newline), the same way. */
char *spoor_triage_bucket_json(const spoor_triage_bucket *b, size_t *len);

#endif
