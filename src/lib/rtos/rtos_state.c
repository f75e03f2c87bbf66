/* Thread states as each kernel records them (spoor/rtos.h spoor_rtos_state_of), in one
 * vocabulary, with the object a blocked thread waits on. The values and bits are those of the
 * kernels' own headers (docs/rtos.md cites them):
 *   Zephyr   base.thread_state bits (kernel_structs.h): _THREAD_DUMMY 0x01, _THREAD_PENDING 0x02,
 *            bit 2 _THREAD_PRESTART (up to 4.0) or _THREAD_SLEEPING (4.1 on; unused in between),
 *            _THREAD_DEAD 0x08, _THREAD_SUSPENDED 0x10, _THREAD_ABORTING 0x20,
 *            _THREAD_SUSPENDING 0x40, _THREAD_QUEUED 0x80; base.pended_on the wait queue of the
 *            object (its first member for k_sem, k_mutex, k_msgq); base.timeout linked while a
 *            timeout runs (a sleep, before 4.1).
 *   RTX5     osRtxThread_t.state (rtx_os.h): osRtxThreadInactive 0, Ready 1, Running 2, Blocked 3,
 *            Terminated 4; blocked | 0x10 delay, 0x20 join, 0x30 thread flags, 0x40 event flags,
 *            0x50 mutex, 0x60 semaphore, 0x70 memory pool, 0x80 message get, 0x90 message put;
 *            a thread waiting on an object is on the object's thread_list, whose thread_prev
 *            chain leads to the object (rtx_thread.c osRtxThreadListPut).
 *   ThreadX  tx_thread_state (tx_api.h): TX_READY 0 ... TX_PRIORITY_CHANGE 14;
 *            tx_thread_suspend_control_block the object.
 *   FreeRTOS the list the task is on (tasks.c); a task whose xEventListItem is on a list is
 *            blocked on what owns the list: a queue's xTasksWaitingToReceive or
 *            xTasksWaitingToSend (queue.c; a semaphore has uxItemSize 0, a mutex pcHead NULL),
 *            an event group's xTasksWaitingForBits (event_groups.c); ucNotifyState
 *            taskWAITING_NOTIFICATION (1): waiting for a notification. */
#include <stdio.h>
#include <string.h>

#include "base/byteorder.h"
#include "elf/elf_sections.h"
#include "rtos/rtos_internal.h"

enum zephyr_layout {
    ZEPHYR_PRESTART, /* bit 2 _THREAD_PRESTART: Zephyr 2.3 to 4.0 */
    ZEPHYR_SLEEPING, /* bit 2 _THREAD_SLEEPING (or unused): Zephyr 4.1 on */
};

const char *spoor_thread_state_name(spoor_thread_state s)
{
    switch (s) {
    case SPOOR_THREAD_UNKNOWN: return "unknown";
    case SPOOR_THREAD_RUNNING: return "running";
    case SPOOR_THREAD_READY: return "ready";
    case SPOOR_THREAD_BLOCKED: return "blocked";
    case SPOOR_THREAD_SLEEPING: return "sleeping";
    case SPOOR_THREAD_SUSPENDED: return "suspended";
    case SPOOR_THREAD_TERMINATED: return "terminated";
    case SPOOR_THREAD_UNLISTED: return "unlisted";
    }
    return "unknown";
}

const char *spoor_thread_wait_name(spoor_thread_wait w)
{
    switch (w) {
    case SPOOR_WAIT_NONE: return NULL;
    case SPOOR_WAIT_OBJECT: return "object";
    case SPOOR_WAIT_SEMAPHORE: return "semaphore";
    case SPOOR_WAIT_MUTEX: return "mutex";
    case SPOOR_WAIT_QUEUE: return "message queue";
    case SPOOR_WAIT_QUEUE_SEND: return "message queue (send)";
    case SPOOR_WAIT_EVENT_FLAGS: return "event flags";
    case SPOOR_WAIT_THREAD_FLAGS: return "thread flags";
    case SPOOR_WAIT_JOIN: return "join";
    case SPOOR_WAIT_MEMORY: return "memory";
    case SPOOR_WAIT_OTHER: return "other";
    }
    return NULL;
}

