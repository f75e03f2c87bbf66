/* libFuzzer harness: the one JSON reader (util/json_read.h) and its tree (base/json_tree.h). Any
 * input is read or refused with a message, never a crash or a leak. Checked: the items are
 * balanced (every container ends, at its own depth; keys only inside objects); the tree accepts
 * only what the reader accepts (less \u0000 and more than 64 items); and a tree written back as
 * JSON reads again into the same tree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_tree.h"
#include "util/json_read.h"

#define DEPTH 8

struct check {
    spoor_json_type open[DEPTH + 1];
    unsigned n;
    bool nul;
};

static const char *check_item(void *ctx, const spoor_json_item *it)
{
    struct check *c = ctx;
    if (it->type == SPOOR_JSON_END) {
        if (!c->n || it->depth != c->n - 1 || it->key)
            abort();
        c->n--;
        return NULL;
    }
    if (it->depth != c->n || (it->key != NULL) != (c->n && c->open[c->n - 1] == SPOOR_JSON_OBJECT))
        abort();
    if (it->text[it->len] != 0)
        abort();
    c->nul |= (it->type == SPOOR_JSON_STRING && memchr(it->text, 0, it->len)) ||
              (it->key && memchr(it->key, 0, it->key_len));
    if (it->type == SPOOR_JSON_OBJECT || it->type == SPOOR_JSON_ARRAY)
        c->open[c->n++] = it->type;
    return NULL;
}

struct out {
    char *s;
    size_t n, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->n + n + 1 > o->cap) {
        o->cap = (o->n + n + 1) * 2;
        if (!(o->s = realloc(o->s, o->cap)))
            abort();
    }
    memcpy(o->s + o->n, s, n);
    o->n += n;
}

static void put_string(struct out *o, const char *s)
{
    put(o, "\"", 1);
    for (; *s; s++) {
        char esc[8];
        if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\') {
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned char)*s);
            put(o, esc, 6);
        } else {
            put(o, s, 1);
        }
    }
    put(o, "\"", 1);
}

static void write_value(struct out *o, const spoor_json_value *v)
{
    static const char *const words[] = {"null", "false", "true"};
    switch (v->type) {
    case SPOOR_JSON_NULL:
    case SPOOR_JSON_FALSE:
    case SPOOR_JSON_TRUE: put(o, words[v->type], strlen(words[v->type])); break;
    case SPOOR_JSON_NUMBER: put(o, v->text, strlen(v->text)); break;
    case SPOOR_JSON_STRING: put_string(o, v->text); break;
    default:
        put(o, v->type == SPOOR_JSON_OBJECT ? "{" : "[", 1);
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                put(o, ",", 1);
            if (v->type == SPOOR_JSON_OBJECT) {
                put_string(o, v->keys[i]);
                put(o, ":", 1);
            }
            write_value(o, &v->items[i]);
        }
        put(o, v->type == SPOOR_JSON_OBJECT ? "}" : "]", 1);
    }
}

static bool same(const spoor_json_value *a, const spoor_json_value *b)
{
    if (a->type != b->type || a->n != b->n || (a->text == NULL) != (b->text == NULL) ||
        (a->text && strcmp(a->text, b->text)))
        return false;
    for (size_t i = 0; i < a->n; i++)
        if ((a->keys && strcmp(a->keys[i], b->keys[i])) || !same(&a->items[i], &b->items[i]))
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct check c = {{0}, 0, false};
    spoor_json_error e1, e2;
    bool read = spoor_json_read(text, size, DEPTH, check_item, &c, &e1);
    if (read ? c.n != 0 : !e1.message[0] || e1.offset > size)
        abort();
    spoor_json_value v;
    bool parsed = spoor_json_parse(text, size, DEPTH, 64, &v, &e2);
    if (parsed && (!read || c.nul))
        abort();
    if (!parsed)
        return 0;
    struct out o = {0};
    write_value(&o, &v);
    spoor_json_value again;
    if (!spoor_json_parse(o.s, o.n, DEPTH, 64, &again, &e2) || !same(&v, &again))
        abort();
    spoor_json_value_free(&again);
    spoor_json_value_free(&v);
    free(o.s);
    return 0;
}
