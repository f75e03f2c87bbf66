/* The unwinder's driver: frame 0 from the registers, then one step per frame with the
 * first method that gives a plausible caller, exception frames crossed on EXC_RETURN. */
#include <string.h>

#include "elf/dwarf_call_sites.h"
#include "spoor/cortexm_facts.h"
#include "spoor/unwind.h"
#include "unwind/unwind_exception_internal.h"
#include "unwind/unwind_methods_internal.h"
#include "unwind/unwind_task_entry_internal.h"

#define DEFAULT_SCAN_WORDS 1024u
#define RESET_LR 0xFFFFFFFFu

const char *spoor_unwind_method_name(spoor_unwind_method method)
{
    switch (method) {
    case SPOOR_UNWIND_REGISTERS: return "registers";
    case SPOOR_UNWIND_CFI: return "cfi";
    case SPOOR_UNWIND_EHABI: return "ehabi";
    case SPOOR_UNWIND_PROLOGUE: return "prologue";
    case SPOOR_UNWIND_SCAN: return "scan";
    case SPOOR_UNWIND_LINK: return "lr";
    case SPOOR_UNWIND_EXCEPTION: return "exception";
    case SPOOR_UNWIND_TAILCALL: return "tailcall";
    }
    return "?";
}

const char *spoor_unwind_stop_name(spoor_unwind_stop stop)
{
    switch (stop) {
    case SPOOR_STOP_RESET: return "reset handler";
    case SPOOR_STOP_END_OF_STACK: return "end of stack";
    case SPOOR_STOP_LOOP: return "loop";
    case SPOOR_STOP_FRAME_LIMIT: return "frame limit";
    case SPOOR_STOP_UNREADABLE: return "unreadable memory";
    case SPOOR_STOP_NO_INFO: return "no unwind information";
    case SPOOR_STOP_BAD_FRAME: return "bad frame";
    case SPOOR_STOP_OTHER_STACK: return "other stack pointer unknown (no msp/psp in the input)";
    case SPOOR_STOP_BAD_EXCEPTION_FRAME: return "bad exception frame";
    case SPOOR_STOP_TASK_ENTRY: return "task entry";
    case SPOOR_STOP_THREAD_ROOT: return "thread root";
    }
    return "?";
}

const char *spoor_exception_name(int number)
{
    static const char *const names[16] = {
        NULL, NULL, "NMI", "HardFault", "MemManage",    "BusFault", "UsageFault", "SecureFault",
        NULL, NULL, NULL,  "SVCall",    "DebugMonitor", NULL,       "PendSV",     "SysTick",
    };
    if (number >= 16) {
        return "IRQ";
    }
    if (number < 0) {
        return NULL;
    }
    return names[number];
}

/* True when pc lies in the reset handler, where every walk ends. */
static bool in_reset_handler(const spoor_elf *elf, uint32_t pc)
{
    uint32_t start, size;
    if (elf == NULL || !spoor_elf_symbol(elf, "Reset_Handler", &start, &size)) {
        return false;
    }
    start &= ~1u;
    if (size == 0) {
        return pc == start;
    }
    return pc >= start && pc - start < size;
}

/* Code a PC can be in: an executable section and, when the ELF names its functions, inside
 * one of them (not a vector table or other data placed in a code section; a fault that never
 * stacked its frame leaves PC 0, which is the vector table). */
static bool is_code(const spoor_elf *elf, uint32_t pc)
{
    pc &= ~1u;
    if (elf == NULL || !spoor_elf_is_code(elf, pc)) {
        return false;
    }
    return !spoor_elf_has_symbols(elf) || spoor_elf_function(elf, pc, NULL, NULL, NULL);
}

/* A number an exception can have (IPSR of a handler): not thread mode (0), not reset (1),
 * not a reserved one. */
static bool possible_exception(int number)
{
    return spoor_exception_name(number) != NULL;
}

