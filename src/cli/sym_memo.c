/* spoor sym's memo and forms: growing, emptying and the rare cases (sym_memo.h). */
#include <stdlib.h>
#include <string.h>

#include "sym_memo.h"

int arena_room(struct arena *a, size_t len, size_t first)
{
    if (a->used + len + MEMO_PAD <= a->cap)
        return 1;
    if (a->cap >= MEMO_MAX_TEXT)
        return 0;
    size_t cap = a->cap ? 2 * a->cap : first;
    char *t = realloc(a->text, cap);
    if (!t)
        return -1;
    a->text = t;
    a->cap = cap;
    return 1;
}

static struct memo_slot memo_none; /* the slot of a memo that is off: always empty */

void memo_init(struct memo *m, bool on)
{
    memset(m, 0, sizeof *m);
    m->slot = on ? calloc(1u << MEMO_BITS, sizeof *m->slot) : NULL;
    m->mask = m->slot ? (1u << MEMO_BITS) - 1 : 0;
    if (!m->slot)
        m->slot = &memo_none;
    m->half = m->mask ? (m->mask + 1) / 2 : 0; /* 0: off (not on, or no memory) */
}

void memo_stop(struct memo *m)
{
    if (m->slot != &memo_none)
        free(m->slot);
    free(m->a.text);
    memo_init(m, false);
}

bool memo_room(struct memo *m, size_t len, struct memo_slot **at)
{
    int room = arena_room(&m->a, len, MEMO_MAX_TEXT / 8);
    if (room < 0) {
        memo_stop(m);
        return false;
    }
    if (!room || m->count >= m->half) { /* full, or probes would get long: start again */
        memset(m->slot, 0, ((size_t)m->mask + 1) * sizeof *m->slot);
        m->a.used = m->count = 0;
        *at = NULL;
    }
    return true;
}

void memo_keep_slow(struct memo *m, uint64_t key, struct memo_slot *at, const char *text,
                    size_t len)
{
    if (memo_is_off(m) || !key || len > MEMO_MAX_ANSWER || !memo_room(m, len, &at))
        return;
    struct memo_slot *s = at && !at->key ? at : memo_find(m, key);
    memcpy(m->a.text + m->a.used, text, len);
    m->count += !s->key;
    s->key = key;
    s->len = (uint32_t)len;
    s->off = (uint32_t)m->a.used;
    m->a.used += len;
}

void forms_stop(struct forms *f)
{
    free(f->slot);
    free(f->a.text);
    memset(f, 0, sizeof *f);
}

void form_keep(struct forms *f, struct form_slot *s, const uint64_t id[2], const char *text,
               size_t len, size_t num, size_t end, size_t lnum, size_t lend)
{
    if (len > MEMO_MAX_ANSWER - 18)
        return;
    int room = f->count < (1u << FORM_BITS) / 2 ? arena_room(&f->a, len, MEMO_MAX_TEXT / 32) : 0;
    if (room < 0) {
        forms_stop(f);
        return;
    }
    if (!room) { /* full: start again */
        memset(f->slot, 0, (sizeof *f->slot) << FORM_BITS);
        f->a.used = f->count = 0;
        s = form_find(f->slot, id);
    }
    memcpy(f->a.text + f->a.used, text, len);
    f->count++;
    *s = (struct form_slot){{id[0], id[1]}, (uint32_t)f->a.used, (uint16_t)len, (uint16_t)num,
                            (uint16_t)end,  (uint16_t)lnum,      (uint16_t)lend};
    f->a.used += len;
}
