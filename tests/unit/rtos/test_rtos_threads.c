/* The RTOS layer (spoor/rtos.h, spoor/stack_usage.h) on hand-made memory images: the ELFs are the
 * test firmware tests/e2e/fw/rtos_ctx_fw.c built per kernel (-DFW_STATES, M3), whose DWARF
 * carries the kernels' own type and member names (TCB_t, struct k_thread, osRtxThread_t,
 * TX_THREAD, their lists, objects and globals); the memory is a RAM image written here (a
 * spoor_mem of raw bytes, with a gap where a test wants memory that is not there), with the TCBs,
 * lists, saved contexts and stacks laid out with the offsets the cross compiler gives those
 * types (rtos_offsets.h, generated from rtos_offsets.c), not the ones the layer finds. State
 * values are the kernels' own (Zephyr kernel_structs.h, CMSIS-RTX rtx_os.h, ThreadX tx_api.h,
 * FreeRTOS tasks.c taskWAITING_NOTIFICATION). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rtos_offsets.h"
#include "spoor/elf.h"
#include "spoor/error.h"
#include "spoor/memory.h"
#include "spoor/rtos.h"
#include "spoor/stack_usage.h"

#define RAM 0x20000000u
#define RAM_SIZE 0x20000u
#define POOL 0x20010000u    /* the TCBs, stacks and strings a test lays out */
#define NOWHERE 0x30000000u /* no layer holds it */
#define MAX_REFS 32

static uint8_t ram[RAM_SIZE];
static uint32_t pool_next;
static uint32_t hole_at, hole_len; /* a gap in the image (hole_len 0: none) */

typedef struct kernel {
    spoor_elf *elf;
    spoor_rtos *r;
    spoor_mem *m;
} kernel;

/* ---- the image ---------------------------------------------------------------------------- */

static uint8_t *at(uint32_t addr, uint32_t len)
{
    if (addr >= RAM && addr - RAM + (uint64_t)len <= RAM_SIZE)
        return ram + (addr - RAM);
    fail_msg("0x%08x+%u is outside the image", addr, len);
    return ram; /* not reached (fail_msg does not return); keeps gcc -O2's bounds check quiet */
}

