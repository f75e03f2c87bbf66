/* The call-stack model (spoor/call_stack.h): per-context stacks, their events, and the
 * per-function counts and times in a hashed index. */
#include <stdlib.h>
#include <string.h>

#include "base/hash_index.h"
#include "spoor/call_stack.h"

struct spoor_call_stack_context {
    uint32_t id;
    spoor_call_frame *frames; /* cap of them (up to limit), grown as calls nest */
    size_t cap;
    size_t kept;  /* frames[0..kept): the kept frames, oldest first */
    size_t depth; /* frames open: kept, and those counted past the limit (COUNT) */
};

typedef struct spoor_call_stack_context context;

void spoor_call_stack_init(spoor_call_stack *cs, size_t limit, spoor_call_stack_overflow overflow,
                           spoor_call_stack_sink sink, void *arg)
{
    memset(cs, 0, sizeof *cs);
    cs->limit = limit ? limit : 1;
    cs->overflow = overflow;
    cs->sink = sink;
    cs->arg = arg;
}

void spoor_call_stack_free(spoor_call_stack *cs)
{
    for (size_t i = 0; i < cs->ncontexts; i++)
        free(cs->contexts[i].frames);
    free(cs->contexts);
    free(cs->fns);
    free(cs->index);
    spoor_call_stack_init(cs, cs->limit, cs->overflow, cs->sink, cs->arg);
}

/* Room for one more element in *items (count used of *cap, elem bytes each). */
static bool room_for_one(void **items, size_t count, size_t *cap, size_t elem, size_t first)
{
    if (count < *cap)
        return true;
    size_t n = *cap ? *cap * 2 : first;
    void *t = realloc(*items, n * elem);
    if (!t)
        return false;
    *items = t;
    *cap = n;
    return true;
}

/* ---- the function index ------------------------------------------------------------------- */

static uint64_t fn_hash(const void *fns, size_t i)
{
    return ((const spoor_call_fn_stats *)fns)[i].fn;
}

static bool fn_is(const void *fns, size_t i, const void *fn)
{
    return ((const spoor_call_fn_stats *)fns)[i].fn == *(const uint32_t *)fn;
}

/* The stats of fn; with create, made when missing (NULL when out of memory). */
static spoor_call_fn_stats *fn_stats(spoor_call_stack *cs, uint32_t fn, bool create)
{
    spoor_hash_index x = {cs->index, cs->index_cap};
    size_t *slot = x.cap ? spoor_hash_slot(&x, fn, fn_is, cs->fns, &fn) : NULL;
    if (slot && *slot)
        return &cs->fns[*slot - 1];
    if (!create || !room_for_one((void **)&cs->fns, cs->nfns, &cs->fn_cap, sizeof *cs->fns, 64) ||
        spoor_hash_reserve(&x, cs->nfns, fn_hash, cs->fns))
        return NULL;
    cs->index = x.slots;
    cs->index_cap = x.cap;
    cs->fns[cs->nfns] = (spoor_call_fn_stats){.fn = fn};
    *spoor_hash_slot(&x, fn, fn_is, cs->fns, &fn) = ++cs->nfns;
    return &cs->fns[cs->nfns - 1];
}

static int by_calls(const void *a, const void *b)
{
    const spoor_call_fn_stats *x = a, *y = b;
    if (x->calls != y->calls)
        return x->calls < y->calls ? 1 : -1;
    return x->fn < y->fn ? -1 : x->fn > y->fn;
}

const spoor_call_fn_stats *spoor_call_stack_stats(spoor_call_stack *cs, size_t *count)
{
    if (cs->nfns) {
        qsort(cs->fns, cs->nfns, sizeof *cs->fns, by_calls);
        /* the same size: no allocation can fail that the index did not survive before */
        spoor_hash_index x = {cs->index, cs->index_cap};
        spoor_hash_refill(&x, cs->nfns, fn_hash, cs->fns);
    }
    *count = cs->nfns;
    return cs->fns;
}

/* ---- contexts ------------------------------------------------------------------------------ */

static void emit(const spoor_call_stack *cs, const spoor_call_stack_event *ev)
{
    if (cs->sink)
        cs->sink(cs->arg, ev);
}

static spoor_call_stack_event event(spoor_call_stack_event_kind kind, const context *x,
                                    uint64_t time)
{
    return (spoor_call_stack_event){
        .kind = kind, .context = x->id, .time = time, .frames = x->frames, .nframes = x->kept};
}

static context *find(const spoor_call_stack *cs, uint32_t id)
{
    for (size_t i = cs->ncontexts; i-- > 0;) /* few contexts are live at a time */
        if (cs->contexts[i].id == id)
            return &cs->contexts[i];
    return NULL;
}

