/* A call-stack model, one stack per execution context: calls, returns, tail calls, exception
 * entries and returns go in (from the call recorder's records, from MTB branches), typed events
 * come out to the caller's sink (a function entered or left, with its depth and its inclusive
 * and exclusive time; a return with no call; a frame the stack cannot keep), and per-function
 * counts and times are kept in a hashed index. Sans-I/O and without symbols: a function is the
 * caller's number for it (its start address), and the caller names it.
 *
 * Contexts: every operation names its context (a thread, a handler invocation, a core), which
 * gets its own stack on its first operation (a BEGIN event) and keeps it until
 * spoor_call_stack_end() or spoor_call_stack_finish(). Contexts may interleave freely.
 *
 * Exceptions: an exception entry opens a nested level on the interrupted context's stack, as on
 * the hardware's: the handler's frame (marked exception) sits on the interrupted frames, returns
 * never match across it, and its exception return closes it with everything above it. A
 * recorder that gives each handler invocation a context of its own uses
 * spoor_call_stack_end() at the handler's exit instead.
 *
 * Time: each operation carries the time it happened at (ticks, instructions executed: any unit
 * that does not go back). A frame's inclusive time runs from its entry to its exit, its
 * exclusive time is that less the inclusive time of the frames it entered that exited before
 * it (an exception taken inside a call counts in the call's inclusive time only).
 *
 * The limit: a context keeps at most `limit` frames. Past it, the overflow policy says what is
 * lost (an OVERFLOW event each time):
 * - SPOOR_CALL_STACK_COUNT: the new frame is counted, not kept. Returns pair with it by count;
 *   its exit comes without its frame or times. For a recorder whose every exit has its enter:
 *   the outermost frames (the root of --folded stacks) stay.
 * - SPOOR_CALL_STACK_FORGET: the oldest frame is forgotten (no exit event ever comes for it)
 *   and the new one kept; the depth stays at the limit. For returns matched by address (MTB):
 *   the newest frames are those the next returns go to. */
#ifndef SPOOR_CALL_STACK_H
#define SPOOR_CALL_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The function number of code the caller cannot name: never a tail call's either end. */
#define SPOOR_CALL_UNKNOWN UINT32_MAX

/* The limit spoor's commands use. */
#define SPOOR_CALL_STACK_DEFAULT_LIMIT 256u

typedef enum spoor_call_stack_overflow {
    SPOOR_CALL_STACK_COUNT,
    SPOOR_CALL_STACK_FORGET,
} spoor_call_stack_overflow;

/* How a frame began (ENTER) or ended (EXIT). */
typedef enum spoor_call_stack_cause {
    SPOOR_CALL_STACK_CALL,             /* ENTER: a call */
    SPOOR_CALL_STACK_RETURN,           /* EXIT: a return (to its caller, or past it: the frames
                                          above the one returned from end by return too) */
    SPOOR_CALL_STACK_TAIL_CALL,        /* ENTER: a tail call's target; EXIT: its maker */
    SPOOR_CALL_STACK_EXCEPTION,        /* ENTER: an exception entry */
    SPOOR_CALL_STACK_EXCEPTION_RETURN, /* EXIT: a handler's exception return (its frame and the
                                          frames above it) */
    SPOOR_CALL_STACK_TAIL_CHAIN,       /* ENTER: a handler entered from another's exception
                                          return, without going back to the interrupted code */
    SPOOR_CALL_STACK_RESUME,           /* ENTER: code that ran before the trace: its entry is
                                          not in the trace; it counts no call and no time */
    SPOOR_CALL_STACK_UNWIND,           /* EXIT: its exit is not in the trace (the context ended,
                                          the stack restarted); it counts no time */
} spoor_call_stack_cause;

typedef struct spoor_call_frame {
    uint32_t fn;                  /* the caller's number for the function, or SPOOR_CALL_UNKNOWN */
    uint32_t at;                  /* the address execution entered it at */
    uint32_t ret;                 /* where execution continues when it returns (0: unknown) */
    bool exception;               /* an exception handler's frame: no return matches below it */
    spoor_call_stack_cause cause; /* how it began */
    uint64_t start;               /* time of its entry */
    uint64_t children;            /* inclusive time of its callees that exited */
} spoor_call_frame;

typedef enum spoor_call_stack_event_kind {
    SPOOR_CALL_STACK_BEGIN,     /* a context's first operation: its stack begins (empty) */
    SPOOR_CALL_STACK_ENTER,     /* a frame was entered: it is the innermost now */
    SPOOR_CALL_STACK_EXIT,      /* the innermost frame ended: it is gone after the event */
    SPOOR_CALL_STACK_UNMATCHED, /* a return with no frame open: its call is not in the trace */
    SPOOR_CALL_STACK_OVERFLOW,  /* the context holds `limit` frames: frame is not kept (COUNT)
                                   or forgotten (FORGET); the ENTER event follows */
    SPOOR_CALL_STACK_END,       /* the context ended (after the EXIT events of its frames) */
} spoor_call_stack_event_kind;

