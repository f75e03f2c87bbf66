/* The recursive file walk of base/file_walk.h. */
#include "base/file_walk.h"
#include "util/grow.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/set_error.h"

#define MAX_DEPTH 32

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct walker {
    int (*file)(const char *path, void *ctx);
    int (*skipped)(const char *path, const char *why, void *ctx);
    void *ctx;
};

static int skip(const struct walker *w, const char *path, const char *why)
{
    return w->skipped ? w->skipped(path, why, w->ctx) : 0;
}

static int walk(const char *path, int depth, const struct walker *w)
{
    DIR *dir = opendir(path);
    if (!dir) /* a folder below the top that cannot be read: skipped, and said */
        return skip(w, path, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (spoor_grow((void **)&names, &cap, n + 1, sizeof *names)) {
            rc = -1;
            break;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(dir);
    if (rc == 0 && n)
        qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t len = strlen(path) + strlen(names[i]) + 2;
        char *child = malloc(len);
        if (!child) {
            rc = -1;
            break;
        }
        snprintf(child, len, "%s/%s", path, names[i]);
        struct stat lst, st;
        if (lstat(child, &lst) == 0 && stat(child, &st) == 0) {
            if (S_ISDIR(st.st_mode) && !S_ISLNK(lst.st_mode) && depth < MAX_DEPTH)
                rc = walk(child, depth + 1, w);
            else if (S_ISDIR(st.st_mode) && !S_ISLNK(lst.st_mode))
                rc = skip(w, child, "a folder deeper than 32 levels");
            else if (S_ISREG(st.st_mode))
                rc = w->file(child, w->ctx);
        }
        free(child);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int spoor_walk_files(const char *path, int (*file)(const char *path, void *ctx),
                     int (*skipped)(const char *path, const char *why, void *ctx), void *ctx)
{
    const struct walker w = {file, skipped, ctx};
    struct stat st;
    if (stat(path, &st) != 0) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode) && file(path, ctx) != 0) {
        spoor_set_error(SPOOR_ERR_NOMEM, "%s: out of memory", path);
        return -1;
    }
    if (S_ISREG(st.st_mode))
        return 0;
    if (!S_ISDIR(st.st_mode)) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot open: not a file or folder", path);
        return -1;
    }
    if (walk(path, 0, &w) == 0)
        return 0;
    spoor_set_error(SPOOR_ERR_NOMEM, "%s: out of memory", path);
    return -1;
}