/* The context id, begun on its first operation; NULL when out of memory. */
static context *context_of(spoor_call_stack *cs, uint32_t id, uint64_t time)
{
    context *x = find(cs, id);
    if (x)
        return x;
    if (!room_for_one((void **)&cs->contexts, cs->ncontexts, &cs->context_cap, sizeof *cs->contexts,
                      8))
        return NULL;
    x = &cs->contexts[cs->ncontexts++];
    *x = (context){.id = id};
    spoor_call_stack_event ev = event(SPOOR_CALL_STACK_BEGIN, x, time);
    emit(cs, &ev);
    return x;
}

/* Room in x->frames for one more kept frame, when the limit allows one. */
static bool frames_room(const spoor_call_stack *cs, context *x)
{
    if (x->kept < x->cap || x->cap == cs->limit)
        return true;
    size_t cap = x->cap ? x->cap * 2 : 16;
    if (cap > cs->limit)
        cap = cs->limit;
    spoor_call_frame *f = realloc(x->frames, cap * sizeof *f);
    if (!f)
        return false;
    x->frames = f;
    x->cap = cap;
    return true;
}

size_t spoor_call_stack_depth(const spoor_call_stack *cs, uint32_t ctx)
{
    const context *x = find(cs, ctx);
    return x ? x->depth : 0;
}

/* ---- frames -------------------------------------------------------------------------------- */

/* Makes room for one more kept frame under FORGET: the oldest goes. */
static void forget_oldest(spoor_call_stack *cs, context *x, uint64_t time)
{
    spoor_call_stack_event ev = event(SPOOR_CALL_STACK_OVERFLOW, x, time);
    spoor_call_frame oldest = x->frames[0];
    ev.frame = &oldest;
    memmove(x->frames, x->frames + 1, (x->kept - 1) * sizeof *x->frames);
    x->kept--;
    x->depth--;
    ev.nframes = x->kept;
    emit(cs, &ev);
}

/* Enters f (its fn, at, ret, exception and cause): ENTER, after OVERFLOW past the limit. */
static bool push(spoor_call_stack *cs, context *x, spoor_call_frame f, uint64_t time)
{
    spoor_call_fn_stats *st = NULL;
    if (!frames_room(cs, x) ||
        (f.cause != SPOOR_CALL_STACK_RESUME && !(st = fn_stats(cs, f.fn, true))))
        return false;
    f.start = time;
    f.children = 0;
    if (st)
        st->calls++;
    bool keep = x->kept == x->depth && x->kept < cs->limit;
    if (!keep && cs->overflow == SPOOR_CALL_STACK_FORGET) {
        forget_oldest(cs, x, time);
        keep = true;
    } else if (!keep) {
        spoor_call_stack_event ov = event(SPOOR_CALL_STACK_OVERFLOW, x, time);
        ov.frame = &f;
        emit(cs, &ov);
    }
    if (keep)
        x->frames[x->kept++] = f;
    x->depth++;
    spoor_call_stack_event ev = event(SPOOR_CALL_STACK_ENTER, x, time);
    ev.cause = f.cause;
    ev.depth = x->depth;
    ev.kept = keep;
    ev.frame = keep ? &x->frames[x->kept - 1] : &f;
    emit(cs, &ev);
    return true;
}

/* The innermost frame exits (x->depth > 0). */
static void pop(spoor_call_stack *cs, context *x, spoor_call_stack_cause cause, uint64_t time)
{
    spoor_call_stack_event ev = event(SPOOR_CALL_STACK_EXIT, x, time);
    ev.cause = cause;
    ev.depth = x->depth;
    if (x->depth > x->kept) { /* counted past the limit: nothing known of it */
        x->depth--;
        emit(cs, &ev);
        return;
    }
    spoor_call_frame *f = &x->frames[x->kept - 1];
    ev.frame = f;
    ev.kept = true;
    ev.inclusive = time - f->start;
    ev.exclusive = ev.inclusive - f->children;
    if (x->kept > 1)
        x->frames[x->kept - 2].children += ev.inclusive;
    spoor_call_fn_stats *st;
    if (cause != SPOOR_CALL_STACK_UNWIND && f->cause != SPOOR_CALL_STACK_RESUME &&
        (st = fn_stats(cs, f->fn, false)) != NULL) {
        st->inclusive += ev.inclusive;
        st->exclusive += ev.exclusive;
    }
    emit(cs, &ev);
    x->kept--;
    x->depth--;
}

static spoor_call_frame frame(uint32_t fn, uint32_t at, uint32_t ret, bool exception,
                              spoor_call_stack_cause cause)
{
    return (spoor_call_frame){
        .fn = fn, .at = at, .ret = ret, .exception = exception, .cause = cause};
}

/* ---- operations ---------------------------------------------------------------------------- */