/* A return address the frame below can return to: the markers that end a stack, an
 * EXC_RETURN value when that frame is a handler (ipsr; only a handler returns from an
 * exception), or an address whose call instruction (the byte before it) is code. */
static bool possible_return(const spoor_elf *elf, uint32_t ra, int ipsr)
{
    if (ra == 0 || ra == RESET_LR) {
        return true;
    }
    if (spoor_cortexm_is_exc_return(ra)) {
        return possible_exception(ipsr);
    }
    return (ra & ~1u) != 0 && is_code(elf, unwind_call_site(ra));
}

/* A caller produced by a method is believable when its SP did not move down and its
 * return address is possible. */
static bool plausible(const spoor_elf *elf, const unwind_state *callee, const unwind_state *caller,
                      int ipsr)
{
    if (!unwind_known(caller, UNWIND_PC) || !unwind_known(caller, UNWIND_SP)) {
        return false;
    }
    if (caller->r[UNWIND_SP] < callee->r[UNWIND_SP] || (caller->r[UNWIND_SP] & 3u) != 0) {
        return false;
    }
    return possible_return(elf, caller->r[UNWIND_PC], ipsr);
}

typedef unwind_result (*step_fn)(const unwind_env *, const unwind_state *, unwind_state *);

/* The entry of the function a frame is in; 0 when it is in none. */
static uint32_t function_entry(const spoor_elf *elf, const unwind_state *s)
{
    uint32_t start;
    if (elf == NULL || !spoor_elf_function(elf, unwind_lookup_pc(s), NULL, &start, NULL)) {
        return 0;
    }
    return start & ~1u;
}

/* What a plausible caller's return address is: an end marker and EXC_RETURN are taken as they
 * are; a function's first byte can be a task's start or no return at all (task_entry.c). */
static unwind_return_kind return_kind(const unwind_env *env, const unwind_state *callee,
                                      const unwind_state *caller, uint32_t *hook)
{
    uint32_t ra = caller->r[UNWIND_PC];
    if (ra == 0 || ra == RESET_LR || spoor_cortexm_is_exc_return(ra)) {
        return UNWIND_RETURN_CALL;
    }
    return spoor_unwind_return_kind(env, ra, function_entry(env->elf, callee), hook);
}

/* Tries the enabled methods in order; returns the method used or -1 with *failure set. A
 * return address that is a task's start is taken (*hook set: the walk ends there); one that
 * cannot be a return address makes the method's answer implausible. */
static int step_frame(const unwind_env *env, unsigned methods, const unwind_state *in, int ipsr,
                      unwind_state *out, spoor_unwind_stop *failure, uint32_t *hook)
{
    static const struct {
        spoor_unwind_method method;
        step_fn step;
    } order[] = {
        {SPOOR_UNWIND_CFI, spoor_unwind_cfi_step},
        {SPOOR_UNWIND_EHABI, spoor_unwind_ehabi_step},
        {SPOOR_UNWIND_PROLOGUE, spoor_unwind_prologue_step},
        {SPOOR_UNWIND_SCAN, spoor_unwind_scan_step},
    };
    *failure = SPOOR_STOP_NO_INFO;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if ((methods & (1u << order[i].method)) == 0) {
            continue;
        }
        unwind_state candidate = {0};
        unwind_result r = order[i].step(env, in, &candidate);
        if (r == UNWIND_OK && plausible(env->elf, in, &candidate, ipsr) &&
            return_kind(env, in, &candidate, hook) != UNWIND_RETURN_NONE) {
            *out = candidate;
            return (int)order[i].method;
        }
        if (r == UNWIND_UNREADABLE) {
            *failure = SPOOR_STOP_UNREADABLE;
        } else if (r == UNWIND_OK && *failure == SPOOR_STOP_NO_INFO) {
            *failure = SPOOR_STOP_BAD_FRAME;
        }
    }
    return -1;
}

