/* Internals of the RTOS layer (spoor/rtos.h): DWARF type navigation (rtos_dwarf.c), the table of
 * RTOS descriptions (rtos_kinds.c), used by rtos.c. */
#ifndef SPOOR_RTOS_INTERNAL_H
#define SPOOR_RTOS_INTERNAL_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#include "spoor/elf.h"
#include "spoor/rtos.h"

/* What a member path ("thread.run.curr", "cpus[0].current", "base.prio") leads to. */
typedef struct rtos_field {
    bool found;
    uint32_t offset; /* from the start of the outer object */
    uint32_t size;   /* bytes of the member (of the whole array for an array) */
    bool is_pointer; /* a pointer (its target is read separately) */
    bool is_array;   /* an array (of char, for names) */
    bool is_signed;  /* a signed integer or enumeration base type */
    Dwarf_Die type;  /* the member's type, typedefs and qualifiers peeled */
} rtos_field;

/* The complete (not a declaration) type named name at the top of some compile unit: a typedef
 * or a struct/union tag ("struct k_thread" is looked up as "k_thread"), peeled to the struct.
 * false when there is none. */
bool spoor_rtos_dwarf_type(Dwarf *dw, const char *name, Dwarf_Die *out);

/* The type of the global variable name (peeled); false when DWARF does not describe it. */
bool spoor_rtos_dwarf_variable_type(Dwarf *dw, const char *name, Dwarf_Die *out);

/* Follows path inside type (a struct, union or array, peeled). Members of anonymous structs
 * and unions are found through them, as C names them. An empty path is the type itself. */
bool spoor_rtos_dwarf_field(Dwarf_Die *type, const char *path, rtos_field *out);

/* The byte size of a type; 0 when DWARF does not say. */
uint32_t spoor_rtos_dwarf_size(Dwarf_Die *type);

typedef struct rtos_enumerator {
    int64_t value;
    const char *name; /* lives as long as the Dwarf */
} rtos_enumerator;

/* The enumerators of the enumeration type (or typedef of one) named enum_name: writes at most
 * cap, returns how many were written (0: no such enumeration). */
size_t spoor_rtos_dwarf_enumerators(Dwarf *dw, const char *enum_name, rtos_enumerator *out,
                                    size_t cap);

/* Where an RTOS keeps its threads, for the thread views (spoor_rtos_threads). */
typedef enum rtos_list_kind {
    RTOS_LIST_END,
    RTOS_LIST_ARRAY,    /* head: an array of TCB pointers (every non-null element) */
    RTOS_LIST_LINKED,   /* head: an expression whose value is the first TCB; next: the TCB
                           member pointing to the following one (ends at null; a circular list
                           at the first) */
    RTOS_LIST_FREERTOS, /* head: a List_t, or an array of them (list.h: items from
                           xListEnd.pxNext to &xListEnd, each item's pvOwner the TCB) */
} rtos_list_kind;

typedef struct rtos_list {
    rtos_list_kind kind;
    const char *head, *next;
    spoor_thread_state state; /* what being on this list means: READY, SLEEPING, ... */
    const char *word;         /* the same in the list's own word ("delayed", "created"): the
                                 kernel's state when its TCB holds none */
    bool circular; /* LINKED: the last TCB links back to the first (ThreadX's created list);
                      otherwise the list ends with null and coming back to any TCB is a
                      loop: the list is cut there */
} rtos_list;

/* How a thread that is not running saved its context (the port's PendSV). */
typedef enum rtos_context {
    RTOS_CONTEXT_NONE,      /* not known: no backtrace */
    RTOS_CONTEXT_R4_R11,    /* at the saved SP r4-r11, then the hardware frame (ARMv7-M basic) */
    RTOS_CONTEXT_R4_R11_LR, /* r4-r11, EXC_RETURN, s16-s31 when EXC_RETURN bit 4 is 0, then the
                               hardware frame */
    RTOS_CONTEXT_FREERTOS,  /* the port's layout, told from the ELF (rtos_threads.c): ARM_CM0/CM3
                               r4-r11; ARM_CM4F r4-r11, EXC_RETURN, [s16-s31]; ARM_CM33_NTZ
                               PSPLIM, EXC_RETURN, r4-r11, [s16-s31]; ARM_CM33 (TrustZone)
                               xSecureContext first */
    RTOS_CONTEXT_ZEPHYR,    /* r4-r11 in the TCB from callee_saved_member on, EXC_RETURN's low
                               byte in exc_return_member when the build has it, the hardware
                               frame (basic or extended) at the saved SP */
    RTOS_CONTEXT_RTX5,      /* CMSIS-RTX: s16-s31 when EXC_RETURN bit 4 is 0, r4-r11, the
                               hardware frame; EXC_RETURN's low byte in exc_return_member
                               (ARMv6-M: r4-r11, the frame, EXC_RETURN 0xFFFFFFFD) */
    RTOS_CONTEXT_THREADX,   /* ThreadX Cortex-M ports: EXC_RETURN, s16-s31 when its bit 4 is
                               0, r4-r11, the hardware frame (ARMv6-M: EXC_RETURN, r8-r11,
                               r4-r7, the frame) */
} rtos_context;

#define RTOS_MAX_LISTS 8

/* How an RTOS fills a new thread's stack and counts what is left of the fill
 * (spoor/stack_usage.h has each RTOS's rules). */
