/* The RTOS a firmware runs, as its ELF's DWARF describes it: where the current-thread pointer
 * lives and how to read a thread control block (TCB), for `spoor top` and the thread views of
 * `spoor crash` and `spoor gdbserver`.
 *
 * Nothing here hard-codes an offset: every member is found by name in the DWARF type of the
 * RTOS's TCB (FreeRTOS TCB_t, RTX5 osRtxThread_t, Zephyr struct k_thread, ThreadX TX_THREAD,
 * the examples' struct sched_task), so a build with other configuration options, another
 * compiler or another version of the RTOS reads right as long as the members keep their names.
 * A member the build does not have (FreeRTOS without pxEndOfStack, Zephyr without
 * CONFIG_THREAD_NAME) is simply not shown.
 *
 * Reads go through a spoor_read_fn (spoor/read.h): a dump, --mem images, a live GDB server.
 * A TCB is read with one read of the whole structure (one batched request on a live target);
 * a name behind a pointer usually points into flash, which the ELF layer serves. */
#ifndef SPOOR_RTOS_H
#define SPOOR_RTOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/elf.h"
#include "spoor/error.h"
#include "spoor/read.h"
#include "spoor/regs.h"

typedef enum spoor_rtos_kind {
    SPOOR_RTOS_FREERTOS,
    SPOOR_RTOS_RTX5,
    SPOOR_RTOS_ZEPHYR,
    SPOOR_RTOS_THREADX,
    SPOOR_RTOS_SCHED, /* the scheduler of examples/sched (struct sched_task, sched_current) */
    SPOOR_RTOS_KIND_COUNT
} spoor_rtos_kind;

typedef struct spoor_rtos spoor_rtos;

/* The -T names: "freertos", "rtx5", "zephyr", "threadx", "sched"; NULL for a bad kind. */
const char *spoor_rtos_kind_name(spoor_rtos_kind kind);
/* How the RTOS calls itself: "FreeRTOS", "RTX5", "Zephyr", "ThreadX", "sched". */
const char *spoor_rtos_display_name(spoor_rtos_kind kind);

/* The RTOS whose current-thread symbol the ELF has (what -T auto picks); false when none. */
bool spoor_rtos_detect(const spoor_elf *elf, spoor_rtos_kind *kind);

/* Opens the RTOS layer of elf (borrowed) for kind, a -T name or "auto" (the first RTOS whose
 * current-thread symbol the ELF has). NULL with the error set: "-T NAME: unknown RTOS (known:
 * ...)", "ELF: no RTOS found (none of pxCurrentTCB, osRtxInfo, _kernel, _tx_thread_current_ptr,
 * sched_current)", "ELF: no DWARF type TCB_t: build with -g", "ELF: TCB_t has no member
 * pcTaskName". */
spoor_rtos *spoor_rtos_open(const spoor_elf *elf, const char *kind);
void spoor_rtos_close(spoor_rtos *r);

spoor_rtos_kind spoor_rtos_kind_of(const spoor_rtos *r);
/* The address of the current-thread pointer (what the DWT comparator watches). */
uint32_t spoor_rtos_current_address(const spoor_rtos *r);
/* The size of a TCB (the DWARF type's byte size). */
uint32_t spoor_rtos_tcb_size(const spoor_rtos *r);

typedef struct spoor_rtos_thread {
    uint32_t tcb;
    char name[48]; /* "" when the TCB has no name */
    bool has_prio;
    int32_t prio; /* as the RTOS stores it */
    bool has_entry;
    uint32_t entry;         /* the thread's entry function (Thumb bit clear) */
    const char *entry_from; /* "tcb" (a member holds it) or "stack" (the initial frame) */
    bool has_sp;
    uint32_t sp; /* the saved stack pointer (valid while the thread is not running) */
    /* The kernel's own record of the thread's state, as the TCB holds it (spoor_rtos_state
     * decodes it): Zephyr base.thread_state, RTX5 state, ThreadX tx_thread_state; FreeRTOS has
     * none (its lists say). wait_word: what it waits on (Zephyr base.pended_on, ThreadX
     * tx_thread_suspend_control_block, FreeRTOS xEventListItem.pxContainer, RTX5 thread_prev);
     * timeout_link: Zephyr base.timeout.node.next (non-zero: a timeout is running). */
    bool has_state_word, has_wait_word, has_timeout_link;
    uint32_t state_word, wait_word, timeout_link;
} spoor_rtos_thread;

/* Reads the TCB at tcb: one read of the whole TCB, then the name when it is behind a pointer
 * and the initial stack frame when the entry is looked for there. false with the error set
 * when the TCB cannot be read ("TCB 0x...: memory not available") or is not one (RTX5's id
 * byte is not osRtxIdThread). tcb 0 is no thread: false. */
bool spoor_rtos_read_thread(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t tcb,
                            spoor_rtos_thread *out);

/* Re-reads only the priority (one small read); false when it cannot be read. */
bool spoor_rtos_read_priority(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t tcb,
                              int32_t *prio);

