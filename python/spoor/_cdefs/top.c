/* spoor.top (top.cdef): spoor top's library session behind a trace pump without a source, fed
 * by Python; its callbacks keep each report's JSON line (spoor_top_session_report_json) and the
 * notices until Python takes them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/rtos.h"
#include "spoor/top_session.h"
#include "spoor/trace_pump.h"

typedef struct spoor_py_top {
    spoor_top_session *session;
    spoor_trace_pump *pump;
    char *json;
    size_t json_len, json_cap;
    char *notices;
    size_t notices_len, notices_cap;
    unsigned json_flags;
    bool nomem; /* a report or notice could not be kept (the error is set) */
} spoor_py_top;

/* -T KIND as spoor top opens it: NULL with the error set, or NULL and *none for "auto" on an
 * ELF without any RTOS (threads are then TCB addresses). */
static spoor_rtos *spoor_py_top_rtos(const spoor_elf *elf, const char *kind, bool *none)
{
    spoor_rtos_kind found;
    spoor_rtos *r = spoor_rtos_open(elf, kind);
    *none = !r && !strcmp(kind, "auto") && !spoor_rtos_detect(elf, &found);
    return r;
}

/* The target memory of spoor top: the source's layers, memory only, OpenOCD's live layer. */
static spoor_snapshot *spoor_py_top_memory(spoor_snapshot_source *src, const char *openocd,
                                           const spoor_elf *elf)
{
    src->memory_only = true;
    src->openocd = openocd;
    return spoor_snapshot_open(src, elf);
}

static bool spoor_py_top_append(spoor_py_top *t, char **buf, size_t *len, size_t *cap,
                                const char *text, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t want = *cap ? *cap : 4096;
        while (want < *len + n + 1)
            want *= 2;
        char *grown = realloc(*buf, want);
        if (!grown) {
            t->nomem = true;
            return false;
        }
        *buf = grown;
        *cap = want;
    }
    memcpy(*buf + *len, text, n);
    *len += n;
    (*buf)[*len] = '\0';
    return true;
}

static void spoor_py_top_report(void *ctx, const spoor_top_report *r)
{
    spoor_py_top *t = ctx;
    size_t len;
    char *text = spoor_top_session_report_json(t->session, r, t->json_flags, &len);
    if (!text)
        t->nomem = true;
    else
        spoor_py_top_append(t, &t->json, &t->json_len, &t->json_cap, text, len);
    free(text);
}

static void spoor_py_top_notice(void *ctx, spoor_top_notice n, const char *text)
{
    spoor_py_top *t = ctx;
    char head[16];
    int k = snprintf(head, sizeof head, "%d:", (int)n);
    if (spoor_py_top_append(t, &t->notices, &t->notices_len, &t->notices_cap, head, (size_t)k))
        spoor_py_top_append(t, &t->notices, &t->notices_len, &t->notices_cap, text ? text : "",
                            strlen(text ? text : "") + 1);
}

static void spoor_py_top_free(spoor_py_top *t)
{
    if (!t)
        return;
    spoor_trace_pump_free(t->pump);
    spoor_top_session_free(t->session);
    free(t->json);
    free(t->notices);
    free(t);
}

static spoor_py_top *spoor_py_top_new(const spoor_top_session_config *cfg,
                                      const spoor_trace_pump_config *pump_cfg, unsigned json_flags)
{
    spoor_py_top *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->json_flags = json_flags;
    spoor_top_session_callbacks cb = {
        .report = spoor_py_top_report, .notice = spoor_py_top_notice, .ctx = t};
    if (!(t->session = spoor_top_session_new(cfg, &cb)) ||
        !(t->pump = spoor_trace_pump_new(pump_cfg, spoor_top_session_event, t->session))) {
        spoor_py_top_free(t);
        return NULL;
    }
    spoor_top_session_start(t->session); /* connected to the stream: the target may run now */
    return t;
}

/* false: out of memory (error set) */
static bool spoor_py_top_feed(spoor_py_top *t, const uint8_t *data, size_t len)
{
    spoor_trace_pump_feed(t->pump, data, len);
    return !t->nomem;
}

/* The source went quiet: the decoder releases what it held, host time moves on */
static bool spoor_py_top_idle(spoor_py_top *t)
{
    spoor_trace_pump_idle(t->pump);
    return !t->nomem;
}

static bool spoor_py_top_finish(spoor_py_top *t)
{
    spoor_trace_pump_finish(t->pump);
    return !t->nomem;
}

static void spoor_py_top_clear(spoor_py_top *t)
{
    t->json_len = t->notices_len = 0;
}