/* What the list ref was found on means, in the list's own word ("delayed", "created"); the
 * state's name for a thread found on no list. */
static const char *list_word(const spoor_rtos *r, const spoor_rtos_thread_ref *ref)
{
    for (const rtos_list *l = r->d->lists;
         ref->list && l < r->d->lists + RTOS_MAX_LISTS && l->kind != RTOS_LIST_END; l++)
        if (!strcmp(l->head, ref->list))
            return l->word;
    return spoor_thread_state_name(ref->state);
}

void spoor_rtos_state_text(const spoor_rtos_state *s, char *buf, size_t cap)
{
    const char *kind = spoor_thread_wait_name(s->wait);
    if (s->state != SPOOR_THREAD_BLOCKED || (!kind && !s->object)) {
        snprintf(buf, cap, "%s", spoor_thread_state_name(s->state));
        return;
    }
    char what[96];
    if (s->object_name[0])
        snprintf(what, sizeof what, "%s", s->object_name);
    else if (s->object)
        snprintf(what, sizeof what, "0x%08x", s->object);
    else
        what[0] = '\0';
    if (s->wait == SPOOR_WAIT_OBJECT)
        snprintf(buf, cap, "blocked on %s", what);
    else
        snprintf(buf, cap, "blocked on %s%s%s", kind ? kind : "?", what[0] ? " " : "", what);
}

const char *spoor_rtos_layout(const spoor_rtos *r)
{
    return r->layout_why[0] ? r->layout_why : NULL;
}

const char *spoor_rtos_thread_root(const spoor_rtos *r)
{
    return r->d->thread_root;
}

/* ---- Zephyr's layout: from the version the ELF carries --------------------------------------
 * The boot banner and kernel version strings hold it: "zephyr-v2.5.0" (git tags up to 3.4),
 * "Zephyr OS build v3.7.0", "Zephyr OS v4.1.0". */

static bool parse_version(const uint8_t *p, const uint8_t *end, unsigned *major, unsigned *minor)
{
    unsigned v[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        if (p >= end || *p < '0' || *p > '9')
            return false;
        for (int digits = 0; p < end && *p >= '0' && *p <= '9' && digits < 3; digits++)
            v[k] = v[k] * 10 + (unsigned)(*p++ - '0');
        if (k == 0 && (p >= end || *p++ != '.'))
            return false;
    }
    *major = v[0];
    *minor = v[1];
    return true;
}

static bool find_version(const spoor_elf *elf, unsigned *major, unsigned *minor, char *found,
                         size_t cap)
{
    static const char *const marks[] = {"zephyr-v", "Zephyr OS build v", "Zephyr OS v"};
    spoor_elf_range ranges[64];
    size_t n = spoor_elf_ranges(elf, ranges, sizeof ranges / sizeof ranges[0]);
    if (n > sizeof ranges / sizeof ranges[0])
        n = sizeof ranges / sizeof ranges[0];
    for (size_t i = 0; i < n; i++) {
        const uint8_t *d = ranges[i].data, *end = d ? d + ranges[i].size : NULL;
        if (!d) /* strings may share flash with code: every loaded section is looked at */
            continue;
        for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++) {
            size_t len = strlen(marks[m]);
            for (const uint8_t *p = d; p + len < end; p++) {
                p = memchr(p, marks[m][0], (size_t)(end - p));
                if (!p || p + len >= end)
                    break;
                if (memcmp(p, marks[m], len) == 0 && parse_version(p + len, end, major, minor)) {
                    snprintf(found, cap, "\"%s%u.%u\"", marks[m], *major, *minor);
                    return true;
                }
            }
        }
    }
    return false;
}

