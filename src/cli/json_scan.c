/* spoor report's JSON scan (json_scan.h) on the one JSON reader of libspoor (util/json_read.h): the
 * reader's string and number items with the number of the object they are in. */
#include "json_scan.h"
#include "util/json_read.h"

#include <stdio.h>

#define MAX_DEPTH 64

struct scan {
    json_scan_fn fn;
    void *ctx;
    unsigned objects;
    unsigned in[MAX_DEPTH]; /* per open container: its object number, 0 for an array */
};

static const char *on_item(void *ctx, const spoor_json_item *it)
{
    struct scan *s = ctx;
    unsigned object = it->depth ? s->in[it->depth - 1] : 0;
    if (it->type == SPOOR_JSON_OBJECT || it->type == SPOOR_JSON_ARRAY)
        s->in[it->depth] = it->type == SPOOR_JSON_OBJECT ? ++s->objects : 0;
    else if ((it->type == SPOOR_JSON_STRING || it->type == SPOOR_JSON_NUMBER) && s->fn)
        s->fn(s->ctx, &(json_scan_value){it->key ? it->key : "", object,
                                         it->type == SPOOR_JSON_STRING, it->text});
    return NULL;
}

bool json_scan(const char *text, size_t len, json_scan_fn fn, void *ctx, char *error,
               size_t error_len)
{
    struct scan s = {.fn = fn, .ctx = ctx};
    spoor_json_error err;
    size_t at = 0;
    while (at < len &&
           (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r'))
        at++;
    if (at == len || text[at] != '{') {
        snprintf(error, error_len, "byte %zu: not a JSON object", at);
        return false;
    }
    if (spoor_json_read(text, len, MAX_DEPTH, on_item, &s, &err))
        return true;
    snprintf(error, error_len, "byte %zu: %s", err.offset, err.message);
    return false;
}