static void w32(uint32_t addr, uint32_t v)
{
    uint8_t *p = at(addr, 4);
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void w8(uint32_t addr, uint8_t v)
{
    *at(addr, 1) = v;
}

static uint32_t alloc(uint32_t size)
{
    uint32_t a = pool_next;
    pool_next = (pool_next + size + 7u) & ~7u;
    at(a, size);
    return a;
}

/* A NUL-terminated string in the pool: its address. */
static uint32_t string(const char *s)
{
    uint32_t a = alloc((uint32_t)strlen(s) + 1u);
    memcpy(at(a, (uint32_t)strlen(s) + 1u), s, strlen(s) + 1u);
    return a;
}

static void put_bytes(uint32_t addr, const char *s, size_t n)
{
    memcpy(at(addr, (uint32_t)n), s, n);
}

/* The view the layer reads: the image (without the hole) and the ELF's read-only contents. */
static void map(kernel *k)
{
    spoor_mem_free(k->m);
    k->m = spoor_mem_new();
    assert_non_null(k->m);
    if (!hole_len || hole_at == RAM) {
        uint32_t from = hole_len ? RAM + hole_len : RAM;
        assert_true(
            spoor_mem_add_bytes(k->m, from, ram + (from - RAM), RAM + RAM_SIZE - from, "ram"));
    } else {
        assert_true(spoor_mem_add_bytes(k->m, RAM, ram, hole_at - RAM, "ram"));
        uint32_t rest = hole_at + hole_len;
        assert_true(spoor_mem_add_bytes(k->m, rest, ram + (rest - RAM), RAM + RAM_SIZE - rest,
                                        "ram above the hole"));
    }
    assert_true(spoor_mem_add_elf(k->m, k->elf));
}

static uint32_t sym(const kernel *k, const char *name)
{
    uint32_t addr, size;
    if (!spoor_elf_symbol(k->elf, name, &addr, &size))
        fail_msg("the test firmware has no symbol %s", name);
    return addr;
}

static void open_kernel(kernel *k, const char *rtos, spoor_rtos_kind kind)
{
    char path[512];
    snprintf(path, sizeof path, "%s/rtos_ctx-%s-m3.elf", SPOOR_UNIT_FW_DIR, rtos);
    memset(k, 0, sizeof *k);
    memset(ram, 0, sizeof ram);
    pool_next = POOL;
    hole_at = hole_len = 0;
    k->elf = spoor_elf_open(path);
    if (!k->elf)
        fail_msg("%s: %s", path, spoor_last_error());
    spoor_rtos_kind detected;
    assert_true(spoor_rtos_detect(k->elf, &detected));
    assert_int_equal(detected, kind);
    k->r = spoor_rtos_open(k->elf, "auto");
    if (!k->r)
        fail_msg("%s: %s", path, spoor_last_error());
    assert_int_equal(spoor_rtos_kind_of(k->r), kind);
}

static void close_kernel(kernel *k)
{
    spoor_mem_free(k->m);
    spoor_rtos_close(k->r);
    spoor_elf_close(k->elf);
}

static size_t threads(kernel *k, spoor_rtos_thread_ref *refs, spoor_rtos_walk *walk)
{
    map(k);
    return spoor_rtos_threads(k->r, spoor_mem_reader, k->m, refs, MAX_REFS, walk);
}

/* The ref of tcb among refs; fails when it is not there or there twice. */
static const spoor_rtos_thread_ref *ref_of(const spoor_rtos_thread_ref *refs, size_t n,
                                           uint32_t tcb)
{
    const spoor_rtos_thread_ref *found = NULL;
    for (size_t i = 0; i < n; i++)
        if (refs[i].tcb == tcb) {
            if (found)
                fail_msg("TCB 0x%08x listed twice", tcb);
            found = &refs[i];
        }
    if (!found)
        fail_msg("TCB 0x%08x not listed", tcb);
    return found;
}

static void read_thread(kernel *k, uint32_t tcb, spoor_rtos_thread *t)
{
    if (!spoor_rtos_read_thread(k->r, spoor_mem_reader, k->m, tcb, t))
        fail_msg("TCB 0x%08x: %s", tcb, spoor_last_error());
}

/* The state of tcb as the walk found it, as one line ("blocked on semaphore sem_ready"), and
 * the kernel's own words in kernel_words. */
static const char *state_line(kernel *k, const spoor_rtos_thread_ref *refs, size_t n, uint32_t tcb,
                              char *kernel_words, size_t cap)
{
    static char line[160];
    spoor_rtos_thread t;
    spoor_rtos_state s;
    read_thread(k, tcb, &t);
    spoor_rtos_state_of(k->r, spoor_mem_reader, k->m, ref_of(refs, n, tcb), &t, &s);
    spoor_rtos_state_text(&s, line, sizeof line);
    if (kernel_words)
        snprintf(kernel_words, cap, "%s", s.kernel);
    return line;
}

/* The hardware frame of a thread switched out: r0-r3, r12, LR, PC, xPSR from base. */
static void put_frame(uint32_t frame, uint32_t base, uint32_t pc)
{
    static const unsigned regs[6] = {0, 1, 2, 3, 12, 14};
    for (int i = 0; i < 6; i++)
        w32(frame + 4u * (uint32_t)i, base + regs[i]);
    w32(frame + 24, pc);
    w32(frame + 28, 0x01000000u);
}

static void put_r4_r11(uint32_t addr, uint32_t base)
{
    for (uint32_t i = 0; i < 8; i++)
        w32(addr + 4 * i, base + 4 + i);
}

/* The registers a switched-out thread resumes with: r4-r11 from base, the frame of put_frame
 * at frame. */
static void check_resume(kernel *k, const spoor_rtos_thread *t, uint32_t base, uint32_t frame,
                         uint32_t pc)
{
    spoor_regs regs;
    if (!spoor_rtos_saved_regs(k->r, spoor_mem_reader, k->m, t, &regs))
        fail_msg("TCB 0x%08x: %s", t->tcb, spoor_last_error());
    for (unsigned i = 4; i <= 11; i++)
        assert_int_equal(regs.r[i], base + i);
    for (unsigned i = 0; i <= 3; i++)
        assert_int_equal(regs.r[i], base + i);
    assert_int_equal(regs.r[12], base + 12);
    assert_int_equal(regs.r[14], base + 14);
    assert_int_equal(regs.r[15], pc);
    assert_int_equal(regs.r[13], frame + 32);
}

/* ---- FreeRTOS ----------------------------------------------------------------------------- */

static const char *const freertos_lists[] = {"xPendingReadyList", "xDelayedTaskList1",
                                             "xDelayedTaskList2", "xSuspendedTaskList",
                                             "xTasksWaitingTermination"};

/* list.c vListInitialise: the end item links to itself */
static void fr_list_init(uint32_t list)
{
    uint32_t end = list + FR_LIST_END;
    w32(list + FR_LIST_COUNT, 0);
    w32(list + FR_LIST_INDEX, end);
    w32(end + FR_ITEM_VALUE, 0xFFFFFFFFu);
    w32(end + FR_ITEM_NEXT, end);
    w32(end + FR_ITEM_PREV, end);
}

/* list.c vListInsertEnd (before the end item) */
static void fr_list_insert(uint32_t list, uint32_t item)
{
    uint32_t end = list + FR_LIST_END, last = 0;
    memcpy(&last, at(end + FR_ITEM_PREV, 4), 4); /* little-endian host */
    w32(item + FR_ITEM_NEXT, end);
    w32(item + FR_ITEM_PREV, last);
    w32(last + FR_ITEM_NEXT, item);
    w32(end + FR_ITEM_PREV, item);
    w32(item + FR_ITEM_CONTAINER, list);
    uint32_t count;
    memcpy(&count, at(list + FR_LIST_COUNT, 4), 4);
    w32(list + FR_LIST_COUNT, count + 1);
}

/* Every task list of tasks.c initialised (empty), as vTaskStartScheduler leaves them. */
static void fr_lists(const kernel *k)
{
    fr_list_init(sym(k, "pxReadyTasksLists"));
    fr_list_init(sym(k, "pxReadyTasksLists") + FR_LIST_SIZE);
    for (size_t i = 0; i < sizeof freertos_lists / sizeof freertos_lists[0]; i++)
        fr_list_init(sym(k, freertos_lists[i]));
}

/* A task: its TCB with name and priority, a 256-byte stack, on list (0: none). */
static uint32_t fr_task(const char *name, uint32_t prio, uint32_t list)
{
    uint32_t tcb = alloc(FR_TCB_SIZE), stack = alloc(256);
    put_bytes(tcb + FR_TCB_NAME, name, strlen(name) + 1);
    w32(tcb + FR_TCB_PRIO, prio);
    w32(tcb + FR_TCB_STACK, stack);
    w32(tcb + FR_TCB_END, stack + 252);
    w32(tcb + FR_TCB_STATE_ITEM + FR_ITEM_OWNER, tcb);
    w32(tcb + FR_TCB_EVENT_ITEM + FR_ITEM_OWNER, tcb);
    if (list)
        fr_list_insert(list, tcb + FR_TCB_STATE_ITEM);
    return tcb;
}

static void test_freertos_lists(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "freertos", SPOOR_RTOS_FREERTOS);
    fr_lists(&k);
    uint32_t ready1 = sym(&k, "pxReadyTasksLists") + FR_LIST_SIZE;
    uint32_t a = fr_task("alpha", 1, ready1), b = fr_task("beta", 1, ready1);
    uint32_t c = fr_task("gamma", 1, sym(&k, "xDelayedTaskList1"));
    uint32_t d = fr_task("delta", 0, sym(&k, "xSuspendedTaskList"));
    uint32_t e = fr_task("eps", 0, sym(&k, "xTasksWaitingTermination"));
    uint32_t f = fr_task("phi", 1, sym(&k, "xPendingReadyList"));
    w32(sym(&k, "pxCurrentTCB"), a);

    spoor_rtos_thread_ref refs[MAX_REFS];
    spoor_rtos_walk walk;
    size_t n = threads(&k, refs, &walk);
    assert_int_equal(n, 6);
    assert_int_equal(walk.lists_cut, 0);
    assert_int_equal(walk.not_shown, 0);
    assert_string_equal(walk.why, "");
    /* the current thread first, then the lists in tasks.c's order */
    assert_int_equal(refs[0].tcb, a);
    assert_int_equal(refs[0].state, SPOOR_THREAD_RUNNING);
    assert_null(refs[0].list);
    assert_int_equal(refs[1].tcb, b);
    assert_int_equal(refs[1].state, SPOOR_THREAD_READY);
    assert_string_equal(refs[1].list, "pxReadyTasksLists");
    assert_int_equal(refs[2].tcb, f);
    assert_string_equal(refs[2].list, "xPendingReadyList");
    assert_int_equal(ref_of(refs, n, c)->state, SPOOR_THREAD_SLEEPING);
    assert_string_equal(ref_of(refs, n, c)->list, "xDelayedTaskList1");
    assert_int_equal(ref_of(refs, n, d)->state, SPOOR_THREAD_SUSPENDED);
    assert_int_equal(ref_of(refs, n, e)->state, SPOOR_THREAD_TERMINATED);

    /* fewer slots than threads: the rest counted */
    n = spoor_rtos_threads(k.r, spoor_mem_reader, k.m, refs, 2, &walk);
    assert_int_equal(n, 2);
    assert_int_equal(walk.not_shown, 4);
    assert_int_equal(walk.lists_cut, 0);

    /* the current TCB on no list: not one of the kernel's threads */
    uint32_t stray = fr_task("stray", 1, 0);
    w32(sym(&k, "pxCurrentTCB"), stray);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 7);
    assert_int_equal(refs[0].tcb, stray);
    assert_int_equal(refs[0].state, SPOOR_THREAD_UNLISTED);
    spoor_rtos_thread_ref ref;
    assert_false(spoor_rtos_listed(k.r, spoor_mem_reader, k.m, stray, &ref));
    assert_int_equal(ref.state, SPOOR_THREAD_UNLISTED);
    assert_true(spoor_rtos_listed(k.r, spoor_mem_reader, k.m, b, &ref));
    assert_string_equal(ref.list, "pxReadyTasksLists");
    close_kernel(&k);
}

