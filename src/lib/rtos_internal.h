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
bool rtos_dwarf_type(Dwarf *dw, const char *name, Dwarf_Die *out);

/* The type of the global variable name (peeled); false when DWARF does not describe it. */
bool rtos_dwarf_variable_type(Dwarf *dw, const char *name, Dwarf_Die *out);

/* Follows path inside type (a struct, union or array, peeled). Members of anonymous structs
 * and unions are found through them, as C names them. An empty path is the type itself. */
bool rtos_dwarf_field(Dwarf_Die *type, const char *path, rtos_field *out);

/* The byte size of a type; 0 when DWARF does not say. */
uint32_t rtos_dwarf_size(Dwarf_Die *type);

typedef struct rtos_enumerator {
    int64_t value;
    const char *name; /* lives as long as the Dwarf */
} rtos_enumerator;

/* The enumerators of the enumeration type (or typedef of one) named enum_name: writes at most
 * cap, returns how many were written (0: no such enumeration). */
size_t rtos_dwarf_enumerators(Dwarf *dw, const char *enum_name, rtos_enumerator *out, size_t cap);

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
    const char *prio_enum; /* the enumeration naming priorities */
    const char *idle;      /* an expression whose value is the idle TCB; a leading &
                              takes the object's address instead */
} rtos_desc;

extern const rtos_desc rtos_descs[SPOOR_RTOS_KIND_COUNT];

#endif