void spoor_rtos_state_setup(spoor_rtos *r)
{
    if (r->d->kind != SPOOR_RTOS_ZEPHYR)
        return;
    unsigned major, minor;
    char found[48];
    if (find_version(r->elf, &major, &minor, found, sizeof found)) {
        bool sleeping = major > 4 || (major == 4 && minor >= 1);
        r->zephyr_layout = sleeping ? ZEPHYR_SLEEPING : ZEPHYR_PRESTART;
        snprintf(r->layout_why, sizeof r->layout_why,
                 "Zephyr %u.%u (the ELF's %s): base.thread_state bit 2 is %s", major, minor, found,
                 sleeping ? "_THREAD_SLEEPING (4.1 on)" : "_THREAD_PRESTART (2.3 to 4.0)");
    } else {
        r->zephyr_layout = ZEPHYR_PRESTART;
        snprintf(r->layout_why, sizeof r->layout_why,
                 "no Zephyr version in the ELF: base.thread_state read as Zephyr 2.3 to 4.0 "
                 "(bit 2 _THREAD_PRESTART)");
    }
}

/* ---- naming the object ------------------------------------------------------------------- */

/* The variable holding addr, as "name" or "name+0x8"; false when none. type: its type's name. */
static bool name_object(const spoor_rtos *r, uint32_t addr, char *out, size_t cap,
                        const char **type, uint32_t *offset)
{
    const char *name, *t = NULL;
    uint32_t off;
    if (!spoor_rtos_dwarf_variable_at(spoor_elf_libdw(r->elf), addr, &name, &t, &off))
        return false;
    if (off)
        snprintf(out, cap, "%s+0x%x", name, off);
    else
        snprintf(out, cap, "%s", name);
    if (type)
        *type = t;
    if (offset)
        *offset = off;
    return true;
}

static void add_kernel(spoor_rtos_state *s, const char *name)
{
    size_t n = strlen(s->kernel);
    snprintf(s->kernel + n, sizeof s->kernel - n, "%s%s", n ? "|" : "", name);
}

/* ---- Zephyr ------------------------------------------------------------------------------- */

/* What a Zephyr object type is, by its struct tag (include/zephyr/kernel.h). */
static spoor_thread_wait zephyr_kind(const char *type)
{
    static const struct {
        const char *type;
        spoor_thread_wait wait;
    } kinds[] = {
        {"k_sem", SPOOR_WAIT_SEMAPHORE},     {"k_mutex", SPOOR_WAIT_MUTEX},
        {"k_msgq", SPOOR_WAIT_QUEUE},        {"k_queue", SPOOR_WAIT_QUEUE},
        {"k_fifo", SPOOR_WAIT_QUEUE},        {"k_lifo", SPOOR_WAIT_QUEUE},
        {"k_pipe", SPOOR_WAIT_QUEUE},        {"k_mbox", SPOOR_WAIT_QUEUE},
        {"k_event", SPOOR_WAIT_EVENT_FLAGS}, {"k_condvar", SPOOR_WAIT_OTHER},
        {"k_mem_slab", SPOOR_WAIT_MEMORY},   {"k_heap", SPOOR_WAIT_MEMORY},
        {"k_thread", SPOOR_WAIT_JOIN},
    };
    for (size_t i = 0; type && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(type, kinds[i].type))
            return kinds[i].wait;
    return SPOOR_WAIT_OBJECT;
}

/* One of the idle threads (z_idle_threads[], one per CPU). */
static bool zephyr_idle(const spoor_rtos *r, uint32_t tcb)
{
    uint32_t at, size;
    return r->has_idle && r->idle_is_object &&
           spoor_elf_symbol(r->elf, "z_idle_threads", &at, &size) && tcb >= at &&
           tcb - at < (size ? size : r->tcb_size) && (tcb - at) % r->tcb_size == 0;
}

