#include "chrome_trace.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

bool chrome_trace_open(chrome_trace *t, const char *path)
{
    t->path = path;
    t->ob = malloc(sizeof *t->ob);
    if (!t->ob)
        return false;
    t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (t->fd < 0) {
        free(t->ob);
        t->ob = NULL;
        return false;
    }
    ob_init(t->ob, t->fd);
    json_init(&t->j, t->ob);
    json_object_begin(&t->j, NULL);
    json_string(&t->j, "displayTimeUnit", "ns");
    json_array_begin(&t->j, "traceEvents");
    return true;
}

static void event_head(chrome_trace *t, const char *name, const char *ph)
{
    json_object_begin(&t->j, NULL);
    json_string(&t->j, "name", name);
    json_string(&t->j, "ph", ph);
}

json_out *chrome_trace_event_begin(chrome_trace *t, const char *name, const char *ph)
{
    event_head(t, name, ph);
    return &t->j;
}

void chrome_trace_event_end(chrome_trace *t)
{
    json_object_end(&t->j);
}

void chrome_trace_track(chrome_trace *t, unsigned pid, unsigned tid, const char *name)
{
    event_head(t, "thread_name", "M");
    json_uint(&t->j, "pid", pid);
    json_uint(&t->j, "tid", tid);
    json_object_begin(&t->j, "args");
    json_string(&t->j, "name", name);
    json_object_end(&t->j);
    json_object_end(&t->j);
}

void chrome_trace_event(chrome_trace *t, const char *name, const char *ph, uint64_t ts,
                        unsigned pid, unsigned tid)
{
    event_head(t, name, ph);
    json_uint(&t->j, "ts", ts);
    json_uint(&t->j, "pid", pid);
    json_uint(&t->j, "tid", tid);
    json_object_end(&t->j);
}

bool chrome_trace_close(chrome_trace *t)
{
    if (!t->ob)
        return true;
    json_array_end(&t->j);
    json_object_end(&t->j);
    json_finish(&t->j);
    bool ok = ob_flush(t->ob);
    free(t->ob);
    t->ob = NULL;
    return close(t->fd) == 0 && ok;
}

void chrome_trace_discard(chrome_trace *t)
{
    if (!t->ob)
        return;
    free(t->ob);
    t->ob = NULL;
    close(t->fd);
    unlink(t->path);
}
