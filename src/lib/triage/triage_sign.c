/* A crash dump's signature (spoor/triage.h): reason, fault type and bits, assert site, and the
 * innermost application frames by name, with nothing that moves between builds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/fault.h"
#include "spoor/snapshot.h"
#include "spoor/triage.h"
#include "spoor/unwind.h"

#define MAX_FRAMES 256
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

static bool sign_frames(const spoor_elf *elf, spoor_snapshot *snap, unsigned k,
                        spoor_triage_sig *out)
{
    static _Thread_local spoor_frame frames[MAX_FRAMES];
    size_t n =
        spoor_unwind(elf, &snap->regs, spoor_mem_reader, snap->mem, NULL, frames, MAX_FRAMES, NULL);
    for (size_t i = 0; i < n && out->nframes < k; i++) {
        if (frames[i].kind != SPOOR_FRAME_CALL)
            continue;
        spoor_location loc[MAX_INLINE];
        size_t m = spoor_frame_symbolize(elf, &frames[i], loc, MAX_INLINE);
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
    /* The dump's memory view and fault status, as spoor crash sees them. */
    spoor_snapshot *snap = spoor_snapshot_from_dump(dump, name, elf);
    if (!snap)
        return false;
    bool ok = (out->reason = strdup(dump->has_reason ? spoor_dump_reason_name(dump->reason)
                                                     : "unknown")) != NULL;
    bool fault = dump->has_reason ? dump->reason == SPOOR_REASON_FAULT : snap->fault.valid != 0;
    if (ok && fault) {
        spoor_fault_info info;
        spoor_fault_decode(&snap->fault, snap->exception, snap->regs.r[15], &info);
        ok = (out->fault = strdup(info.type)) != NULL;
        for (size_t i = 0; ok && i < info.nbits; i++)
            ok = add_string(&out->bits, &out->nbits, info.bits[i].name);
    }
    if (ok && dump->has_reason && dump->reason == SPOOR_REASON_ASSERT) {
        const char *file = dump->file ? base_name(dump->file) : "?";
        size_t len = strlen(file) + 16;
        ok = (out->assert_at = malloc(len)) != NULL;
        if (ok)
            snprintf(out->assert_at, len, "%s:%u", file, dump->line);
    }
    ok = ok && sign_frames(elf, snap, k, out) && spoor_triage_sig_finish(out);
    spoor_snapshot_close(snap);
    if (!ok) {
        spoor_triage_sig_clear(out);
        if (spoor_last_status() != SPOOR_ERR_NOMEM)
            spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
    }
    return ok;
}
