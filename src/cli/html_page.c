/* Self-contained HTML pages (html_page.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "html_page.h"
#include "util/html_fill.h"

FILE *html_capture_begin(outbuf *o)
{
    FILE *tmp = tmpfile();
    if (tmp)
        ob_init(o, fileno(tmp));
    return tmp;
}

char *html_capture_end(outbuf *o, FILE *tmp, size_t *len)
{
    char *text = NULL;
    long size;
    if (ob_flush(o) && fseek(tmp, 0, SEEK_END) == 0 && (size = ftell(tmp)) >= 0 &&
        fseek(tmp, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1)) &&
        fread(text, 1, (size_t)size, tmp) == (size_t)size) {
        text[size] = 0;
        *len = (size_t)size;
    } else {
        free(text);
        text = NULL;
    }
    fclose(tmp);
    return text;
}

int html_write(const char *cmd, const char *path, const char *tmpl, size_t tmpl_len,
               const char *const *markers, const char *const *docs, const size_t *lens, size_t n)
{
    /* A file: written as a new file beside it, then renamed over it, so that a symbolic link
     * (or anything else) planted at path is replaced, never written through. */
    struct stat st;
    bool to_stdout = !strcmp(path, "-");
    if (!to_stdout && lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return cli_error(cmd, "%s: not a regular file (%s): not written over", path,
                         S_ISLNK(st.st_mode)   ? "a symbolic link"
                         : S_ISDIR(st.st_mode) ? "a directory"
                                               : "a device, FIFO or socket");
    char *tmp_path = NULL;
    int fd = 1;
    if (!to_stdout) {
        size_t len = strlen(path) + sizeof ".XXXXXX";
        if (!(tmp_path = malloc(len)))
            return cli_out_of_memory(cmd);
        snprintf(tmp_path, len, "%s.XXXXXX", path);
        mode_t mask = umask(0);
        umask(mask);
        if ((fd = mkstemp(tmp_path)) < 0 || fchmod(fd, 0666 & ~mask) != 0) {
            int err = errno;
            if (fd >= 0)
                close(fd), unlink(tmp_path);
            free(tmp_path);
            return cli_error(cmd, "%s: %s", path, strerror(err));
        }
    }
    static outbuf o;
    ob_init(&o, fd);
    if (!html_fill(&o, tmpl, tmpl_len, markers, docs, lens, n)) {
        if (fd != 1)
            close(fd), unlink(tmp_path);
        free(tmp_path);
        return cli_error(cmd, "the page template lacks its markers (a bad build)");
    }
    bool ok = ob_flush(&o);
    int err = errno;
    if (fd != 1 && close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (tmp_path && ok && rename(tmp_path, path) != 0) {
        ok = false;
        err = errno;
    }
    if (tmp_path && !ok)
        unlink(tmp_path);
    free(tmp_path);
    return ok ? SPOOR_EXIT_OK
              : cli_error(cmd, "%s: cannot write the page: %s", path, strerror(err));
}