static void test_freertos_list_faults(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "freertos", SPOOR_RTOS_FREERTOS);
    fr_lists(&k);
    uint32_t ready1 = sym(&k, "pxReadyTasksLists") + FR_LIST_SIZE;
    uint32_t a = fr_task("alpha", 1, ready1), b = fr_task("beta", 1, ready1);
    uint32_t c = fr_task("gamma", 1, ready1);
    w32(sym(&k, "pxCurrentTCB"), a);
    spoor_rtos_thread_ref refs[MAX_REFS];
    spoor_rtos_walk walk;
    char want[160];

    /* c's item links back to b's: a loop, cut there; every task found once, and the current
     * thread stays running (a list was cut: whether it is listed cannot be told) */
    w32(c + FR_TCB_STATE_ITEM + FR_ITEM_NEXT, b + FR_TCB_STATE_ITEM);
    size_t n = threads(&k, refs, &walk);
    assert_int_equal(n, 3);
    assert_int_equal(walk.lists_cut, 1);
    snprintf(want, sizeof want, "pxReadyTasksLists[1]: the list loops (item 0x%08x comes again)",
             b + FR_TCB_STATE_ITEM);
    assert_string_equal(walk.why, want);
    ref_of(refs, n, c);

    /* a null link after b */
    w32(b + FR_TCB_STATE_ITEM + FR_ITEM_NEXT, 0);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 2);
    assert_string_equal(walk.why, "pxReadyTasksLists[1]: a null link after 2 items");

    /* b's item links into memory the image does not hold */
    w32(b + FR_TCB_STATE_ITEM + FR_ITEM_NEXT, NOWHERE);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 2);
    snprintf(want, sizeof want, "pxReadyTasksLists[1]: memory at 0x%08x not available",
             NOWHERE + FR_ITEM_OWNER);
    assert_string_equal(walk.why, want);
    spoor_rtos_thread_ref ref;
    assert_true(spoor_rtos_listed(k.r, spoor_mem_reader, k.m, 0x20011230u, &ref));
    assert_int_equal(ref.state, SPOOR_THREAD_READY); /* cannot be told */

    /* the current-thread pointer in a gap of the image: every list still walked */
    w32(b + FR_TCB_STATE_ITEM + FR_ITEM_NEXT, c + FR_TCB_STATE_ITEM);
    w32(c + FR_TCB_STATE_ITEM + FR_ITEM_NEXT, ready1 + FR_LIST_END);
    hole_at = sym(&k, "pxCurrentTCB");
    hole_len = 4;
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 3);
    assert_int_equal(walk.lists_cut, 1);
    snprintf(want, sizeof want, "pxCurrentTCB: memory at 0x%08x not available", hole_at);
    assert_string_equal(walk.why, want);
    assert_int_equal(refs[0].state, SPOOR_THREAD_READY);
    close_kernel(&k);
}

static void test_freertos_thread(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "freertos", SPOOR_RTOS_FREERTOS);
    fr_lists(&k);
    uint32_t a = fr_task("alpha", 3, 0);
    /* the initial frame ARM_CM3 pxPortInitialiseStack leaves one word below pxEndOfStack (its
     * "pxTopOfStack--" before the xPSR): the entry */
    uint32_t stack, entry = sym(&k, "alpha_main") & ~1u;
    memcpy(&stack, at(a + FR_TCB_STACK, 4), 4);
    put_frame(stack + 252 - 32, 0, entry);
    map(&k);
    spoor_rtos_thread t;
    read_thread(&k, a, &t);
    assert_string_equal(t.name, "alpha");
    assert_true(t.has_prio);
    assert_int_equal(t.prio, 3);
    assert_true(t.has_entry);
    assert_int_equal(t.entry, entry);
    assert_string_equal(t.entry_from, "stack");

    /* a name of control bytes and a full 16-byte array without its NUL */
    put_bytes(a + FR_TCB_NAME, "a\tb\x80", 5);
    map(&k);
    read_thread(&k, a, &t);
    assert_string_equal(t.name, "a?b?");
    put_bytes(a + FR_TCB_NAME, "0123456789abcdef", 16);
    map(&k);
    read_thread(&k, a, &t);
    assert_string_equal(t.name, "0123456789abcdef");

    /* not a frame any more (xPSR without the Thumb bit): no entry */
    w32(stack + 252 - 4, 0);
    map(&k);
    read_thread(&k, a, &t);
    assert_false(t.has_entry);

    /* a TCB the image does not hold; TCB 0 */
    assert_false(spoor_rtos_read_thread(k.r, spoor_mem_reader, k.m, NOWHERE, &t));
    char want[96];
    snprintf(want, sizeof want, "TCB 0x%08x: memory not available", NOWHERE);
    assert_non_null(strstr(spoor_last_error(), want));
    assert_false(spoor_rtos_read_thread(k.r, spoor_mem_reader, k.m, 0, &t));

    /* the priority alone */
    int32_t prio = -1;
    assert_true(spoor_rtos_read_priority(k.r, spoor_mem_reader, k.m, a, &prio));
    assert_int_equal(prio, 3);
    close_kernel(&k);
}

/* A queue (Queue_t) at q with both waiting lists initialised. */
static void fr_queue(uint32_t q, uint32_t head, uint32_t item_size)
{
    fr_list_init(q + FR_QUEUE_SEND);
    fr_list_init(q + FR_QUEUE_RECV);
    w32(q + FR_QUEUE_HEAD, head);
    w32(q + FR_QUEUE_ITEM_SIZE, item_size);
}