static bool seen_before(const spoor_frame *frames, size_t count, const spoor_frame *f)
{
    for (size_t i = 0; i < count; i++) {
        if (frames[i].kind == f->kind && frames[i].pc == f->pc && frames[i].sp == f->sp) {
            return true;
        }
    }
    return false;
}

/* Which stack the current frame's SP is on. */
typedef enum walk_stack { STACK_UNKNOWN, STACK_MSP, STACK_PSP } walk_stack;

/* The stack of a state: a handler always runs on MSP; thread mode uses the one CONTROL.SPSEL
 * (bit 1) selects, unknown without CONTROL. */
static walk_stack stack_of(int ipsr, const spoor_regs *regs)
{
    if (ipsr != 0) {
        return STACK_MSP;
    }
    if (regs->have & SPOOR_HAVE_BANKED_SP) {
        return (regs->control & 2u) ? STACK_PSP : STACK_MSP;
    }
    return STACK_UNKNOWN;
}

/* Where the exception frame that EXC_RETURN ra describes is: above the handler's frame when
 * it is on the stack the walk is on, else at the banked SP of the other stack. False when
 * that stack pointer is not in the input (a QEMU gdbstub gives no MSP/PSP). */
static bool exception_frame_address(const spoor_regs *regs, walk_stack current,
                                    const unwind_state *handler, bool on_psp, uint32_t *addr)
{
    walk_stack needed = on_psp ? STACK_PSP : STACK_MSP;
    if (needed == current) {
        *addr = handler->r[UNWIND_SP];
        return true;
    }
    if (!(regs->have & SPOOR_HAVE_BANKED_SP)) {
        return false;
    }
    *addr = on_psp ? regs->psp : regs->msp;
    return true;
}

/* A stacked xPSR the core can have written for this EXC_RETURN: thread mode (EXC_RETURN bit
 * 3 set) has IPSR 0, handler mode a possible exception number. */
static bool possible_stacked_state(uint32_t exc_return, uint32_t stacked_xpsr)
{
    int ipsr = (int)(stacked_xpsr & 0x1FFu);
    bool to_thread = (exc_return & 8u) != 0;
    return to_thread ? ipsr == 0 : possible_exception(ipsr);
}

/* The functions between the frame last written (state callee) and its caller (return address
 * ra, SP caller_sp) that tail-called their way to the callee, from DWARF call sites
 * (dwarf_call_sites.h): written as SPOOR_UNWIND_TAILCALL frames with the caller's SP, the
 * frame before an unknown gap marked tailcalls_possible. False when the array filled up. */
static bool add_tail_calls(const spoor_elf *elf, const unwind_state *callee, uint32_t ra,
                           uint32_t caller_sp, spoor_frame *frames, size_t *count, size_t max)
{
    uint32_t entry = function_entry(elf, callee);
    if (entry == 0) {
        return true;
    }
    call_site_chain chain;
    spoor_call_site_chain(elf, ra, entry, &chain);
    if (chain.possible && chain.gap == 0) {
        frames[*count - 1].tailcalls_possible = true;
    }
    for (size_t i = 0; i < chain.count; i++) {
        if (*count == max) {
            return false;
        }
        frames[(*count)++] = (spoor_frame){
            .kind = SPOOR_FRAME_CALL,
            .method = SPOOR_UNWIND_TAILCALL,
            .pc = chain.pc[i] & ~1u,
            .sp = caller_sp,
            .pc_is_return = true,
            .exception = -1,
            .tailcalls_possible = chain.possible && chain.gap == i + 1,
        };
    }
    return true;
}

/* One walk: where it is (cur, the exception it is in, the stack it is on, the method that
 * found cur) and the frames so far. */
typedef struct walk {
    const spoor_elf *elf;
    const spoor_regs *regs;
    unwind_env env;
    unsigned methods;
    unwind_state cur;
    int ipsr;
    walk_stack stack;
    spoor_unwind_method method;
    spoor_frame *frames;
    size_t count, max;
} walk;

