/* A JSON document as a tree, read with the one reader (util/json_read.h), for the libspoor modules
 * that look members up by key (triage's merge). Sizes bounded by the caller. Internal. */
#ifndef SPOOR_JSON_TREE_H
#define SPOOR_JSON_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/json_read.h"

typedef struct spoor_json_value {
    spoor_json_type type;           /* never SPOOR_JSON_END */
    char *text;                     /* STRING: decoded, NUL-terminated; NUMBER: as written */
    struct spoor_json_value *items; /* ARRAY, OBJECT */
    char **keys;                    /* OBJECT */
    size_t n, cap;
} spoor_json_value;

/* Reads text[0..len) into *out: containers nested at most max_depth deep, at most max_items in
 * each; a string or key holding \u0000 is refused. False with err set (*out empty then). */
bool spoor_json_parse(const char *text, size_t len, unsigned max_depth, size_t max_items,
                      spoor_json_value *out, spoor_json_error *err);
void spoor_json_value_free(spoor_json_value *v);

/* The first member of object o with this key, or NULL. */
const spoor_json_value *spoor_json_member(const spoor_json_value *o, const char *key);

/* A NUMBER written as an integer of at most 18 digits into *out; false for any other value. */
bool spoor_json_integer(const spoor_json_value *v, long long *out);

#endif