static void test_freertos_states(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "freertos", SPOOR_RTOS_FREERTOS);
    fr_lists(&k);
    uint32_t ready1 = sym(&k, "pxReadyTasksLists") + FR_LIST_SIZE;
    uint32_t delayed = sym(&k, "xDelayedTaskList1"), suspended = sym(&k, "xSuspendedTaskList");
    uint32_t sem = sym(&k, "sem_ready"), mutex = sym(&k, "state_lock");
    uint32_t events = sym(&k, "events");
    uint32_t queue = sym(&k, "ucHeap") + 16; /* a queue from the heap: no variable of its own */
    fr_queue(sem, sem, 0);                   /* a semaphore: pcHead not NULL, uxItemSize 0 */
    fr_queue(mutex, 0, 0);                   /* a mutex: pcHead NULL */
    fr_queue(queue, queue + FR_QUEUE_SIZE, 4);
    fr_list_init(events + FR_GROUP_WAITING);
    w32(sym(&k, "xQueueRegistry") + FR_REGISTRY_NAME, string("rx_queue"));
    w32(sym(&k, "xQueueRegistry") + FR_REGISTRY_HANDLE, queue);

    uint32_t run = fr_task("run", 1, ready1), ready = fr_task("ready", 1, ready1);
    uint32_t on_sem = fr_task("on_sem", 1, delayed), on_mutex = fr_task("on_mutex", 1, suspended);
    uint32_t on_queue = fr_task("on_queue", 1, delayed);
    uint32_t sending = fr_task("sending", 1, delayed);
    uint32_t on_bits = fr_task("on_bits", 1, suspended);
    uint32_t notified = fr_task("notified", 1, suspended);
    uint32_t sleeper = fr_task("sleeper", 1, delayed), pauser = fr_task("pauser", 1, suspended);
    uint32_t ended = fr_task("ended", 1, sym(&k, "xTasksWaitingTermination"));
    fr_list_insert(sem + FR_QUEUE_RECV, on_sem + FR_TCB_EVENT_ITEM);
    fr_list_insert(mutex + FR_QUEUE_RECV, on_mutex + FR_TCB_EVENT_ITEM);
    fr_list_insert(queue + FR_QUEUE_RECV, on_queue + FR_TCB_EVENT_ITEM);
    fr_list_insert(queue + FR_QUEUE_SEND, sending + FR_TCB_EVENT_ITEM);
    fr_list_insert(events + FR_GROUP_WAITING, on_bits + FR_TCB_EVENT_ITEM);
    w8(notified + FR_TCB_NOTIFY_STATE, 1); /* taskWAITING_NOTIFICATION */
    w8(pauser + FR_TCB_NOTIFY_STATE, 2);   /* taskNOTIFICATION_RECEIVED: not waiting */
    w32(sym(&k, "pxCurrentTCB"), run);

    spoor_rtos_thread_ref refs[MAX_REFS];
    spoor_rtos_walk walk;
    size_t n = threads(&k, refs, &walk);
    assert_int_equal(n, 11);
    assert_int_equal(walk.lists_cut, 0);
    char words[96];
    assert_string_equal(state_line(&k, refs, n, run, NULL, 0), "running");
    assert_string_equal(state_line(&k, refs, n, ready, words, sizeof words), "ready");
    assert_string_equal(words, "pxReadyTasksLists");
    assert_string_equal(state_line(&k, refs, n, on_sem, words, sizeof words),
                        "blocked on semaphore sem_ready");
    assert_string_equal(words, "xDelayedTaskList1|xTasksWaitingToReceive");
    assert_string_equal(state_line(&k, refs, n, on_mutex, NULL, 0), "blocked on mutex state_lock");
    assert_string_equal(state_line(&k, refs, n, on_queue, NULL, 0),
                        "blocked on message queue rx_queue");
    assert_string_equal(state_line(&k, refs, n, sending, words, sizeof words),
                        "blocked on message queue (send) rx_queue");
    assert_string_equal(words, "xDelayedTaskList1|xTasksWaitingToSend");
    assert_string_equal(state_line(&k, refs, n, on_bits, words, sizeof words),
                        "blocked on event flags events");
    assert_string_equal(words, "xSuspendedTaskList|xTasksWaitingForBits");
    assert_string_equal(state_line(&k, refs, n, notified, words, sizeof words),
                        "blocked on thread flags");
    assert_string_equal(words, "xSuspendedTaskList|taskWAITING_NOTIFICATION");
    assert_string_equal(state_line(&k, refs, n, sleeper, NULL, 0), "sleeping");
    assert_string_equal(state_line(&k, refs, n, pauser, NULL, 0), "suspended");
    assert_string_equal(state_line(&k, refs, n, ended, NULL, 0), "terminated");
    close_kernel(&k);
}

static void test_freertos_context_and_stack(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "freertos", SPOOR_RTOS_FREERTOS);
    fr_lists(&k);
    uint32_t a = fr_task("alpha", 1, 0), stack;
    memcpy(&stack, at(a + FR_TCB_STACK, 4), 4);
    /* ARM_CM3 port.c (no vPortEnableVFP in an M3 build): r4-r11 at pxTopOfStack, the frame */
    uint32_t top = stack + 160, pc = sym(&k, "alpha_stage_c") & ~1u;
    put_r4_r11(top, 0xA1000000u);
    put_frame(top + 32, 0xA1000000u, pc);
    w32(a + FR_TCB_TOP, top);
    memset(at(stack, 100), 0xA5, 100); /* tskSTACK_FILL_BYTE, never written above 100 bytes */
    map(&k);
    spoor_rtos_thread t;
    read_thread(&k, a, &t);
    assert_true(t.has_sp);
    assert_int_equal(t.sp, top);
    check_resume(&k, &t, 0xA1000000u, top + 32, pc);

    spoor_stack_usage u;
    assert_true(spoor_stack_usage_thread(k.r, spoor_mem_reader, k.m, &t, true, t.sp, false, &u));
    assert_int_equal(u.low, stack);
    assert_true(u.has_high);
    assert_int_equal(u.high, stack + 256);
    assert_int_equal(u.size, 256);
    assert_int_equal(u.used, 256 - 160);
    assert_true(u.filled);
    assert_int_equal(u.free_min, 100);
    assert_int_equal(u.peak, 156);
    assert_false(u.overflowed);
    assert_string_equal(u.from, "pxStack/pxEndOfStack");

    /* the guard (the 16 bytes at pxStack) broken */
    w8(stack + 8, 0);
    map(&k);
    assert_true(spoor_stack_usage_thread(k.r, spoor_mem_reader, k.m, &t, true, t.sp, false, &u));
    assert_true(u.overflowed);
    assert_int_equal(u.free_min, 8);

    /* the fill runs into a gap of the image: no high-water mark, the guard was read whole */
    w8(stack + 8, 0xA5);
    hole_at = stack + 40;
    hole_len = 8;
    map(&k);
    assert_true(spoor_stack_usage_thread(k.r, spoor_mem_reader, k.m, &t, true, t.sp, false, &u));
    assert_true(u.unreadable);
    assert_int_equal(u.unreadable_at, stack + 40);
    assert_false(u.filled);
    assert_false(u.overflowed);
    assert_false(u.overflow_unknown);

    /* the saved context in the gap; an unaligned saved SP */
    hole_at = top + 8;
    map(&k);
    spoor_regs regs;
    assert_false(spoor_rtos_saved_regs(k.r, spoor_mem_reader, k.m, &t, &regs));
    char want[96];
    snprintf(want, sizeof want, "TCB 0x%08x: the saved context at 0x%08x is not available", a, top);
    assert_string_equal(spoor_last_error(), want);
    t.sp = top + 2;
    assert_false(spoor_rtos_saved_regs(k.r, spoor_mem_reader, k.m, &t, &regs));
    assert_non_null(strstr(spoor_last_error(), "is not a stack address"));
    close_kernel(&k);
}

/* ---- Zephyr ------------------------------------------------------------------------------- */

