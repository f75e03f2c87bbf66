/* spoor sym's memo of the answers printed and the forms of the answers (private to
 * cmd_sym.c and sym_memo.c): the tables, the arena their text is kept in, and the inline parts
 * the per-address loop runs; growing, emptying and the rare cases are in sym_memo.c. */
#ifndef SPOOR_SYM_MEMO_H
#define SPOOR_SYM_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/outbuf.h"

/* Answers already printed, by the text of the address: bulk input repeats addresses (PCs of a
 * trace, random samples over a firmware of a few thousand lines), and copying an answer's text
 * costs a fraction of looking the address up and formatting it. Keyed by the token's hex digits
 * after its 0x (1 to 8 bytes, read as one little-endian word, the bytes past them zero), so that
 * a repeated address is found without converting it: a key is kept only after its digits were
 * read as a number, so a key found stands for one valid address ("0x1a" and "0x01a" are two keys
 * of one address). Open addressing, probed linearly: a slot holds a key and its answer at
 * text[off] (len bytes). The text is kept in one arena, emptied with every slot when it or the
 * slots are full (half of them used). Off once the ELF has a warning (an answer may then depend on
 * the order units are read in, and warnings must come before the answers they affect). */
#define MEMO_BITS 17
#define MEMO_MAX_ANSWER 1024      /* longer answers are not kept */
#define MEMO_MAX_TEXT (64u << 20) /* arena limit */
#define MEMO_PAD 96               /* copies go by 16 bytes, up to 96 at once: slack after it */

struct memo_slot {
    uint64_t key; /* 0: none (a key has at least one digit, never a zero byte) */
    uint32_t len, off;
};

/* Where the memo and the forms keep their text: grown by doubling up to MEMO_MAX_TEXT, with
 * MEMO_PAD bytes that may be read after the text used. */
struct arena {
    char *text;
    size_t used, cap;
};

/* Room in a for len more bytes: 1 when there is (a grown when needed, the first time to first
 * bytes: enough for most runs, not touched until used), 0 when a is full (the caller empties
 * it), -1 without memory. */
int arena_room(struct arena *a, size_t len, size_t first);

struct memo {
    uint32_t mask;          /* slots - 1 */
    uint32_t count;         /* slots used */
    uint32_t half;          /* half the slots: emptied when count reaches it (0: off) */
    struct memo_slot *slot; /* off: one empty slot */
    struct arena a;
};

/* Whether the memo is off: no answer kept, none given again. */
static inline bool memo_is_off(const struct memo *m)
{
    return m->half == 0;
}

_Static_assert(sizeof(struct memo_slot) == 16, "memo_at counts slots of 16 bytes");
#define MEMO_MUL 0x9e3779b97f4a7c15u /* 2^64 / the golden ratio, odd */

/* Where a lookup of key starts: the byte offset of its slot (16 bytes each) in a table of
 * mask16 / 16 + 1 slots, from the top bits of key * mul (mul: MEMO_MUL). The last digits, the
 * high bytes of the key, move the top bits too (mul is odd: no two bytes give one product). */
static inline size_t memo_at(uint64_t key, uint64_t mul, size_t mask16)
{
    return (size_t)((key * mul) >> (64 - 4 - MEMO_BITS)) & mask16;
}

/* The slot of key, or the empty one where it would go. */
static inline struct memo_slot *memo_find(const struct memo *m, uint64_t key)
{
    size_t mask16 = (size_t)m->mask * sizeof *m->slot;
    for (size_t at = memo_at(key, MEMO_MUL, mask16);; at = (at + sizeof *m->slot) & mask16) {
        struct memo_slot *s = (struct memo_slot *)((char *)m->slot + at);
        if (s->key == key || !s->key)
            return s;
    }
}

/* 32 bytes, copied as one: one AVX move in a function compiled for AVX, two SSE2 moves (or
 * what the target has) elsewhere. */
typedef char memo_v32 __attribute__((vector_size(32), aligned(1), may_alias));

/* Copies a kept answer of len bytes from src to o, by 32 bytes: up to 31 bytes past len are
 * written too (MEMO_PAD: slack after each). */
static inline __attribute__((always_inline)) void memo_copy(char *o, const char *src, size_t len)
{
    *(memo_v32 *)o = *(const memo_v32 *)src;
    *(memo_v32 *)(o + 32) = *(const memo_v32 *)(src + 32);
    if (len > 64) /* the loop's start set up only here */
        for (size_t i = 64; i < len; i += 32)
            *(memo_v32 *)(o + i) = *(const memo_v32 *)(src + i);
}

/* memo_copy for the answers of repeated addresses: the first 96 bytes at once (most answers are
 * 64 to 96 bytes): up to 95 bytes past len are written too. */