/* Appends the frame of w->cur; false (with *why) when the walk ends at it. */
static bool record_frame(walk *w, spoor_unwind_stop *why)
{
    spoor_frame f = {
        .kind = SPOOR_FRAME_CALL,
        .method = w->method,
        .pc = w->cur.r[UNWIND_PC] & ~1u,
        .sp = w->cur.r[UNWIND_SP],
        .pc_is_return = w->cur.pc_is_return,
        .exception = -1,
    };
    if (seen_before(w->frames, w->count, &f)) {
        *why = SPOOR_STOP_LOOP;
        return false;
    }
    w->frames[w->count++] = f;
    if (in_reset_handler(w->elf, unwind_lookup_pc(&w->cur))) {
        *why = SPOOR_STOP_RESET;
        return false;
    }
    if (spoor_unwind_thread_root(w->elf, unwind_lookup_pc(&w->cur))) {
        *why = SPOOR_STOP_THREAD_ROOT;
        return false;
    }
    return true;
}

/* The caller of a frame whose PC is not code: a call through a bad pointer. Nothing was
 * pushed, LR returns. With no usable LR either (a fault whose exception frame was never
 * written, as in a stack overflow, leaves PC and LR unknown), the stack scan is the only way
 * on. */
static bool caller_of_bad_pc(walk *w, unwind_state *caller, spoor_unwind_stop *why)
{
    uint32_t lr = w->cur.r[UNWIND_LR];
    bool lr_usable = unwind_known(&w->cur, UNWIND_LR) && lr != 0 && lr != RESET_LR &&
                     possible_return(w->elf, lr, w->ipsr);
    if (lr_usable) {
        *caller = w->cur;
        caller->r[UNWIND_PC] = lr;
        w->method = SPOOR_UNWIND_LINK;
    } else if ((w->methods & SPOOR_UNWIND_USE_SCAN) &&
               spoor_unwind_scan_step(&w->env, &w->cur, caller) == UNWIND_OK &&
               plausible(w->elf, &w->cur, caller, w->ipsr)) {
        w->method = SPOOR_UNWIND_SCAN;
    } else {
        *why = SPOOR_STOP_NO_INFO;
        return false;
    }
    return true;
}

/* The caller of w->cur from the first method that gives a plausible one; false (with *why)
 * when none does or when the frame is a task's entry. */
static bool find_caller(walk *w, unwind_state *caller, spoor_unwind_stop *why)
{
    if (!w->cur.pc_is_return && !is_code(w->elf, w->cur.r[UNWIND_PC] & ~1u)) {
        return caller_of_bad_pc(w, caller, why);
    }
    uint32_t hook = 0;
    spoor_unwind_stop failure;
    int used = step_frame(&w->env, w->methods, &w->cur, w->ipsr, caller, &failure, &hook);
    if (used < 0) {
        *why = failure;
        return false;
    }
    if (hook != 0) {
        w->frames[w->count - 1].task_exit_hook = hook;
        *why = SPOOR_STOP_TASK_ENTRY;
        return false;
    }
    w->method = (spoor_unwind_method)used;
    return true;
}

/* caller returned to EXC_RETURN ra: appends the exception boundary and moves w->cur to the
 * interrupted code; false (with *why) when the walk ends there. plausible() made sure the
 * frame below is a handler with a possible number (w->ipsr). */