static void zephyr_state(const spoor_rtos *r, const spoor_rtos_thread *t, spoor_rtos_state *s)
{
    static const char *const bits[8] = {
        "_THREAD_DUMMY",      "_THREAD_PENDING",   NULL,
        "_THREAD_DEAD",       "_THREAD_SUSPENDED", "_THREAD_ABORTING",
        "_THREAD_SUSPENDING", "_THREAD_QUEUED"};
    uint32_t st = t->state_word & 0xFFu;
    bool sleeping_bit = r->zephyr_layout == ZEPHYR_SLEEPING;
    for (int b = 0; b < 8; b++)
        if (st & (1u << b))
            add_kernel(s,
                       b == 2 ? (sleeping_bit ? "_THREAD_SLEEPING" : "_THREAD_PRESTART") : bits[b]);
    bool timeout = t->has_timeout_link && t->timeout_link;
    if (st & 0x01u)
        s->state = SPOOR_THREAD_UNLISTED;
    else if (st & 0x28u)
        s->state = SPOOR_THREAD_TERMINATED;
    else if (st & 0x10u)
        s->state = SPOOR_THREAD_SUSPENDED;
    else if ((st & 0x04u) && !sleeping_bit)
        s->state = SPOOR_THREAD_SUSPENDED; /* not started yet */
    else if (st & 0x02u) {
        s->state = SPOOR_THREAD_BLOCKED;
        s->wait = SPOOR_WAIT_OBJECT;
        s->object = t->has_wait_word ? t->wait_word : 0;
        const char *type = NULL;
        if (s->object &&
            name_object(r, s->object, s->object_name, sizeof s->object_name, &type, NULL))
            s->wait = zephyr_kind(type);
    } else if (st & 0x04u)
        s->state = SPOOR_THREAD_SLEEPING;
    else if (st & 0x80u)
        s->state = SPOOR_THREAD_READY;
    else if (timeout) { /* before 4.1 a sleep sets no bit: only its timeout runs */
        s->state = SPOOR_THREAD_SLEEPING;
        add_kernel(s, "base.timeout linked");
    } else if (zephyr_idle(r, t->tcb)) {

        s->state = SPOOR_THREAD_READY; /* the idle thread is never queued */
        add_kernel(s, "idle thread");
    } else
        add_kernel(s, "no state bit");
}

/* ---- RTX5 --------------------------------------------------------------------------------- */

/* The object a thread waits on: up its thread_prev chain to the first "thread" that is not one
 * (the object's header: id, state, flags, reserved, name, thread_list lines up with a TCB's
 * id ... thread_next; rtx_lib.h osRtxThreadObject). */
static void rtx5_object(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                        const spoor_rtos_thread *t, spoor_rtos_state *s)
{
    if (!t->has_wait_word || !r->id.found)
        return;
    uint32_t at = t->wait_word;
    for (int i = 0; at && i < 64; i++) {
        uint8_t id;
        if (!read(ctx, at + r->id.offset, &id, 1))
            return;
        if (id != r->d->id_value) {
            s->object = at;
            uint32_t p;
            if (!name_object(r, at, s->object_name, sizeof s->object_name, NULL, NULL) &&
                r->name.found && r->name.is_pointer &&
                spoor_rtos_read32(read, ctx, at + r->name.offset, &p)) { /* the object's name */
                spoor_rtos_read_string(read, ctx, p, s->object_name, sizeof s->object_name);
                spoor_rtos_printable(s->object_name);
            }
            return;
        }
        if (!spoor_rtos_read32(read, ctx, at + r->wait.offset, &at))
            return;
    }
}

