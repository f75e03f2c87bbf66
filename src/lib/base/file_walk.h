/* Every regular file under a folder, recursively (the build-id index of ELFs, the dumps of a
 * triage): one walker, so that both read folders the same way. */
#ifndef SPOOR_BASE_FILE_WALK_H
#define SPOOR_BASE_FILE_WALK_H

/* Calls file(path, ctx) for every regular file under path (a folder, or one file: that file),
 * in name order within each folder. Symbolic links to files are followed, to folders not (a
 * .build-id tree links to files; a linked folder could loop); at most 32 levels deep. A folder
 * below path that cannot be read, or lies deeper, is skipped: skipped(its path, why, ctx) is
 * told (may be NULL). file and skipped return 0, or -1 when out of memory, which stops the
 * walk. 0 when done; -1 with the error set: "PATH: cannot open: ..." (path itself cannot be
 * read, or is not a file or folder), "PATH: out of memory". */
int spoor_walk_files(const char *path, int (*file)(const char *path, void *ctx),
                     int (*skipped)(const char *path, const char *why, void *ctx), void *ctx);

#endif
