/* A JSON document as a tree (json_tree.h), built from the reader's items. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_tree.h"
#include "util/grow.h"

struct builder {
    spoor_json_value *root;
    spoor_json_value **open; /* the containers being read, outermost first */
    size_t max_items;
    char message[64];
};

static char *copy(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = 0;
    }
    return c;
}

static const char *add(void *ctx, const spoor_json_item *it)
{
    struct builder *b = ctx;
    if (it->type == SPOOR_JSON_END)
        return NULL;
    if ((it->type == SPOOR_JSON_STRING && memchr(it->text, 0, it->len)) ||
        (it->key && memchr(it->key, 0, it->key_len)))
        return "\\u0000 in a string";
    spoor_json_value *v = b->root;
    if (it->depth) {
        spoor_json_value *in = b->open[it->depth - 1];
        if (in->n == b->max_items) {
            snprintf(b->message, sizeof b->message, "more than %zu items", b->max_items);
            return b->message;
        }
        size_t cap = in->cap;
        if (spoor_grow((void **)&in->items, &in->cap, in->n + 1, sizeof *in->items))
            return "out of memory";
        if (in->type == SPOOR_JSON_OBJECT &&
            spoor_grow((void **)&in->keys, &cap, in->n + 1, sizeof *in->keys))
            return "out of memory"; /* keys grow with items: the same capacities */
        v = &in->items[in->n];
        memset(v, 0, sizeof *v);
        if (in->type == SPOOR_JSON_OBJECT && !(in->keys[in->n] = copy(it->key, it->key_len)))
            return "out of memory";
        in->n++;
    }
    v->type = it->type;
    if ((it->type == SPOOR_JSON_STRING || it->type == SPOOR_JSON_NUMBER) &&
        !(v->text = copy(it->text, it->len)))
        return "out of memory";
    if (it->type == SPOOR_JSON_OBJECT || it->type == SPOOR_JSON_ARRAY)
        b->open[it->depth] = v;
    return NULL;
}

bool spoor_json_parse(const char *text, size_t len, unsigned max_depth, size_t max_items,
                      spoor_json_value *out, spoor_json_error *err)
{
    memset(out, 0, sizeof *out);
    struct builder b = {.root = out, .max_items = max_items};
    if (!(b.open = calloc(max_depth + 1, sizeof *b.open))) {
        snprintf(err->message, sizeof err->message, "out of memory");
        err->offset = 0;
        return false;
    }
    bool ok = spoor_json_read(text, len, max_depth, add, &b, err);
    free(b.open);
    if (!ok)
        spoor_json_value_free(out);
    return ok;
}

void spoor_json_value_free(spoor_json_value *v)
{
    free(v->text);
    for (size_t i = 0; i < v->n; i++) {
        spoor_json_value_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

const spoor_json_value *spoor_json_member(const spoor_json_value *o, const char *key)
{
    if (o->type != SPOOR_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key))
            return &o->items[i];
    return NULL;
}

bool spoor_json_integer(const spoor_json_value *v, long long *out)
{
    if (!v || v->type != SPOOR_JSON_NUMBER)
        return false;
    const char *p = v->text + (v->text[0] == '-');
    size_t digits = strspn(p, "0123456789");
    if (!digits || digits > 18 || p[digits])
        return false;
    long long n = 0;
    for (size_t i = 0; i < digits; i++)
        n = n * 10 + (p[i] - '0');
    *out = v->text[0] == '-' ? -n : n;
    return true;
}