static inline __attribute__((always_inline)) void memo_copy_answer(char *o, const char *src,
                                                                   size_t len)
{
    *(memo_v32 *)o = *(const memo_v32 *)src;
    *(memo_v32 *)(o + 32) = *(const memo_v32 *)(src + 32);
    *(memo_v32 *)(o + 64) = *(const memo_v32 *)(src + 64);
    if (len > 96) /* the loop's start set up only here */
        for (size_t i = 96; i < len; i += 32)
            *(memo_v32 *)(o + i) = *(const memo_v32 *)(src + i);
}

/* Sets m up: on, a table of 1 << MEMO_BITS slots (off, or without memory: one empty slot). */
void memo_init(struct memo *m, bool on);

/* No more answers kept, and none of those kept given again. */
void memo_stop(struct memo *m);

/* Makes room in the memo for an answer of len bytes: grows its text or, when full, empties it
 * (*at then NULL). False when the memo stopped (no memory). */
bool memo_room(struct memo *m, size_t len, struct memo_slot **at);

/* memo_keep in every case: the memo off, key 0 (not kept), an answer too long, the memo to be
 * grown or emptied first, at NULL or not empty. */
void memo_keep_slow(struct memo *m, uint64_t key, struct memo_slot *at, const char *text,
                    size_t len);

/* Keeps the answer for key, the len bytes at text (copied); key 0: not kept. at: the slot a
 * lookup of key found empty (the memo unchanged since; never NULL with a key), or NULL.
 * padded: an answer made from a form (at most MEMO_MAX_ANSWER bytes: see form_keep) and
 * followed by MEMO_PAD bytes that may be read: the common case, done here, the answer copied as
 * memo_copy_answer copies. */
static inline __attribute__((always_inline)) void memo_keep(struct memo *m, uint64_t key,
                                                            struct memo_slot *at, const char *text,
                                                            size_t len, bool padded)
{
    if (!padded || !key || m->a.used + len + MEMO_PAD > m->a.cap || m->count >= m->half) {
        memo_keep_slow(m, key, at, text, len);
        return;
    }
    memo_copy_answer(m->a.text + m->a.used, text, len);
    m->count++;
    at->key = key;
    at->len = (uint32_t)len;
    at->off = (uint32_t)m->a.used;
    m->a.used += len;
}

/* The forms of the answers printed, by spoor_elf_answer_id: addresses with one id get one
 * answer but for the address, the function offset and the line in it, so that the answer of a
 * new address whose id was seen is its form's text with the three numbers written in, not looked
 * up in full and formatted again. A form is the text of the first answer of its id with where
 * the address (its 8 hex digits after 0x), the offset's digits and the line's are (in this
 * order; an empty place: the answer has no offset, or no line). Open addressing like the memo,
 * emptied when full; off with the memo, and with -r (the offset there is not the address minus
 * one base). */
#define FORM_BITS 16
#define NUMBER_WORDS (1u << 13) /* numbers kept as text by put_number: lines, offsets */

struct form_slot {  /* 32 bytes: the table's pages are touched at random */
    uint64_t id[2]; /* spoor_elf_answer_id's; id[0] 0: none (it names a function or a line) */
    uint32_t off;   /* the text, at text[off]; its address's "0x%08x" at c->addr_at */
    uint16_t len;   /* its bytes */
    uint16_t num;   /* where the offset's digits are (num == end: none) */
    uint16_t end;   /* where they end */
    uint16_t lnum;  /* where the line's digits are (lnum == lend: none) */
    uint16_t lend;  /* where they end */
};

struct forms {
    struct form_slot *slot; /* NULL: off */
    uint32_t count;
    struct arena a;
};

/* No more forms kept, and none of those kept used again. */
void forms_stop(struct forms *f);

static inline struct form_slot *form_find(struct form_slot *slot, const uint64_t id[2])
{
    const uint32_t mask = (1u << FORM_BITS) - 1;
    uint64_t h = (id[0] ^ id[1] >> 4) * MEMO_MUL;
    for (uint32_t i = (uint32_t)(h >> (64 - FORM_BITS));; i++) {
        struct form_slot *s = &slot[i & mask];
        if ((s->id[0] == id[0] && s->id[1] == id[1]) || !s->id[0])
            return s;
    }
}

/* Keeps the form of id (its slot s, empty): the answer of len bytes at text, its offset's digits
 * at [num, end) and its line's at [lnum, lend) (each empty: none). Answers made from a form are at
 * most MEMO_MAX_ANSWER bytes (memo_keep counts on it): its numbers grow by 18 digits at most (the
 * offset's to 10, the line's to 10). */
void form_keep(struct forms *f, struct form_slot *s, const uint64_t id[2], const char *text,
               size_t len, size_t num, size_t end, size_t lnum, size_t lend);

#endif