static void rtx5_state(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                       const spoor_rtos_thread *t, spoor_rtos_state *s)
{
    static const char *const base[5] = {"osRtxThreadInactive", "osRtxThreadReady",
                                        "osRtxThreadRunning", "osRtxThreadBlocked",
                                        "osRtxThreadTerminated"};
    static const struct {
        const char *name;
        spoor_thread_wait wait;
        bool object;
    } waits[10] = {
        {"osRtxThreadBlocked", SPOOR_WAIT_NONE, false}, /* osThreadSuspend */
        {"osRtxThreadWaitingDelay", SPOOR_WAIT_NONE, false},
        {"osRtxThreadWaitingJoin", SPOOR_WAIT_JOIN, false},
        {"osRtxThreadWaitingThreadFlags", SPOOR_WAIT_THREAD_FLAGS, false},
        {"osRtxThreadWaitingEventFlags", SPOOR_WAIT_EVENT_FLAGS, true},
        {"osRtxThreadWaitingMutex", SPOOR_WAIT_MUTEX, true},
        {"osRtxThreadWaitingSemaphore", SPOOR_WAIT_SEMAPHORE, true},
        {"osRtxThreadWaitingMemoryPool", SPOOR_WAIT_MEMORY, true},
        {"osRtxThreadWaitingMessageGet", SPOOR_WAIT_QUEUE, true},
        {"osRtxThreadWaitingMessagePut", SPOOR_WAIT_QUEUE_SEND, true},
    };
    uint32_t st = t->state_word & 0xFFu, low = st & 0x0Fu, high = st >> 4;
    if (low == 3 && high < 10) {
        add_kernel(s, waits[high].name);
        if (high <= 1) { /* osThreadSuspend's plain blocked; osDelay */
            s->state = high ? SPOOR_THREAD_SLEEPING : SPOOR_THREAD_SUSPENDED;
            return;
        }
        s->state = SPOOR_THREAD_BLOCKED;
        s->wait = waits[high].wait;
        if (waits[high].object)
            rtx5_object(r, read, ctx, t, s);
        return;
    }
    if (low > 4 || high) {
        char raw[16];
        snprintf(raw, sizeof raw, "0x%02x", st);
        add_kernel(s, raw);
        return;
    }
    add_kernel(s, base[low]);
    static const spoor_thread_state map[5] = {SPOOR_THREAD_TERMINATED, SPOOR_THREAD_READY,
                                              SPOOR_THREAD_RUNNING, SPOOR_THREAD_BLOCKED,
                                              SPOOR_THREAD_TERMINATED};
    s->state = map[low];
}

/* ---- ThreadX ------------------------------------------------------------------------------ */

static void threadx_state(const spoor_rtos *r, const spoor_rtos_thread *t, spoor_rtos_state *s)
{
    static const struct {
        const char *name;
        spoor_thread_state state;
        spoor_thread_wait wait;
    } states[15] = {
        {"TX_READY", SPOOR_THREAD_READY, SPOOR_WAIT_NONE},
        {"TX_COMPLETED", SPOOR_THREAD_TERMINATED, SPOOR_WAIT_NONE},
        {"TX_TERMINATED", SPOOR_THREAD_TERMINATED, SPOOR_WAIT_NONE},
        {"TX_SUSPENDED", SPOOR_THREAD_SUSPENDED, SPOOR_WAIT_NONE},
        {"TX_SLEEP", SPOOR_THREAD_SLEEPING, SPOOR_WAIT_NONE},
        {"TX_QUEUE_SUSP", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_QUEUE},
        {"TX_SEMAPHORE_SUSP", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_SEMAPHORE},
        {"TX_EVENT_FLAG", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_EVENT_FLAGS},
        {"TX_BLOCK_MEMORY", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_MEMORY},
        {"TX_BYTE_MEMORY", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_MEMORY},
        {"TX_IO_DRIVER", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_OTHER},
        {"TX_FILE", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_OTHER},
        {"TX_TCP_IP", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_OTHER},
        {"TX_MUTEX_SUSP", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_MUTEX},
        {"TX_PRIORITY_CHANGE", SPOOR_THREAD_BLOCKED, SPOOR_WAIT_OTHER},
    };
    uint32_t st = t->state_word;
    if (st >= 15) {
        char raw[24];
        snprintf(raw, sizeof raw, "%u", st);
        add_kernel(s, raw);
        return;
    }
    add_kernel(s, states[st].name);
    s->state = states[st].state;
    s->wait = states[st].wait;
    if (s->state == SPOOR_THREAD_BLOCKED && t->has_wait_word && t->wait_word) {
        s->object = t->wait_word;
        name_object(r, s->object, s->object_name, sizeof s->object_name, NULL, NULL);
    }
}

/* ---- FreeRTOS ----------------------------------------------------------------------------- */

/* Whether the List_t at list is one: empty (its end item links to itself) or its first item's
 * pxContainer is the list. */
static bool is_list(spoor_read_fn read, void *ctx, uint32_t list, uint32_t end_off,
                    uint32_t end_next_off, uint32_t container_off)
{
    uint32_t first, owner;
    if (!spoor_rtos_read32(read, ctx, list + end_next_off, &first))
        return false;
    if (first == list + end_off)
        return true;
    return spoor_rtos_read32(read, ctx, first + container_off, &owner) && owner == list;
}

