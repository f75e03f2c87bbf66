/* Self-contained HTML pages (html_page.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "html_page.h"

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

void html_put_json(outbuf *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '<': ob_write(o, "\\u003c", 6); break;
        case '>': ob_write(o, "\\u003e", 6); break;
        case '&': ob_write(o, "\\u0026", 6); break;
        default: ob_char(o, s[i]);
        }
    }
}

int html_write(const char *cmd, const char *path, const char *tmpl, size_t tmpl_len,
               const char *const *markers, const char *const *docs, const size_t *lens, size_t n)
{
    const char *at[HTML_MAX_MARKERS], *from = tmpl;
    bool found = n <= HTML_MAX_MARKERS && strlen(tmpl) == tmpl_len;
    for (size_t i = 0; found && i < n; i++)
        if ((found = (at[i] = strstr(from, markers[i])) != NULL))
            from = at[i] + strlen(markers[i]);
    if (!found)
        return cli_error(cmd, "the page template lacks its markers (a bad build)");
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
    from = tmpl;
    for (size_t i = 0; i < n; i++) {
        ob_write(&o, from, (size_t)(at[i] - from));
        html_put_json(&o, docs[i], lens[i]);
        from = at[i] + strlen(markers[i]);
    }
    ob_write(&o, from, strlen(from));
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