/* A thread: name, priority, state bits, a 256-byte stack; linked after prev (0: first). */
static uint32_t z_thread(const kernel *k, const char *name, uint8_t bits, uint32_t prev)
{
    uint32_t t = alloc(Z_THREAD_SIZE), stack = alloc(256);
    put_bytes(t + Z_NAME, name, strlen(name) + 1);
    w8(t + Z_PRIO, 0xFF); /* -1: a cooperative priority */
    w8(t + Z_STATE, bits);
    w32(t + Z_STACK_START, stack);
    w32(t + Z_STACK_SIZE, 256);
    w32(t + Z_ENTRY, sym(k, "alpha_main"));
    if (prev)
        w32(prev + Z_NEXT_THREAD, t);
    else
        w32(sym(k, "_kernel") + Z_KERNEL_THREADS, t);
    return t;
}

static void test_zephyr_list(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "zephyr", SPOOR_RTOS_ZEPHYR);
    uint32_t a = z_thread(&k, "alpha", 0x80, 0), b = z_thread(&k, "beta", 0x80, a);
    uint32_t c = z_thread(&k, "gamma", 0x80, b);
    w32(sym(&k, "_kernel") + Z_KERNEL_CURRENT, b);
    spoor_rtos_thread_ref refs[MAX_REFS];
    spoor_rtos_walk walk;
    size_t n = threads(&k, refs, &walk);
    assert_int_equal(n, 3);
    assert_int_equal(walk.lists_cut, 0);
    assert_int_equal(refs[0].tcb, b);
    assert_int_equal(refs[0].state, SPOOR_THREAD_RUNNING);
    assert_int_equal(refs[1].tcb, a);
    assert_string_equal(refs[1].list, "_kernel.threads");
    assert_int_equal(refs[2].tcb, c);

    spoor_rtos_thread t;
    read_thread(&k, a, &t);
    assert_string_equal(t.name, "alpha");
    assert_int_equal(t.prio, -1);
    assert_int_equal(t.entry, sym(&k, "alpha_main") & ~1u);
    assert_string_equal(t.entry_from, "tcb");

    /* c links back to a: a loop */
    w32(c + Z_NEXT_THREAD, a);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 3);
    char want[160];
    snprintf(want, sizeof want, "_kernel.threads: the list loops (TCB 0x%08x comes again)", a);
    assert_string_equal(walk.why, want);

    /* c links to a TCB the image does not hold: listed, but its link is not read, nor the TCB */
    w32(c + Z_NEXT_THREAD, NOWHERE);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 4);
    assert_int_equal(walk.lists_cut, 1);
    snprintf(want, sizeof want, "_kernel.threads: memory at 0x%08x not available",
             NOWHERE + Z_NEXT_THREAD);
    assert_string_equal(walk.why, want);
    ref_of(refs, n, NOWHERE);
    assert_false(spoor_rtos_read_thread(k.r, spoor_mem_reader, k.m, NOWHERE, &t));

    /* the current thread on no list (z_cstart's dummy thread) */
    w32(c + Z_NEXT_THREAD, 0);
    uint32_t dummy = alloc(Z_THREAD_SIZE);
    w8(dummy + Z_STATE, 0x01); /* _THREAD_DUMMY */
    w32(sym(&k, "_kernel") + Z_KERNEL_CURRENT, dummy);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 4);
    assert_int_equal(refs[0].state, SPOOR_THREAD_UNLISTED);
    assert_string_equal(state_line(&k, refs, n, dummy, NULL, 0), "unlisted");
    close_kernel(&k);
}

static void test_zephyr_states(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "zephyr", SPOOR_RTOS_ZEPHYR);
    /* the ELF's banner says zephyr-v2.5.0: bit 2 is _THREAD_PRESTART */
    assert_non_null(spoor_rtos_layout(k.r));
    assert_non_null(strstr(spoor_rtos_layout(k.r), "Zephyr 2.5"));
    struct {
        const char *name;
        uint8_t bits;
        const char *object; /* pended_on: this variable's wait queue */
        const char *line, *kernel;
    } cases[] = {
        {"run", 0x80, NULL, "running", NULL},
        {"queued", 0x80, NULL, "ready", "_THREAD_QUEUED"},
        {"on_sem", 0x02, "sem_ready", "blocked on semaphore sem_ready", "_THREAD_PENDING"},
        {"on_q", 0x02, "rx_queue", "blocked on message queue rx_queue", NULL},
        {"on_lock", 0x02, "state_lock", "blocked on mutex state_lock", NULL},
        {"on_ev", 0x02, "events", "blocked on event flags events", NULL},
        {"prestart", 0x04, NULL, "suspended", "_THREAD_PRESTART"},
        {"dead", 0x08, NULL, "terminated", "_THREAD_DEAD"},
        {"paused", 0x10, NULL, "suspended", "_THREAD_SUSPENDED"},
        {"aborting", 0x20, NULL, "terminated", "_THREAD_ABORTING"},
        {"susp_q", 0x90, NULL, "suspended", "_THREAD_SUSPENDED|_THREAD_QUEUED"},
        {"nothing", 0x00, NULL, "unknown", "no state bit"},
    };
    enum { N = sizeof cases / sizeof cases[0] };
    uint32_t tcbs[N + 2], prev = 0;
    for (size_t i = 0; i < N; i++) {
        prev = tcbs[i] = z_thread(&k, cases[i].name, cases[i].bits, prev);
        if (cases[i].object)
            w32(prev + Z_PENDED_ON, sym(&k, cases[i].object) + Z_SEM_WAIT_Q);
    }
    /* pending on something no variable holds; sleeping: no bit, its timeout linked */
    uint32_t anon = alloc(8);
    uint32_t pend = tcbs[N] = z_thread(&k, "on_anon", 0x02, prev);
    w32(pend + Z_PENDED_ON, anon);
    uint32_t sleeper = tcbs[N + 1] = z_thread(&k, "sleeper", 0x00, pend);
    w32(sleeper + Z_TIMEOUT_NEXT, anon);
    w32(sym(&k, "_kernel") + Z_KERNEL_CURRENT, tcbs[0]);

    spoor_rtos_thread_ref refs[MAX_REFS];
    spoor_rtos_walk walk;
    size_t n = threads(&k, refs, &walk);
    assert_int_equal(n, N + 2);
    char words[96];
    for (size_t i = 0; i < N; i++) {
        const char *line = state_line(&k, refs, n, tcbs[i], words, sizeof words);
        if (strcmp(line, cases[i].line))
            fail_msg("%s: \"%s\", not \"%s\"", cases[i].name, line, cases[i].line);
        if (cases[i].kernel && strcmp(words, cases[i].kernel))
            fail_msg("%s: kernel \"%s\", not \"%s\"", cases[i].name, words, cases[i].kernel);
    }
    char want[64];
    snprintf(want, sizeof want, "blocked on 0x%08x", anon);
    assert_string_equal(state_line(&k, refs, n, pend, NULL, 0), want);
    assert_string_equal(state_line(&k, refs, n, sleeper, words, sizeof words), "sleeping");
    assert_string_equal(words, "base.timeout linked");
    close_kernel(&k);
}

