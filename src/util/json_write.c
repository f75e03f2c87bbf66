#include "util/json_write.h"

#include <inttypes.h>

void json_init(json_out *j, outbuf *ob)
{
    j->ob = ob;
    j->depth = 0;
    j->has_items[0] = false;
}

static void item(json_out *j, const char *key)
{
    if (j->has_items[j->depth])
        ob_char(j->ob, ',');
    j->has_items[j->depth] = true;
    if (key) {
        ob_json_string(j->ob, key);
        ob_char(j->ob, ':');
    }
}

static void open_(json_out *j, const char *key, char c)
{
    item(j, key);
    ob_char(j->ob, c);
    if (j->depth + 1 < JSON_MAX_DEPTH)
        j->depth++;
    j->has_items[j->depth] = false;
}

static void close_(json_out *j, char c)
{
    ob_char(j->ob, c);
    if (j->depth)
        j->depth--;
}

void json_object_begin(json_out *j, const char *key)
{
    open_(j, key, '{');
}

void json_object_end(json_out *j)
{
    close_(j, '}');
}

void json_array_begin(json_out *j, const char *key)
{
    open_(j, key, '[');
}

void json_array_end(json_out *j)
{
    close_(j, ']');
}

void json_string(json_out *j, const char *key, const char *value)
{
    item(j, key);
    ob_json_string(j->ob, value);
}

void json_hex32(json_out *j, const char *key, uint32_t value)
{
    item(j, key);
    ob_char(j->ob, '"');
    ob_hex8(j->ob, value);
    ob_char(j->ob, '"');
}

void json_uint(json_out *j, const char *key, uint64_t value)
{
    item(j, key);
    ob_commit(j->ob, ob_put_u64(ob_reserve(j->ob, 20), value));
}

void json_int(json_out *j, const char *key, int64_t value)
{
    item(j, key);
    ob_printf(j->ob, "%" PRId64, value);
}

void json_fixed(json_out *j, const char *key, double value, int decimals)
{
    item(j, key);
    if (value != value || value > 1e300 || value < -1e300) /* NaN, infinities: not JSON */
        ob_str(j->ob, "null");
    else
        ob_printf(j->ob, "%.*f", decimals, value);
}

void json_bool(json_out *j, const char *key, bool value)
{
    item(j, key);
    ob_str(j->ob, value ? "true" : "false");
}

void json_null(json_out *j, const char *key)
{
    item(j, key);
    ob_str(j->ob, "null");
}

void json_raw(json_out *j, const char *key, const char *text, size_t len)
{
    item(j, key);
    ob_write(j->ob, text, len);
}

void json_finish(json_out *j)
{
    ob_char(j->ob, '\n');
    j->depth = 0;
    j->has_items[0] = false;
}
