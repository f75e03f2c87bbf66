/* The example firmware's ELFs (the .elf files in SPOOR_FIRMWARE_DIR/examples), one after the
 * other, for the unit tests that check something on every one of them. */
#ifndef SPOOR_TEST_EXAMPLE_ELVES_H
#define SPOOR_TEST_EXAMPLE_ELVES_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* The next example ELF of dir whose name has suffix_filter in it (NULL: any), its path into
 * path; NULL after the last. */
static inline struct dirent *next_example(DIR *dir, const char *suffix_filter, char path[1024])
{
    struct dirent *ent;
    while ((ent = readdir(dir))) {
        size_t len = strlen(ent->d_name);
        if (len < 5 || strcmp(ent->d_name + len - 4, ".elf") ||
            (suffix_filter && !strstr(ent->d_name, suffix_filter)))
            continue;
        snprintf(path, 1024, "%s/examples/%s", SPOOR_FIRMWARE_DIR, ent->d_name);
        return ent;
    }
    return NULL;
}

#endif