static void test_zephyr_context_and_stack(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "zephyr", SPOOR_RTOS_ZEPHYR);
    uint32_t a = z_thread(&k, "alpha", 0x80, 0), stack;
    memcpy(&stack, at(a + Z_STACK_START, 4), 4);
    /* swap_helper.S: r4-r11 and PSP in callee_saved, the frame at PSP (M3: no
     * mode_exc_return, a basic frame) */
    uint32_t psp = stack + 200, pc = sym(&k, "beta_leaf") & ~1u;
    put_r4_r11(a + Z_CALLEE_V1, 0xB2000000u);
    w32(a + Z_CALLEE_PSP, psp);
    put_frame(psp, 0xB2000000u, pc);
    memset(at(stack, 64), 0xAA, 64); /* CONFIG_INIT_STACKS */
    map(&k);
    spoor_rtos_thread t;
    read_thread(&k, a, &t);
    assert_int_equal(t.sp, psp);
    check_resume(&k, &t, 0xB2000000u, psp, pc);

    spoor_stack_usage u;
    assert_true(spoor_stack_usage_thread(k.r, spoor_mem_reader, k.m, &t, true, t.sp, false, &u));
    assert_int_equal(u.low, stack);
    assert_int_equal(u.high, stack + 256);
    assert_true(u.filled);
    assert_int_equal(u.free_min, 64);
    assert_false(u.overflowed);
    assert_string_equal(u.from, "stack_info.start/stack_info.size");
    /* none of the fill left, on a build that fills: used to the end */
    w8(stack, 0);
    map(&k);
    assert_true(spoor_stack_usage_thread(k.r, spoor_mem_reader, k.m, &t, true, t.sp, true, &u));
    assert_true(u.overflowed);
    assert_int_equal(u.free_min, 0);
    close_kernel(&k);
}

/* ---- RTX5 --------------------------------------------------------------------------------- */

/* A thread: id osRtxIdThread, name, priority, state, a 256-byte stack (magic word, fill). */
static uint32_t rtx_thread(const char *name, uint8_t st)
{
    uint32_t t = alloc(RTX_THREAD_SIZE), stack = alloc(256);
    w8(t + RTX_ID, 0xF1);
    w8(t + RTX_STATE, st);
    w32(t + RTX_NAME, string(name));
    w8(t + RTX_PRIORITY, 24); /* osPriorityNormal */
    w8(t + RTX_STACK_FRAME, 0xFD);
    w32(t + RTX_STACK_MEM, stack);
    w32(t + RTX_STACK_SIZE, 256);
    return t;
}

/* links tcbs (n, 0-ended) through the member at link_off from the list head at head */
static void rtx_link(uint32_t head, uint32_t link_off, const uint32_t *tcbs)
{
    uint32_t at_link = head;
    for (; *tcbs; tcbs++) {
        w32(at_link, *tcbs);
        at_link = *tcbs + link_off;
    }
    w32(at_link, 0);
}

static void test_rtx5_lists_and_states(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "rtx5", SPOOR_RTOS_RTX5);
    uint32_t info = sym(&k, "osRtxInfo");
    uint32_t run = rtx_thread("run", 0x02), r1 = rtx_thread("r1", 0x01), r2 = rtx_thread("r2", 1);
    uint32_t idle = rtx_thread("idle", 0x01);
    uint32_t sleeper = rtx_thread("sleeper", 0x13);   /* osRtxThreadWaitingDelay */
    uint32_t on_sem = rtx_thread("on_sem", 0x63);     /* osRtxThreadWaitingSemaphore */
    uint32_t behind = rtx_thread("behind", 0x53);     /* osRtxThreadWaitingMutex, 2nd waiter */
    uint32_t first = rtx_thread("first", 0x53);       /* the mutex's first waiter */
    uint32_t on_anon = rtx_thread("on_anon", 0x83);   /* osRtxThreadWaitingMessageGet */
    uint32_t flags = rtx_thread("flags", 0x33);       /* osRtxThreadWaitingThreadFlags */
    uint32_t joiner = rtx_thread("joiner", 0x23);     /* osRtxThreadWaitingJoin */
    uint32_t putter = rtx_thread("putter", 0x93);     /* osRtxThreadWaitingMessagePut */
    uint32_t paused = rtx_thread("paused", 0x03);     /* osThreadSuspend: osRtxThreadBlocked */
    uint32_t ended = rtx_thread("ended", 0x04);       /* osRtxThreadTerminated */
    uint32_t inactive = rtx_thread("inactive", 0x00); /* osRtxThreadInactive */
    uint32_t odd = rtx_thread("odd", 0xA3);           /* no such state */
    w32(info + RTX_INFO_CURR, run);
    w32(info + RTX_INFO_IDLE, idle);
    rtx_link(info + RTX_INFO_READY, RTX_THREAD_NEXT, (uint32_t[]){r1, r2, 0});
    rtx_link(info + RTX_INFO_DELAY, RTX_DELAY_NEXT, (uint32_t[]){sleeper, 0});
    rtx_link(info + RTX_INFO_WAIT, RTX_DELAY_NEXT,
             (uint32_t[]){on_sem, behind, first, on_anon, flags, joiner, putter, paused, odd, 0});
    rtx_link(info + RTX_INFO_TERMINATE, RTX_THREAD_NEXT, (uint32_t[]){ended, inactive, 0});
    /* osRtxThreadListPut: the object's thread_list, each waiter's thread_prev up to it */
    uint32_t sem = sym(&k, "sem_ready"), lock = sym(&k, "state_lock");
    w8(sem + RTX_OBJECT_ID, 0xF6);
    w32(sem + RTX_OBJECT_THREADS, on_sem);
    w32(on_sem + RTX_THREAD_PREV, sem);
    w8(lock + RTX_OBJECT_ID, 0xF5);
    w32(lock + RTX_OBJECT_THREADS, first);
    w32(first + RTX_THREAD_PREV, lock);
    w32(first + RTX_THREAD_NEXT, behind);
    w32(behind + RTX_THREAD_PREV, first);
    /* a message queue from a memory pool: no variable, its own name */
    uint32_t mq = alloc(32);
    w8(mq + RTX_OBJECT_ID, 0xFA);
    w32(mq + RTX_OBJECT_NAME, string("pool_mq"));
    w32(on_anon + RTX_THREAD_PREV, mq);

    spoor_rtos_thread_ref refs[MAX_REFS];
    spoor_rtos_walk walk;
    size_t n = threads(&k, refs, &walk);
    assert_int_equal(n, 16);
    assert_int_equal(walk.lists_cut, 0);
    assert_int_equal(refs[0].tcb, run);
    assert_int_equal(refs[0].state, SPOOR_THREAD_RUNNING); /* RTX5's running thread is on no list */
    assert_string_equal(ref_of(refs, n, r2)->list, "osRtxInfo.thread.ready.thread_list");
    assert_string_equal(ref_of(refs, n, idle)->list, "osRtxInfo.thread.idle");
    assert_int_equal(ref_of(refs, n, sleeper)->state, SPOOR_THREAD_SLEEPING);
    assert_string_equal(ref_of(refs, n, odd)->list, "osRtxInfo.thread.wait_list");
    assert_int_equal(ref_of(refs, n, inactive)->state, SPOOR_THREAD_TERMINATED);
    uint32_t idle_tcb = 0;
    assert_true(spoor_rtos_read_idle(k.r, spoor_mem_reader, k.m, &idle_tcb));
    assert_int_equal(idle_tcb, idle);

    char words[96];
    struct {
        uint32_t tcb;
        const char *line, *kernel;
    } cases[] = {
        {run, "running", "osRtxThreadRunning"},
        {r1, "ready", "osRtxThreadReady"},
        {sleeper, "sleeping", "osRtxThreadWaitingDelay"},
        {on_sem, "blocked on semaphore sem_ready", "osRtxThreadWaitingSemaphore"},
        {behind, "blocked on mutex state_lock", "osRtxThreadWaitingMutex"},
        {first, "blocked on mutex state_lock", NULL},
        {on_anon, "blocked on message queue pool_mq", "osRtxThreadWaitingMessageGet"},
        {flags, "blocked on thread flags", "osRtxThreadWaitingThreadFlags"},
        {joiner, "blocked on join", "osRtxThreadWaitingJoin"},
        {putter, "blocked on message queue (send)", "osRtxThreadWaitingMessagePut"},
        {paused, "suspended", "osRtxThreadBlocked"},
        {ended, "terminated", "osRtxThreadTerminated"},
        {inactive, "terminated", "osRtxThreadInactive"},
        {odd, "unknown", "0xa3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *line = state_line(&k, refs, n, cases[i].tcb, words, sizeof words);
        if (strcmp(line, cases[i].line))
            fail_msg("case %zu: \"%s\", not \"%s\"", i, line, cases[i].line);
        if (cases[i].kernel && strcmp(words, cases[i].kernel))
            fail_msg("case %zu: kernel \"%s\", not \"%s\"", i, words, cases[i].kernel);
    }

    /* the ready list loops: r2 back to r1 */
    w32(r2 + RTX_THREAD_NEXT, r1);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 16);
    char want[160];
    snprintf(want, sizeof want,
             "osRtxInfo.thread.ready.thread_list: the list loops (TCB 0x%08x comes again)", r1);
    assert_string_equal(walk.why, want);
    close_kernel(&k);
}