/* The queue (queue.c Queue_t) or event group (event_groups.c EventGroup_t) whose waiting list
 * holds the task's event item (at container). */
static void freertos_object(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t container,
                            spoor_rtos_state *s)
{
    Dwarf *dw = spoor_elf_libdw(r->elf);
    Dwarf_Die queue, list, item, group;
    rtos_field recv, send, head, item_size, end, end_next, pxc, bits;
    bool have_list =
        (spoor_rtos_dwarf_type(dw, "List_t", &list) || spoor_rtos_dwarf_type(dw, "xLIST", &list)) &&
        (spoor_rtos_dwarf_type(dw, "ListItem_t", &item) ||
         spoor_rtos_dwarf_type(dw, "xLIST_ITEM", &item)) &&
        spoor_rtos_dwarf_field(&list, "xListEnd", &end) &&
        spoor_rtos_dwarf_field(&list, "xListEnd.pxNext", &end_next) &&
        spoor_rtos_dwarf_field(&item, "pxContainer", &pxc);
    bool have_queue = (spoor_rtos_dwarf_type(dw, "Queue_t", &queue) ||
                       spoor_rtos_dwarf_type(dw, "QueueDefinition", &queue)) &&
                      spoor_rtos_dwarf_field(&queue, "xTasksWaitingToReceive", &recv) &&
                      spoor_rtos_dwarf_field(&queue, "xTasksWaitingToSend", &send) &&
                      spoor_rtos_dwarf_field(&queue, "pcHead", &head) &&
                      spoor_rtos_dwarf_field(&queue, "uxItemSize", &item_size);
    bool have_group = (spoor_rtos_dwarf_type(dw, "EventGroup_t", &group) ||
                       spoor_rtos_dwarf_type(dw, "EventGroupDef_t", &group)) &&
                      spoor_rtos_dwarf_field(&group, "xTasksWaitingForBits", &bits);
    s->wait = SPOOR_WAIT_OBJECT;
    s->object = container;
    if (have_queue && have_list) {
        /* the list is one of a queue's two: the other must be a list too */
        uint32_t as_recv = container - recv.offset, as_send = container - send.offset;
        bool recv_ok =
            is_list(read, ctx, as_recv + send.offset, end.offset, end_next.offset, pxc.offset);
        bool send_ok =
            is_list(read, ctx, as_send + recv.offset, end.offset, end_next.offset, pxc.offset);
        if (recv_ok != send_ok) {
            uint32_t q = recv_ok ? as_recv : as_send;
            uint32_t pc_head = 0, size = 0;
            s->object = q;
            if (spoor_rtos_read32(read, ctx, q + head.offset, &pc_head) &&
                spoor_rtos_read32(read, ctx, q + item_size.offset, &size))
                s->wait = !pc_head  ? SPOOR_WAIT_MUTEX /* queueQUEUE_IS_MUTEX */
                          : !size   ? SPOOR_WAIT_SEMAPHORE
                          : recv_ok ? SPOOR_WAIT_QUEUE
                                    : SPOOR_WAIT_QUEUE_SEND;
            add_kernel(s, recv_ok ? "xTasksWaitingToReceive" : "xTasksWaitingToSend");
        }
    }
    if (s->object == container && have_group && container >= bits.offset) {
        const char *type = NULL;
        char name[64];
        uint32_t off;
        if (name_object(r, container - bits.offset, name, sizeof name, &type, &off) && !off) {
            s->object = container - bits.offset;
            s->wait = SPOOR_WAIT_EVENT_FLAGS;
            add_kernel(s, "xTasksWaitingForBits");
        }
    }
    /* the kernel's own name first: the queue registry (configQUEUE_REGISTRY_SIZE,
     * vQueueAddToRegistry) xQueueRegistry[] { pcQueueName, xHandle } (a queue from the heap has
     * no variable of its own); else the variable that holds it */
    {
        uint32_t reg, n;
        rtos_field f;
        if (spoor_rtos_eval(r->elf, "xQueueRegistry", &reg, &f) && f.is_array) {
            for (n = 0; n + 8 <= f.size && n < 64 * 8; n += 8) {
                uint32_t name, handle;
                if (spoor_rtos_read32(read, ctx, reg + n + 4, &handle) && handle == s->object &&
                    spoor_rtos_read32(read, ctx, reg + n, &name) && name) {
                    spoor_rtos_read_string(read, ctx, name, s->object_name, sizeof s->object_name);
                    spoor_rtos_printable(s->object_name);
                    break;
                }
            }
        }
    }
    if (!s->object_name[0])
        name_object(r, s->object, s->object_name, sizeof s->object_name, NULL, NULL);
}

