/* Which format a dump file is in, and reading it in that format (spoor/dump_formats.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/set_error.h"
#include "spoor/dump_formats.h"

#include "base/byteorder.h"
#include "base/input_file.h"
#include "snapshot/dump_internal.h"

static const struct {
    const char *name;
    spoor_dump_format format;
} formats[] = {
    {"auto", SPOOR_DUMP_FORMAT_AUTO},        {"spoor", SPOOR_DUMP_FORMAT_SPOOR},
    {"zephyr", SPOOR_DUMP_FORMAT_ZEPHYR},    {"elfcore", SPOOR_DUMP_FORMAT_ELFCORE},
    {"probe-rs", SPOOR_DUMP_FORMAT_PROBERS},
};

bool spoor_dump_format_parse(const char *name, spoor_dump_format *out)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (!strcmp(name, formats[i].name)) {
            *out = formats[i].format;
            return true;
        }
    spoor_set_error(SPOOR_ERR_ARGUMENT,
                    "--format: unknown format '%s' (known: auto, spoor, zephyr, elfcore, probe-rs)",
                    name);
    return false;
}

static bool contains(const uint8_t *b, size_t len, const char *what)
{
    size_t n = strlen(what);
    for (size_t i = 0; i + n <= len; i++)
        if (b[i] == (uint8_t)what[0] && !memcmp(b + i, what, n))
            return true;
    return false;
}

/* probe-rs's CoreDump as rmp-serde writes it (dump_probers.c): a MessagePack map (fixmap or
 * map16) whose first key is one of the struct's field names ("registers" in probe-rs's own
 * files, the struct's first field). */
static bool probers_map(const uint8_t *b, size_t len)
{
    static const char *const fields[] = {"registers",
                                         "data",
                                         "instruction_set",
                                         "supports_native_64bit_access",
                                         "core_type",
                                         "fpu_support",
                                         "floating_point_register_count"};
    size_t key = len && b[0] >= 0x80 && b[0] <= 0x8f ? 1 : len >= 3 && b[0] == 0xde ? 3 : 0;
    if (!key || key >= len || (b[key] & 0xe0) != 0xa0)
        return false;
    size_t n = b[key] & 0x1fu;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strlen(fields[i]) == n && key + 1 + n <= len && !memcmp(b + key + 1, fields[i], n))
            return true;
    return false;
}

spoor_dump_format spoor_dump_format_detect(const uint8_t *b, size_t len)
{
    if (len >= 4 && spoor_le32(b) == SPOOR_DUMP_MAGIC)
        return SPOOR_DUMP_FORMAT_SPOOR;
    /* Zephyr's binary ("ZE", header version 1 or 2) and flash image ("CD", version 1). */
    if (len >= 4 && b[0] == 'Z' && b[1] == 'E' && spoor_le16(b + 2) >= 1 && spoor_le16(b + 2) <= 2)
        return SPOOR_DUMP_FORMAT_ZEPHYR;
    if (len >= 4 && b[0] == 'C' && b[1] == 'D' && spoor_le16(b + 2) == 1)
        return SPOOR_DUMP_FORMAT_ZEPHYR;
    if (len >= 18 && !memcmp(b, "\177ELF", 4) && spoor_le16(b + 16) == 4 /* ET_CORE */)
        return SPOOR_DUMP_FORMAT_ELFCORE;
    if (probers_map(b, len))
        return SPOOR_DUMP_FORMAT_PROBERS;
    if (contains(b, len, "#CD:BEGIN#"))
        return SPOOR_DUMP_FORMAT_ZEPHYR;
    return SPOOR_DUMP_FORMAT_AUTO;
}

spoor_dump *spoor_dump_parse_as(const void *bytes, size_t len, spoor_dump_format format)
{
    if (format == SPOOR_DUMP_FORMAT_AUTO)
        format = spoor_dump_format_detect(bytes, len);
    if (format == SPOOR_DUMP_FORMAT_ZEPHYR)
        return spoor_zephyr_dump_parse(bytes, len);
    if (format == SPOOR_DUMP_FORMAT_ELFCORE)
        return spoor_elfcore_dump_parse(bytes, len);
    if (format == SPOOR_DUMP_FORMAT_PROBERS)
        return spoor_probers_dump_parse(bytes, len);
    return spoor_dump_parse(bytes, len);
}

spoor_dump *spoor_dump_load_as(const char *path, spoor_dump_format format)
{
    /* An ELF core is mapped, not read: gdb's gcore of a target with much RAM is larger than
     * spoor's bound on files read whole, and the segments cost only the pages read. */
    struct stat st;
    int fd = spoor_input_open(path, SPOOR_INPUT_REGULAR, &st);
    if (fd < 0)
        return NULL;
    uint8_t head[18];
    bool core = format == SPOOR_DUMP_FORMAT_ELFCORE ||
                (format == SPOOR_DUMP_FORMAT_AUTO &&
                 pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
                 spoor_dump_format_detect(head, sizeof head) == SPOOR_DUMP_FORMAT_ELFCORE);
    if (core && st.st_size > 0) {
        spoor_dump *d = spoor_elfcore_dump_map(fd, (size_t)st.st_size, path);
        close(fd);
        return d;
    }
    close(fd);
    uint8_t *data;
    size_t size;
    if (!spoor_dump_read_file(path, &data, &size))
        return NULL;
    spoor_dump *d = spoor_dump_parse_as(data, size, format);
    free(data);
    return d;
}