static void test_rtx5_thread_context_and_stack(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "rtx5", SPOOR_RTOS_RTX5);
    uint32_t a = rtx_thread("alpha", 0x01), stack;
    memcpy(&stack, at(a + RTX_STACK_MEM, 4), 4);
    w32(a + RTX_THREAD_ADDR, sym(&k, "alpha_main") | 1u);
    w32(stack, 0xE25A2EA5u);             /* osRtxStackMagicWord */
    memset(at(stack + 4, 60), 0xCC, 60); /* osRtxStackFillPattern */
    uint32_t sp = stack + 128, pc = sym(&k, "gamma_deep") & ~1u;
    put_r4_r11(sp, 0xC3000000u); /* irq_armv7m.S: r4-r11, then the frame */
    put_frame(sp + 32, 0xC3000000u, pc);
    w32(a + RTX_SP, sp);
    map(&k);
    spoor_rtos_thread t;
    read_thread(&k, a, &t);
    assert_string_equal(t.name, "alpha");
    assert_int_equal(t.prio, 24);
    /* the firmware's DWARF has osPriority_t's enumerators but not the typedef, which nothing
     * uses: no priority names (an RTX5 build uses it in osThreadAttr_t) */
    assert_null(spoor_rtos_priority_name(k.r, t.prio));
    assert_int_equal(t.entry, sym(&k, "alpha_main") & ~1u);
    check_resume(&k, &t, 0xC3000000u, sp + 32, pc);

    /* EXC_RETURN 0xFFFFFFED (stack_frame 0xED): s16-s31 below r4-r11 */
    w8(a + RTX_STACK_FRAME, 0xED);
    put_r4_r11(sp + 64, 0xC4000000u);
    put_frame(sp + 96, 0xC4000000u, pc + 2);
    map(&k);
    spoor_regs regs;
    assert_true(spoor_rtos_saved_regs(k.r, spoor_mem_reader, k.m, &t, &regs));
    assert_int_equal(regs.r[4], 0xC4000004u);
    assert_int_equal(regs.r[11], 0xC400000Bu);
    assert_int_equal(regs.r[15], pc + 2);
    assert_int_equal(regs.r[13], sp + 96 + 0x68); /* past the extended frame */

    spoor_stack_usage u;
    assert_true(spoor_stack_usage_thread(k.r, spoor_mem_reader, k.m, &t, true, t.sp, false, &u));
    assert_int_equal(u.low, stack);
    assert_int_equal(u.size, 256);
    assert_true(u.filled);
    assert_int_equal(u.free_min, 64);
    assert_false(u.overflowed);
    w32(stack, 0xCCCCCCCCu); /* the magic word overwritten */
    map(&k);
    assert_true(spoor_stack_usage_thread(k.r, spoor_mem_reader, k.m, &t, true, t.sp, false, &u));
    assert_true(u.overflowed);
    assert_int_equal(u.free_min, 0);

    /* not a thread: another object's id */
    w8(a + RTX_ID, 0xF6);
    map(&k);
    assert_false(spoor_rtos_read_thread(k.r, spoor_mem_reader, k.m, a, &t));
    assert_non_null(strstr(spoor_last_error(), "not a RTX5 thread (id 0xf6)"));
    close_kernel(&k);
}

/* ---- ThreadX ------------------------------------------------------------------------------ */

static uint32_t tx_thread(const char *name, uint32_t st)
{
    uint32_t t = alloc(TX_THREAD_SIZE), stack = alloc(256);
    w32(t + TX_NAME, string(name));
    w32(t + TX_PRIORITY, 16);
    w32(t + TX_STATE, st);
    w32(t + TX_STACK_START, stack);
    w32(t + TX_STACK_END, stack + 255); /* its last byte */
    return t;
}