/* The RTOS's name of a priority value (RTX5: the osPriority_t enumerator, "osPriorityNormal"),
 * from the DWARF enumeration; NULL when the RTOS has no names or the value has none. */
const char *spoor_rtos_priority_name(const spoor_rtos *r, int32_t prio);

/* The idle thread's TCB: FreeRTOS xIdleTaskHandle(s), RTX5 osRtxInfo.thread.idle, Zephyr
 * z_idle_threads, the example's sched_idle; ThreadX has no idle thread (its scheduler waits with
 * no current thread: TCB 0). false with the error set when the ELF has none ("ELF: no idle
 * thread found (...)") or the RTOS's record of it cannot be read ("idle thread pointer
 * xIdleTaskHandle at 0x20000010: memory not available"). */
bool spoor_rtos_read_idle(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t *tcb);

/* Reads the current-thread pointer; false when it cannot be read. */
bool spoor_rtos_read_current(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t *tcb);

/* One vocabulary for every RTOS's thread states. */
typedef enum spoor_thread_state {
    SPOOR_THREAD_UNKNOWN,    /* the kernel's state word holds a value spoor does not know */
    SPOOR_THREAD_RUNNING,    /* the current thread */
    SPOOR_THREAD_READY,      /* may run */
    SPOOR_THREAD_BLOCKED,    /* waits on an object (wait, object say which) */
    SPOOR_THREAD_SLEEPING,   /* waits for time only */
    SPOOR_THREAD_SUSPENDED,  /* stopped until resumed (or not started yet) */
    SPOOR_THREAD_TERMINATED, /* ended or deleted */
    SPOOR_THREAD_UNLISTED,   /* the current-thread pointer at a TCB on no thread list */
} spoor_thread_state;

/* A thread the RTOS knows, and the list it was found on. */
typedef struct spoor_rtos_thread_ref {
    uint32_t tcb;
    spoor_thread_state state; /* what the list says (spoor_rtos_state_of tells more):
                                 RUNNING for the current thread; READY, SLEEPING (a delay
                                 list), BLOCKED, SUSPENDED, TERMINATED (a deleted task);
                                 UNLISTED: the current-thread pointer points at a TCB on none
                                 of the RTOS's thread lists (Zephyr's start-up dummy thread on
                                 the interrupt stack, a deleted thread): not a thread to read */
    const char *list;         /* the list it was found on ("xDelayedTaskList1",
                                 "_kernel.threads"); NULL for the current-thread pointer */
} spoor_rtos_thread_ref;

/* What a blocked thread waits on. */
typedef enum spoor_thread_wait {
    SPOOR_WAIT_NONE,
    SPOOR_WAIT_OBJECT, /* a kernel object of a kind the kernel does not record (Zephyr) */
    SPOOR_WAIT_SEMAPHORE,
    SPOOR_WAIT_MUTEX,
    SPOOR_WAIT_QUEUE,      /* a message queue */
    SPOOR_WAIT_QUEUE_SEND, /* room in a message queue */
    SPOOR_WAIT_EVENT_FLAGS,
    SPOOR_WAIT_THREAD_FLAGS, /* RTX5 thread flags, FreeRTOS task notifications */
    SPOOR_WAIT_JOIN,         /* another thread's end */
    SPOOR_WAIT_MEMORY,       /* a memory pool or block */
    SPOOR_WAIT_OTHER,        /* a kind only the kernel's own name says (kernel_state) */
} spoor_thread_wait;

typedef struct spoor_rtos_state {
    spoor_thread_state state;
    spoor_thread_wait wait; /* SPOOR_THREAD_BLOCKED: on what; SPOOR_WAIT_NONE otherwise */
    char kernel[96];        /* the kernel's own name of the state: "_THREAD_PENDING",
                               "TX_SEMAPHORE_SUSP", "osRtxThreadWaitingMutex", the FreeRTOS list
                               ("xDelayedTaskList1") */
    uint32_t object;        /* the object waited on; 0 when not known */
    char object_name[64];   /* the variable it is (or is in: "rx_queue+8"); "" when none */
} spoor_rtos_state;

/* "running", "ready", "blocked", "sleeping", "suspended", "terminated", "unlisted",
 * "unknown". */
const char *spoor_thread_state_name(spoor_thread_state s);
/* "semaphore", "mutex", "message queue", "message queue (send)", "event flags", "thread
 * flags", "join", "memory", "object", "other"; NULL for SPOOR_WAIT_NONE. */
const char *spoor_thread_wait_name(spoor_thread_wait w);

/* The state of thread t (read with spoor_rtos_read_thread) found as ref: the current thread is
 * running; otherwise the kernel's state word decides (Zephyr: the bits of the layout
 * spoor_rtos_layout says; RTX5: osRtxThread* and osRtxThreadWaiting* values; ThreadX: TX_READY
 * ... TX_PRIORITY_CHANGE), FreeRTOS's the list ref was found on and, for a task whose event
 * list item is on a queue's waiting list, that queue (read through read). The object waited
 * on is named from the ELF's variables (DWARF). */
