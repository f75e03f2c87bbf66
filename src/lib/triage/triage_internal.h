/* Private to src/lib/triage: one line of a triage's JSON Lines output, read back for merging
 * (triage_json.c), handed to the accumulator (triage.c); the ELF handles of the signing
 * threads (triage_handles.c). */
#ifndef SPOOR_TRIAGE_INTERNAL_H
#define SPOOR_TRIAGE_INTERNAL_H

#include "spoor/error.h"
#include "spoor/triage.h"

enum triage_line_kind { TRIAGE_LINE_BUCKET, TRIAGE_LINE_DUMP, TRIAGE_LINE_SHARD };

/* The version of the shard format (docs/triage.md): the first line of every --json output. */
#define TRIAGE_SHARD_VERSION SPOOR_TRIAGE_SHARD_VERSION
/* The largest count a bucket may reach: JSON numbers are exact (in every reader) up to 2^53. */
#define TRIAGE_MAX_COUNT (1ull << 53)

struct triage_line {
    enum triage_line_kind kind;
    spoor_triage_bucket bucket; /* TRIAGE_LINE_BUCKET (owned) */
    spoor_triage_dump dump;     /* TRIAGE_LINE_DUMP (owned) */
    char (*shards)[17];         /* TRIAGE_LINE_SHARD: the shard ids (owned) */
    size_t nshards;
};

/* FNV-1a 64 of n bytes, from h (TRIAGE_FNV_START to begin). */
#define TRIAGE_FNV_START 0xcbf29ce484222325ull
uint64_t spoor_triage_fnv(uint64_t h, const void *data, size_t n);

/* Parses one line (len bytes, no newline) into *out. False with the error set ("line N: ...",
 * the caller adds the name); nothing to free then. */
bool spoor_triage_line_parse(const char *text, size_t len, struct triage_line *out);
/* Handles of the ELFs of one signing run, one thread at a time each (triage_handles.c): take
 * a handle of the ELF folder's shared one that no other thread holds (NULL without memory),
 * sign with it, give it back. Copies are closed by spoor_triage_handles_free. */
struct triage_handles;
struct triage_handles *spoor_triage_handles_new(void);
/* seen (may be NULL) is shown every handle (the shared ones and the copies) before they go. */
void spoor_triage_handles_free(struct triage_handles *h,
                               void (*seen)(const spoor_elf *elf, void *ctx), void *ctx);
spoor_elf *spoor_triage_handle_take(struct triage_handles *h, spoor_elf *shared);
void spoor_triage_handle_give(struct triage_handles *h, spoor_elf *shared, spoor_elf *handle);

void spoor_triage_bucket_clear(spoor_triage_bucket *b);
void spoor_triage_dump_clear(spoor_triage_dump *d);

#endif