typedef enum rtos_stack_fill {
    RTOS_FILL_NONE,     /* no stack in the TCB (the example scheduler) */
    RTOS_FILL_FREERTOS, /* 0xA5 bytes, counted in whole words; guard: 16 bytes at the far end */
    RTOS_FILL_RTX5,     /* 0xCCCCCCCC words above the magic word 0xE25A2EA5 */
    RTOS_FILL_ZEPHYR,   /* 0xAA bytes, counted in bytes; no guard: overflowed when none left */
    RTOS_FILL_THREADX,  /* 0xEF bytes, counted in whole words; guard: the first word */
} rtos_stack_fill;

/* Where the TCB records its stack: the far end (lowest address), and the top as the last word
 * (FreeRTOS pxEndOfStack), the last byte (ThreadX tx_thread_stack_end) or a size. */
typedef enum rtos_stack_top {
    RTOS_TOP_LAST_WORD,
    RTOS_TOP_LAST_BYTE,
    RTOS_TOP_SIZE,
} rtos_stack_top;

/* One RTOS as the DWARF layer reads it. Expressions are SYMBOL followed by a member path
 * (SYMBOL.a.b[0].c); alternatives are separated by '|', the first the ELF has is used. */
typedef struct rtos_desc {
    spoor_rtos_kind kind;
    const char *name, *display;
    const char *current;  /* the current-thread pointer */
    const char *tcb_type; /* alternatives */
    const char *name_member, *prio_member, *entry_member, *sp_member;
    const char *stack_end_member; /* the top of the stack: the initial frame is just below */
    const char *id_member;        /* a member that must hold id_value (RTX5's object id) */
    uint32_t id_value;
    const char *prio_enum;           /* the enumeration naming priorities */
    const char *idle;                /* an expression whose value is the idle TCB; a leading &
                                        takes the object's address instead */
    rtos_list lists[RTOS_MAX_LISTS]; /* ended by RTOS_LIST_END */
    rtos_context context;
    const char *callee_saved_member;
    const char *exc_return_member; /* the byte holding EXC_RETURN[7:0] (RTX5, Zephyr) */
    const char *stack_low_member;  /* the stack's far end (lowest address) */
    const char *stack_top_member;  /* its top, as stack_top says */
    rtos_stack_top stack_top;
    rtos_stack_fill stack_fill;
    /* The kernel's state (rtos_state.c): the state word, what a thread waits on, Zephyr's
     * timeout link (alternatives, as the members above) */
    const char *state_member, *wait_member, *timeout_member;
    const char *thread_root; /* the function every thread starts in (spoor_rtos_thread_root) */
    bool current_on_lists;   /* the running thread stays on the lists (not RTX5's): a current
                                TCB on none of them is no thread (SPOOR_THREAD_UNLISTED) */
} rtos_desc;

extern const rtos_desc spoor_rtos_descs[SPOOR_RTOS_KIND_COUNT];

#define MAX_PRIORITY_NAMES 128
#define MAX_EXPR_NAME 128 /* as long as an expression of the descriptions (MAX_EXPR) */

struct spoor_rtos {
    const rtos_desc *d;
    const spoor_elf *elf;
    uint32_t current_addr;
    char current_name[MAX_EXPR_NAME]; /* the alternative of d->current the ELF has */
    uint32_t tcb_size;
    Dwarf_Die tcb_type;
    rtos_field name, prio, entry, sp, stack_end, id, state, wait, timeout;
    int zephyr_layout;    /* rtos_state.c: which base.thread_state bit layout */
    char layout_why[160]; /* spoor_rtos_layout's line */
    bool has_idle, idle_is_object;
    uint32_t idle_addr;
    rtos_enumerator prios[MAX_PRIORITY_NAMES];
    size_t nprios;
};

/* The variable of the ELF (DWARF) whose object holds addr: its name, its type's name ("k_sem",
 * "TX_SEMAPHORE"; NULL when unnamed; type may be NULL) and addr's offset in it; false when
 * none. */
bool spoor_rtos_dwarf_variable_at(Dwarf *dw, uint32_t addr, const char **name, const char **type,
                                  uint32_t *offset);

/* rtos_state.c: picks how the state word is read (Zephyr's layout), at open. */
void spoor_rtos_state_setup(spoor_rtos *r);

/* A NUL-terminated string at addr (0: ""), read byte by byte, cut at cap - 1 (rtos_read.c). */
void spoor_rtos_read_string(spoor_read_fn read, void *ctx, uint32_t addr, char *out, size_t cap);
/* Bytes outside printable ASCII as '?'. */
void spoor_rtos_printable(char *s);
/* A little-endian word at addr; false when it cannot be read. */
bool spoor_rtos_read32(spoor_read_fn read, void *ctx, uint32_t addr, uint32_t *v);

/* An integer member of the TCB bytes, sign-extended when its type is signed (rtos_read.c). */
int64_t spoor_rtos_field_int(const rtos_field *f, const uint8_t *tcb);

/* The next alternative of an '|'-separated list into buf; NULL at the end (rtos_read.c). */
const char *spoor_rtos_next_alternative(const char *list, char *buf, size_t cap);

/* SYMBOL.path alternatives ('|'): the address the first the ELF has names, and its field. */
bool spoor_rtos_eval(const spoor_elf *elf, const char *alternatives, uint32_t *addr,
                     rtos_field *field);

#endif