static bool cross_exception(walk *w, const unwind_state *caller, uint32_t ra,
                            spoor_unwind_stop *why)
{
    exception_frame_layout layout = spoor_unwind_exception_layout(ra);
    uint32_t frame_addr;
    if (!exception_frame_address(w->regs, w->stack, caller, layout.on_psp, &frame_addr)) {
        *why = SPOOR_STOP_OTHER_STACK;
        return false;
    }
    if (w->count == w->max) {
        *why = SPOOR_STOP_FRAME_LIMIT;
        return false;
    }
    spoor_frame boundary = {
        .kind = SPOOR_FRAME_EXCEPTION,
        .method = SPOOR_UNWIND_EXCEPTION,
        .pc = ra,
        .sp = frame_addr,
        .exception = w->ipsr,
        .fp_frame = layout.fp_frame,
        .on_psp = layout.on_psp,
        .additional_state = layout.additional_state,
    };
    if (seen_before(w->frames, w->count, &boundary)) {
        *why = SPOOR_STOP_LOOP;
        return false;
    }
    w->frames[w->count++] = boundary;
    uint32_t stacked_xpsr = 0;
    unwind_state interrupted = {0};
    if (spoor_unwind_exception_step(&w->env, ra, frame_addr, &interrupted, &stacked_xpsr) !=
        UNWIND_OK) {
        *why = SPOOR_STOP_UNREADABLE;
        return false;
    }
    if (!possible_stacked_state(ra, stacked_xpsr)) {
        *why = SPOOR_STOP_BAD_EXCEPTION_FRAME;
        return false;
    }
    /* Callee-saved registers the handler restored belong to the interrupted code. */
    for (int reg = 4; reg <= 11; reg++) {
        if (!unwind_known(&interrupted, reg) && unwind_known(caller, reg)) {
            unwind_set(&interrupted, reg, caller->r[reg]);
        }
    }
    w->ipsr = (int)(stacked_xpsr & 0x1FFu);
    w->stack = layout.on_psp ? STACK_PSP : STACK_MSP;
    w->cur = interrupted;
    w->method = SPOOR_UNWIND_EXCEPTION;
    return true;
}

size_t spoor_unwind(const spoor_elf *elf, const spoor_regs *regs, spoor_read_fn read, void *ctx,
                    const spoor_unwind_options *options, spoor_frame *frames, size_t max,
                    spoor_unwind_stop *stop)
{
    spoor_unwind_stop why = SPOOR_STOP_FRAME_LIMIT;
    walk w = {
        .elf = elf,
        .regs = regs,
        .env = {.elf = elf,
                .read = read,
                .ctx = ctx,
                .scan_words = options != NULL && options->scan_words != 0 ? options->scan_words
                                                                          : DEFAULT_SCAN_WORDS},
        .methods = options != NULL && options->methods != 0 ? options->methods : SPOOR_UNWIND_ALL,
        .ipsr = (int)(regs->xpsr & 0x1FFu),
        .method = SPOOR_UNWIND_REGISTERS,
        .frames = frames,
        .max = max,
    };
    memcpy(w.cur.r, regs->r, sizeof w.cur.r);
    w.cur.known = 0xFFFFu;
    w.cur.r[UNWIND_PC] &= ~1u;
    w.stack = stack_of(w.ipsr, regs);

    while (w.count < max) {
        unwind_state caller;
        if (!record_frame(&w, &why) || !find_caller(&w, &caller, &why)) {
            break;
        }
        uint32_t ra = caller.r[UNWIND_PC];
        if (ra == 0 || ra == RESET_LR) {
            why = SPOOR_STOP_END_OF_STACK;
            break;
        }
        if (spoor_cortexm_is_exc_return(ra)) {
            if (!cross_exception(&w, &caller, ra, &why)) {
                break;
            }
            continue;
        }
        if (!add_tail_calls(elf, &w.cur, ra, caller.r[UNWIND_SP], frames, &w.count, max)) {
            break;
        }
        caller.r[UNWIND_PC] = ra & ~1u;
        caller.pc_is_return = true;
        /* At the return point LR still holds the return address the call put there. */
        unwind_set(&caller, UNWIND_LR, ra);
        w.cur = caller;
    }
    if (stop != NULL) {
        *stop = why;
    }
    return w.count;
}