static void freertos_state(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                           const spoor_rtos_thread_ref *ref, const spoor_rtos_thread *t,
                           spoor_rtos_state *s)
{
    add_kernel(s, ref->list ? ref->list : spoor_thread_state_name(ref->state));
    bool delayed = ref->state == SPOOR_THREAD_SLEEPING;
    if (ref->state == SPOOR_THREAD_READY || ref->state == SPOOR_THREAD_TERMINATED)
        s->state = ref->state;
    else if (delayed || ref->state == SPOOR_THREAD_SUSPENDED) {
        /* on the delayed list: a timed wait; on the suspended list: vTaskSuspend, or a wait
         * without timeout (portMAX_DELAY, INCLUDE_vTaskSuspend) */
        s->state = delayed ? SPOOR_THREAD_SLEEPING : SPOOR_THREAD_SUSPENDED;
        Dwarf_Die tcb = r->tcb_type;
        rtos_field notify;
        uint8_t waiting = 0;
        if (t->has_wait_word && t->wait_word) {
            s->state = SPOOR_THREAD_BLOCKED;
            freertos_object(r, read, ctx, t->wait_word, s);
        } else if (spoor_rtos_dwarf_field(&tcb, "ucNotifyState", &notify) &&
                   read(ctx, t->tcb + notify.offset, &waiting, 1) && waiting == 1) {
            s->state = SPOOR_THREAD_BLOCKED; /* taskWAITING_NOTIFICATION */
            s->wait = SPOOR_WAIT_THREAD_FLAGS;
            add_kernel(s, "taskWAITING_NOTIFICATION");
        }
    }
}

void spoor_rtos_state_of(const spoor_rtos *r, spoor_read_fn read, void *ctx,
                         const spoor_rtos_thread_ref *ref, const spoor_rtos_thread *t,
                         spoor_rtos_state *out)
{
    memset(out, 0, sizeof *out);
    if (ref->state == SPOOR_THREAD_UNLISTED) {
        out->state = SPOOR_THREAD_UNLISTED;
        snprintf(out->kernel, sizeof out->kernel, "on no thread list");
        return;
    }
    bool running = ref->state == SPOOR_THREAD_RUNNING;
    switch (r->d->kind) {
    case SPOOR_RTOS_ZEPHYR:
        if (t->has_state_word)
            zephyr_state(r, t, out);
        break;
    case SPOOR_RTOS_RTX5:
        if (t->has_state_word)
            rtx5_state(r, read, ctx, t, out);
        break;
    case SPOOR_RTOS_THREADX:
        if (t->has_state_word)
            threadx_state(r, t, out);
        break;
    case SPOOR_RTOS_FREERTOS:
        if (!running)
            freertos_state(r, read, ctx, ref, t, out);
        break;
    case SPOOR_RTOS_SCHED: /* the example scheduler keeps no state: not running is ready */
    case SPOOR_RTOS_KIND_COUNT: out->state = SPOOR_THREAD_READY; break;
    }
    if (running) { /* the kernel's word may lag (Zephyr keeps _THREAD_QUEUED on the current) */
        out->state = SPOOR_THREAD_RUNNING;
        out->wait = SPOOR_WAIT_NONE;
        out->object = 0;
        out->object_name[0] = '\0';
    } else if (out->state == SPOOR_THREAD_UNKNOWN && !out->kernel[0])
        add_kernel(out, list_word(r, ref));
}