typedef struct spoor_call_stack_event {
    spoor_call_stack_event_kind kind;
    spoor_call_stack_cause cause; /* ENTER, EXIT */
    uint32_t context;
    uint64_t time; /* the operation's */
    size_t depth;  /* ENTER, EXIT: the frame's level, 1 the outermost, frames past the limit
                      counted (COUNT); 0 for the others */
    const spoor_call_frame *frame;  /* ENTER, EXIT, OVERFLOW: valid during the event; NULL for
                                       the EXIT of a frame that was not kept */
    bool kept;                      /* ENTER, EXIT: frame is frames[nframes - 1] */
    uint64_t inclusive, exclusive;  /* EXIT of a kept frame */
    const spoor_call_frame *frames; /* the context's kept frames, oldest first (an exiting frame
                                       still the last); valid during the event */
    size_t nframes;
} spoor_call_stack_event;

/* The events, in the order they happen. A sink must not call the model's operations. */
typedef void (*spoor_call_stack_sink)(void *arg, const spoor_call_stack_event *ev);

/* Per function: entries (calls, tail calls, exception entries) and, for frames whose entry and
 * exit are both in the trace, the sums of their inclusive and exclusive times. */
typedef struct spoor_call_fn_stats {
    uint32_t fn;
    uint64_t calls, inclusive, exclusive;
} spoor_call_fn_stats;

struct spoor_call_stack_context;

/* The fields are the model's: use the functions. */
typedef struct spoor_call_stack {
    size_t limit;
    spoor_call_stack_overflow overflow;
    spoor_call_stack_sink sink;
    void *arg;
    struct spoor_call_stack_context *contexts; /* in order of their first operation, an ended
                                                  one replaced by the last */
    size_t ncontexts, context_cap;
    spoor_call_fn_stats *fns; /* in order of first entry until spoor_call_stack_stats() */
    size_t nfns, fn_cap;
    size_t *index; /* open addressing over fn: position in fns + 1, 0 empty */
    size_t index_cap;
} spoor_call_stack;

/* An empty model (no allocation: spoor_call_stack_free() is needed only after operations).
 * limit: frames kept per context (at least 1); sink may be NULL. */
void spoor_call_stack_init(spoor_call_stack *cs, size_t limit, spoor_call_stack_overflow overflow,
                           spoor_call_stack_sink sink, void *arg);
void spoor_call_stack_free(spoor_call_stack *cs);

/* The operations return false only when memory ran out: the stack is then as it was (a new
 * context may have begun). ctx is the caller's number for the context. */

/* A call of fn, entered at `at`, returning to ret. */
bool spoor_call_stack_call(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                           uint32_t ret, uint64_t time);

/* The innermost frame returns (a recorder's exit record); UNMATCHED when no frame is open. */
bool spoor_call_stack_return(spoor_call_stack *cs, uint32_t ctx, uint64_t time);

/* A branch that is not a call, to `at` in fn:
 * - a return, when a kept frame above the innermost exception frame, and above the outermost
 *   frame (the trace does not show where that one returns to), returns to `at`: that frame and
 *   those above it exit (RETURN), the innermost first;
 * - else a tail call, when fn and the innermost frame's function are both known and differ:
 *   the innermost frame exits (TAIL_CALL) and fn is entered in its place (TAIL_CALL: the same
 *   return address, the same exception mark);
 * - else a branch inside the function (or into code it cannot name): nothing happens. */
bool spoor_call_stack_branch(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                             uint64_t time);

/* An exception entry to the handler fn at `at`; ret is where the interrupted code resumes. */
bool spoor_call_stack_exception(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                                uint32_t ret, uint64_t time);

/* An exception return that continues at `at` in fn: the innermost exception frame and those
 * above it exit (EXCEPTION_RETURN); when `at` is not where that exception was taken, the next
 * handler is entered (TAIL_CHAIN, with the same return address). With no exception frame open
 * (the handler began before the trace) it is spoor_call_stack_restart(). */
bool spoor_call_stack_exception_return(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                                       uint64_t time);

/* Execution is at `at` in fn, nothing known of how it got there (the trace starts, or leaves
 * every frame it knows): the open frames exit (UNWIND) and fn is entered (RESUME, no return
 * address) as the outermost frame. */
bool spoor_call_stack_restart(spoor_call_stack *cs, uint32_t ctx, uint32_t fn, uint32_t at,
                              uint64_t time);

/* The open frames of ctx exit (UNWIND), the innermost first; the context stays. */
void spoor_call_stack_unwind(spoor_call_stack *cs, uint32_t ctx, uint64_t time);

/* The context ends (a handler invocation returned, a thread exited): its open frames exit
 * (UNWIND), then END; its next operation begins it anew. */
void spoor_call_stack_end(spoor_call_stack *cs, uint32_t ctx, uint64_t time);

/* The trace ends: every context ends, in order of their first operation (an ended context's
 * place taken by the last one). */
void spoor_call_stack_finish(spoor_call_stack *cs, uint64_t time);

/* Frames open in ctx (frames past the limit counted, COUNT), 0 for a context with none. */
size_t spoor_call_stack_depth(const spoor_call_stack *cs, uint32_t ctx);

/* Every function entered, by calls (most first), then by number; *count gets how many. The
 * pointer is valid until the next operation. */
const spoor_call_fn_stats *spoor_call_stack_stats(spoor_call_stack *cs, size_t *count);

#endif
