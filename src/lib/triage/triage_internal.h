/* Private to src/lib/triage: one line of a triage's JSON Lines output, read back for merging
 * (triage_json.c), handed to the accumulator (triage.c). */
#ifndef SPOOR_TRIAGE_INTERNAL_H
#define SPOOR_TRIAGE_INTERNAL_H

#include "spoor/error.h"
#include "spoor/triage.h"

enum triage_line_kind { TRIAGE_LINE_BUCKET, TRIAGE_LINE_DUMP };

struct triage_line {
    enum triage_line_kind kind;
    spoor_triage_bucket bucket; /* TRIAGE_LINE_BUCKET (owned) */
    spoor_triage_dump dump;     /* TRIAGE_LINE_DUMP (owned) */
};

/* Parses one line (len bytes, no newline) into *out. False with the error set ("line N: ...",
 * the caller adds the name); nothing to free then. */
bool spoor_triage_line_parse(const char *text, size_t len, struct triage_line *out);
void spoor_triage_bucket_clear(spoor_triage_bucket *b);
void spoor_triage_dump_clear(spoor_triage_dump *d);

#endif
