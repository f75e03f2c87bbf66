/* DWARF call sites (DW_TAG_call_site, DWARF 5, and DW_TAG_GNU_call_site, the DWARF 4 GNU
 * extension) read with libdw, for the unwinder's tail-call frames (unwind.c) and its
 * "is this function ever called" question (task_entry.c); not a public interface.
 *
 * The table is built on first use and kept with the ELF (freed at close). Before any DIE is
 * read, .debug_abbrev is scanned for the two call-site tags: an ELF without them costs that
 * scan and nothing else, and only the units whose abbreviations have them are walked. */
#ifndef SPOOR_DWARF_CALL_SITES_H
#define SPOOR_DWARF_CALL_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/elf.h"

/* Most tail-call frames one gap can be filled with. */
#define CALL_SITE_CHAIN_MAX 32

/* The tail calls between a callee frame and its caller's return address, as gdb rebuilds
 * them: every chain of tail-call sites that leads from the function the caller's call site
 * calls to the callee's function is found; the frames all of them agree on are given. */
typedef struct call_site_chain {
    /* The frames to insert, innermost first: each is the return address of a tail-call site
     * (DW_AT_call_return_pc / DW_AT_low_pc, the address after the `b.w`), so it is looked up
     * at pc - 1 like any return address. */
    uint32_t pc[CALL_SITE_CHAIN_MAX];
    size_t count;
    /* More tail calls may lie between pc[gap - 1] (the callee when gap is 0) and pc[gap]
     * (the caller when gap == count) than are given: more than one chain fits, a tail call
     * on the way has no known target, a function on the way has no call-site information,
     * or no chain explains why the call site calls another function than the callee. */
    bool possible;
    size_t gap;
} call_site_chain;

/* Fills *out for a frame of the function whose entry is callee_entry whose caller returns
 * to return_address (Thumb bit ignored). out->count is 0 and out->possible false when there
 * is no call site at return_address, it calls callee_entry itself, its target is not known
 * (an indirect call), or the ELF has no call-site information. */
void spoor_call_site_chain(const spoor_elf *elf, uint32_t return_address, uint32_t callee_entry,
                           call_site_chain *out);

/* True when some call site (a call or a tail call) names function_entry as its target. */
bool spoor_call_site_targets(const spoor_elf *elf, uint32_t function_entry);

/* How many call sites the ELF has (builds the table); 0 without call-site information. */
size_t spoor_call_site_count(const spoor_elf *elf);

/* How many compile units were walked for the table (0 when .debug_abbrev has no call-site
 * tag): the cost of the table, for tests. */
size_t spoor_call_site_units_read(const spoor_elf *elf);

#endif