void spoor_rtos_state_of(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                         const spoor_rtos_thread_ref *ref, const spoor_rtos_thread *t,
                         spoor_rtos_state *out);

/* One line: "blocked on semaphore sem_ready", "blocked on mutex 0x20000140", "sleeping",
 * "ready". */
void spoor_rtos_state_text(const spoor_rtos_state *s, char *buf, size_t cap);

/* How the kernel's state word is read for this ELF, one line (Zephyr: which thread_state bit
 * layout and why, "Zephyr 2.3-4.0 bits (_THREAD_PRESTART at bit 2): no version in the ELF,
 * assumed"); NULL when the RTOS has one layout. */
const char *spoor_rtos_layout(const spoor_rtos *r);

/* The function every thread of this RTOS starts in and never returns from (Zephyr
 * z_thread_entry, ThreadX _tx_thread_shell_entry), NULL when the RTOS has none (RTX5, FreeRTOS:
 * the thread's own function, with the task-exit hook as its return address). */
const char *spoor_rtos_thread_root(const spoor_rtos *r);

/* What spoor_rtos_threads could not give: threads found beyond max, lists it could not walk to
 * their end (a read that failed, a null or wild link, a list that loops, one longer than 1,024
 * items) and the first reason, one line naming the list: "xDelayedTaskList1: memory at
 * 0x20000400 not available", "_kernel.threads: the list loops (TCB 0x20000100 comes again)". */
typedef struct spoor_rtos_walk {
    size_t not_shown;   /* threads found but not written (more than max) */
    unsigned lists_cut; /* lists (or the current-thread pointer) not read to their end */
    char why[160];      /* the first list cut and why; "" when every list was read */
} spoor_rtos_walk;

/* Every thread on the RTOS's lists (FreeRTOS: ready, pending, delayed, suspended and
 * termination lists; RTX5: ready, delay, wait and terminate lists; Zephyr: the thread monitor
 * list; ThreadX: the created list; the example: sched_tasks), the current thread first, each
 * once. Writes at most max, returns how many were written. Lists are walked with a bound and a
 * loop check; what was not walked, and why, goes to *walk (may be NULL). */
size_t spoor_rtos_threads(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                          spoor_rtos_thread_ref *out, size_t max, spoor_rtos_walk *walk);

/* Whether tcb is one of the RTOS's threads: on one of its lists, or it cannot be told (a list
 * not walked to its end, more threads than looked at, an RTOS whose running thread leaves the
 * lists: RTX5). false: a TCB on no list (Zephyr's start-up dummy thread, a deleted thread).
 * ref (may be NULL): how it was found, for spoor_rtos_state_of ("unlisted" when false; the
 * generic "ready" when it could not be told). */
bool spoor_rtos_listed(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t tcb,
                       spoor_rtos_thread_ref *ref);

/* Whether a thread's state or listing needs the RTOS's lists walked: false for RTX5, whose state
 * word says everything (running included) and whose running thread is on no list, so
 * spoor_rtos_listed reads nothing and answers true with a "ready" ref. */
bool spoor_rtos_state_needs_lists(const spoor_rtos *r);

/* spoor_rtos_listed on lists already walked: refs (n of them) and walk from spoor_rtos_threads
 * (for a caller that asks about many TCBs, with one walk). */
bool spoor_rtos_find(const spoor_rtos *r, const spoor_rtos_thread_ref *refs, size_t n,
                     const spoor_rtos_walk *walk, uint32_t tcb, spoor_rtos_thread_ref *ref);

/* The registers a thread that is not running resumes with, from the context its RTOS's port
 * saved at its saved SP (t from spoor_rtos_read_thread): r4-r11 and the hardware exception
 * frame. The port's layout comes from the RTOS and the ELF (its build attributes and symbols:
 * FreeRTOS's ARM_CM0/CM3, ARM_CM4F, ARM_CM33_NTZ and ARM_CM33 ports; not the float ABI, which
 * does not tell them apart). false with the error set when the port's layout is not known or
 * refused (an MPU port, ARMv8-M baseline, a thread in the secure state) or the stack cannot be
 * read. */
bool spoor_rtos_saved_regs(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                           const spoor_rtos_thread *t, spoor_regs *out);

/* The entry function of thread t from the outermost frame of its own backtrace, for a thread
 * whose TCB holds no entry and whose initial stack frame is overwritten (every FreeRTOS task of
 * a system that has run). running: the CPU's registers when t is the running thread; NULL for
 * a thread that is not running, whose saved context (spoor_rtos_saved_regs) is unwound. Only a
 * walk that ends where the thread started names it: at a task-exit hook (SPOOR_STOP_TASK_ENTRY)
 * or at the end of the stack (a return address 0 or 0xFFFFFFFF: SPOOR_STOP_END_OF_STACK). false
 * with the error set otherwise. */
bool spoor_rtos_entry_from_backtrace(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                                     const spoor_rtos_thread *t, const spoor_regs *running,
                                     uint32_t *entry);

#endif