static void test_threadx_list_and_states(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "threadx", SPOOR_RTOS_THREADX);
    static const char *const names[15] = {
        "TX_READY",        "TX_COMPLETED",   "TX_TERMINATED",     "TX_SUSPENDED",
        "TX_SLEEP",        "TX_QUEUE_SUSP",  "TX_SEMAPHORE_SUSP", "TX_EVENT_FLAG",
        "TX_BLOCK_MEMORY", "TX_BYTE_MEMORY", "TX_IO_DRIVER",      "TX_FILE",
        "TX_TCP_IP",       "TX_MUTEX_SUSP",  "TX_PRIORITY_CHANGE"};
    static const char *const lines[15] = {"ready",
                                          "terminated",
                                          "terminated",
                                          "suspended",
                                          "sleeping",
                                          "blocked on message queue rx_queue",
                                          "blocked on semaphore sem_ready",
                                          "blocked on event flags events",
                                          "blocked on memory",
                                          "blocked on memory",
                                          "blocked on other",
                                          "blocked on other",
                                          "blocked on other",
                                          "blocked on mutex state_lock",
                                          "blocked on other"};
    static const char *const objects[15] = {
        [5] = "rx_queue", [6] = "sem_ready", [7] = "events", [13] = "state_lock"};
    uint32_t tcbs[17];
    for (uint32_t i = 0; i < 17; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%u", i);
        tcbs[i] = tx_thread(name, i < 15 ? i : 99);
        if (i < 15 && objects[i])
            w32(tcbs[i] + TX_SUSPEND_BLOCK, sym(&k, objects[i]));
    }
    /* tx_thread_create: the created list is circular */
    for (uint32_t i = 0; i < 17; i++)
        w32(tcbs[i] + TX_CREATED_NEXT, tcbs[(i + 1) % 17]);
    w32(sym(&k, "_tx_thread_created_ptr"), tcbs[0]);
    w32(sym(&k, "_tx_thread_current_ptr"), tcbs[16]);

    spoor_rtos_thread_ref refs[MAX_REFS];
    spoor_rtos_walk walk;
    size_t n = threads(&k, refs, &walk);
    assert_int_equal(n, 17);
    assert_int_equal(walk.lists_cut, 0);
    assert_int_equal(refs[0].tcb, tcbs[16]);
    assert_string_equal(refs[1].list, "_tx_thread_created_ptr");
    char words[96];
    for (uint32_t i = 0; i < 15; i++) {
        const char *line = state_line(&k, refs, n, tcbs[i], words, sizeof words);
        if (strcmp(line, lines[i]) || strcmp(words, names[i]))
            fail_msg("state %u: \"%s\" (%s), not \"%s\" (%s)", i, line, words, lines[i], names[i]);
    }
    assert_string_equal(state_line(&k, refs, n, tcbs[15], words, sizeof words), "unknown");
    assert_string_equal(words, "99");
    assert_string_equal(state_line(&k, refs, n, tcbs[16], NULL, 0), "running");
    uint32_t idle = 1;
    assert_true(spoor_rtos_read_idle(k.r, spoor_mem_reader, k.m, &idle));
    assert_int_equal(idle, 0); /* ThreadX has no idle thread */

    /* a null-ended list (not circular): read to its end */
    w32(tcbs[16] + TX_CREATED_NEXT, 0);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 17);
    assert_int_equal(walk.lists_cut, 0);
    /* a cycle that does not come back to the first: a loop */
    w32(tcbs[16] + TX_CREATED_NEXT, tcbs[5]);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 17);
    char want[160];
    snprintf(want, sizeof want, "_tx_thread_created_ptr: the list loops (TCB 0x%08x comes again)",
             tcbs[5]);
    assert_string_equal(walk.why, want);
    /* the list cut by memory the image does not hold */
    w32(tcbs[3] + TX_CREATED_NEXT, NOWHERE);
    n = threads(&k, refs, &walk);
    assert_int_equal(n, 6); /* t16 running, t0-t3, and NOWHERE */
    ref_of(refs, n, NOWHERE);
    snprintf(want, sizeof want, "_tx_thread_created_ptr: memory at 0x%08x not available",
             NOWHERE + TX_CREATED_NEXT);
    assert_string_equal(walk.why, want);
    close_kernel(&k);
}

static void test_threadx_context_and_stack(void **state)
{
    (void)state;
    kernel k;
    open_kernel(&k, "threadx", SPOOR_RTOS_THREADX);
    uint32_t a = tx_thread("alpha", 0), stack;
    memcpy(&stack, at(a + TX_STACK_START, 4), 4);
    w32(a + TX_ENTRY, sym(&k, "monitor_main") | 1u);
    memset(at(stack, 48), 0xEF, 48); /* TX_STACK_FILL */
    /* tx_thread_schedule.S (cortex_m3): EXC_RETURN, r4-r11, the frame */
    uint32_t sp = stack + 100, pc = sym(&k, "task_yield") & ~1u;
    w32(sp, 0xFFFFFFFDu);
    put_r4_r11(sp + 4, 0xD4000000u);
    put_frame(sp + 36, 0xD4000000u, pc);
    w32(a + TX_STACK_PTR, sp);
    map(&k);
    spoor_rtos_thread t;
    read_thread(&k, a, &t);
    assert_string_equal(t.name, "alpha");
    assert_int_equal(t.prio, 16);
    assert_int_equal(t.entry, sym(&k, "monitor_main") & ~1u);
    assert_int_equal(t.sp, sp);
    check_resume(&k, &t, 0xD4000000u, sp + 36, pc);
    assert_string_equal(spoor_rtos_thread_root(k.r), "_tx_thread_shell_entry");

    /* an FP frame's EXC_RETURN: s16-s31 between it and r4-r11 */
    w32(sp, 0xFFFFFFEDu);
    put_r4_r11(sp + 68, 0xD5000000u);
    put_frame(sp + 100, 0xD5000000u, pc + 2);
    map(&k);
    spoor_regs regs;
    assert_true(spoor_rtos_saved_regs(k.r, spoor_mem_reader, k.m, &t, &regs));
    assert_int_equal(regs.r[4], 0xD5000004u);
    assert_int_equal(regs.r[11], 0xD500000Bu);
    assert_int_equal(regs.r[15], pc + 2);
    assert_int_equal(regs.r[13], sp + 100 + 0x68);

    spoor_stack_usage u;
    assert_true(spoor_stack_usage_thread(k.r, spoor_mem_reader, k.m, &t, true, t.sp, false, &u));
    assert_int_equal(u.low, stack);
    assert_int_equal(u.high, stack + 256);
    assert_true(u.filled);
    assert_int_equal(u.free_min, 48);
    assert_false(u.overflowed);
    assert_string_equal(u.from, "tx_thread_stack_start/tx_thread_stack_end");
    w8(stack + 2, 0); /* the first word, the guard, broken */
    map(&k);
    assert_true(spoor_stack_usage_thread(k.r, spoor_mem_reader, k.m, &t, true, t.sp, true, &u));
    assert_true(u.overflowed);
    close_kernel(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_freertos_lists),
        cmocka_unit_test(test_freertos_list_faults),
        cmocka_unit_test(test_freertos_thread),
        cmocka_unit_test(test_freertos_states),
        cmocka_unit_test(test_freertos_context_and_stack),
        cmocka_unit_test(test_zephyr_list),
        cmocka_unit_test(test_zephyr_states),
        cmocka_unit_test(test_zephyr_context_and_stack),
        cmocka_unit_test(test_rtx5_lists_and_states),
        cmocka_unit_test(test_rtx5_thread_context_and_stack),
        cmocka_unit_test(test_threadx_list_and_states),
        cmocka_unit_test(test_threadx_context_and_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