bool spoor_call_stack_call(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                           uint32_t ret, uint64_t time)
{
    context *x = context_of(cs, ctx, time);
    return x && push(cs, x, frame(fn, at, ret, false, SPOOR_CALL_STACK_CALL), time);
}

bool spoor_call_stack_return(spoor_call_stack *cs, uint32_t ctx, uint64_t time)
{
    context *x = context_of(cs, ctx, time);
    if (!x)
        return false;
    if (x->depth > 0) {
        pop(cs, x, SPOOR_CALL_STACK_RETURN, time);
    } else {
        spoor_call_stack_event ev = event(SPOOR_CALL_STACK_UNMATCHED, x, time);
        emit(cs, &ev);
    }
    return true;
}

/* The level (1 the outermost) of the frame a branch to `at` returns from, 0 for none: kept,
 * above the innermost exception frame and above the outermost frame. */
static size_t return_level(const context *x, uint32_t at)
{
    for (size_t i = x->kept; i > 1 && !x->frames[i - 1].exception; i--)
        if (x->frames[i - 1].ret == at)
            return i;
    return 0;
}

bool spoor_call_stack_branch(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                             uint64_t time)
{
    context *x = context_of(cs, ctx, time);
    if (!x)
        return false;
    size_t level = return_level(x, at);
    if (level) {
        while (x->depth >= level)
            pop(cs, x, SPOOR_CALL_STACK_RETURN, time);
        return true;
    }
    if (x->depth == 0 || x->depth != x->kept) /* the innermost frame is not known */
        return true;
    spoor_call_frame next = x->frames[x->kept - 1];
    if (fn == SPOOR_CALL_UNKNOWN || next.fn == SPOOR_CALL_UNKNOWN || next.fn == fn)
        return true;
    if (!fn_stats(cs, fn, true)) /* push cannot fail after the pop */
        return false;
    pop(cs, x, SPOOR_CALL_STACK_TAIL_CALL, time);
    next = frame(fn, at, next.ret, next.exception, SPOOR_CALL_STACK_TAIL_CALL);
    return push(cs, x, next, time);
}

bool spoor_call_stack_exception(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                                uint32_t ret, uint64_t time)
{
    context *x = context_of(cs, ctx, time);
    return x && push(cs, x, frame(fn, at, ret, true, SPOOR_CALL_STACK_EXCEPTION), time);
}

bool spoor_call_stack_exception_return(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                                       uint64_t time)
{
    context *x = context_of(cs, ctx, time);
    if (!x)
        return false;
    size_t level = x->kept;
    while (level > 0 && !x->frames[level - 1].exception)
        level--;
    if (level == 0)
        return spoor_call_stack_restart(cs, ctx, fn, at, time);
    uint32_t ret = x->frames[level - 1].ret;
    bool chain = at != ret; /* not back where it was taken: tail-chained into the next one */
    if (chain && !fn_stats(cs, fn, true))
        return false;
    while (x->depth >= level)
        pop(cs, x, SPOOR_CALL_STACK_EXCEPTION_RETURN, time);
    return !chain || push(cs, x, frame(fn, at, ret, true, SPOOR_CALL_STACK_TAIL_CHAIN), time);
}

bool spoor_call_stack_restart(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                              uint64_t time)
{
    context *x = context_of(cs, ctx, time);
    if (!x || !frames_room(cs, x))
        return false;
    while (x->depth > 0)
        pop(cs, x, SPOOR_CALL_STACK_UNWIND, time);
    return push(cs, x, frame(fn, at, 0, false, SPOOR_CALL_STACK_RESUME), time);
}

void spoor_call_stack_unwind(spoor_call_stack *cs, uint32_t ctx, uint64_t time)
{
    context *x = find(cs, ctx);
    while (x && x->depth > 0)
        pop(cs, x, SPOOR_CALL_STACK_UNWIND, time);
}

/* Unwinds x and ends it, END the last event; its place is still taken. */
static void end_context(spoor_call_stack *cs, context *x, uint64_t time)
{
    while (x->depth > 0)
        pop(cs, x, SPOOR_CALL_STACK_UNWIND, time);
    spoor_call_stack_event ev = event(SPOOR_CALL_STACK_END, x, time);
    emit(cs, &ev);
    free(x->frames);
    x->frames = NULL;
    x->cap = 0;
}

void spoor_call_stack_end(spoor_call_stack *cs, uint32_t ctx, uint64_t time)
{
    context *x = find(cs, ctx);
    if (!x)
        return;
    end_context(cs, x, time);
    *x = cs->contexts[--cs->ncontexts];
}

void spoor_call_stack_finish(spoor_call_stack *cs, uint64_t time)
{
    for (size_t i = 0; i < cs->ncontexts; i++)
        end_context(cs, &cs->contexts[i], time);
    cs->ncontexts = 0;
}
