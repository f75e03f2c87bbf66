/* A crash dump's signature (spoor/triage.h): reason, fault type and bits, assert site, and the
 * innermost application frames by name, with nothing that moves between builds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/analysis.h"
#include "spoor/error.h"
#include "spoor/snapshot.h"
#include "spoor/triage.h"
#include "spoor/unwind.h"

#define MAX_INLINE 8

/* Whether a frame's code is the application's: not the target library (spoor_* functions,
 * code from target/src), not the C library or compiler runtime (code without a source file,
 * newlib, libgcc, picolibc, __names). */
static bool application_code(const spoor_location *loc)
{
    static const char *const library_paths[] = {"target/src/", "newlib/", "libgcc", "picolibc",
                                                "/libc/"};
    const char *f = loc->function;
    if (!f || !strncmp(f, "spoor_", 6) || !strncmp(f, "__", 2) || !loc->file)
        return false;
    for (size_t i = 0; i < sizeof library_paths / sizeof library_paths[0]; i++)
        if (strstr(loc->file, library_paths[i]))
            return false;
    return true;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/'), *back = strrchr(path, '\\');
    if (back && (!slash || back > slash))
        slash = back;
    return slash ? slash + 1 : path;
}

static bool add_string(char ***list, size_t *n, const char *s)
{
    char **grown = realloc(*list, (*n + 1) * sizeof **list);
    if (!grown)
        return false;
    *list = grown;
    return (grown[*n] = strdup(s)) != NULL && ++*n;
}

/* The innermost k application functions of the report's backtrace. */
static bool sign_frames(const spoor_crash *c, unsigned k, spoor_triage_sig *out)
{
    for (size_t i = 0; i < c->nframes && out->nframes < k; i++) {
        if (c->frames[i].kind != SPOOR_FRAME_CALL)
            continue;
        spoor_location loc[MAX_INLINE];
        size_t m = spoor_frame_symbolize(c->elf, &c->frames[i], loc, MAX_INLINE);
        for (size_t j = 0; j < m && out->nframes < k; j++)
            if (application_code(&loc[j]) &&
                !add_string(&out->frames, &out->nframes, loc[j].function))
                return false;
    }
    return true;
}

bool spoor_triage_sign(const spoor_elf *elf, spoor_dump *dump, const char *name, unsigned k,
                       spoor_triage_sig *out)
{
    memset(out, 0, sizeof *out);
    if (!k || k > SPOOR_TRIAGE_MAX_K)
        k = k ? SPOOR_TRIAGE_MAX_K : SPOOR_TRIAGE_DEFAULT_K;
    /* The dump's report (its memory view, fault status, backtrace), as spoor crash makes it. */
    spoor_snapshot *snap = spoor_snapshot_from_dump(dump, name, elf);
    if (!snap)
        return false;
    spoor_crash *c = spoor_crash_open(elf, snap, NULL);
    bool ok = c && (out->reason = strdup(dump->has_reason ? spoor_dump_reason_name(dump->reason)
                                                          : "unknown")) != NULL;
    bool fault = dump->has_reason ? dump->reason == SPOOR_REASON_FAULT : snap->fault.valid != 0;
    if (ok && fault) {
        ok = (out->fault = strdup(c->fault.type)) != NULL;
        for (size_t i = 0; ok && i < c->fault.nbits; i++)
            ok = add_string(&out->bits, &out->nbits, c->fault.bits[i].name);
    }
    if (ok && dump->has_reason && dump->reason == SPOOR_REASON_ASSERT) {
        const char *file = dump->file ? base_name(dump->file) : "?";
        size_t len = strlen(file) + 16;
        ok = (out->assert_at = malloc(len)) != NULL;
        if (ok)
            snprintf(out->assert_at, len, "%s:%u", file, dump->line);
    }
    ok = ok && sign_frames(c, k, out) && spoor_triage_sig_finish(out);
    spoor_crash_close(c);
    spoor_snapshot_close(snap);
    if (!ok) {
        spoor_triage_sig_clear(out);
        if (spoor_last_status() != SPOOR_ERR_NOMEM)
            spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
    }
    return ok;
}
