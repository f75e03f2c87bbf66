/* One loaded firmware ELF: its memory image, symbols, build-id and the symbolizer.
 * An ELF is loaded once; DWARF scope and line tables are built on first use, one compile unit
 * at a time (the unit an address falls into), all at once when many lookups come, and every
 * lookup is a binary search. All strings returned are owned by the spoor_elf and live
 * until spoor_elf_close(). Addresses are 32-bit; the Thumb bit is ignored on input. */
#ifndef SPOOR_ELF_H
#define SPOOR_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct spoor_elf spoor_elf;

/* Opens and checks a 32-bit ARM ELF. NULL on failure with spoor_last_error() set to
 * "FILE: cannot open: ...", "FILE: not an ELF file", "FILE: not a 32-bit ARM ELF (machine N)",
 * "FILE: truncated or corrupt ELF: ..." (headers that do not fit together: a section past the
 * end of the file, a section link or name out of range, a malformed symbol table header; the
 * message names the section) or "FILE: split DWARF (-gsplit-dwarf) ...". Contents that cannot
 * be read do not fail the open: they are skipped and listed by spoor_elf_warnings(). */
spoor_elf *spoor_elf_open(const char *path);
void spoor_elf_close(spoor_elf *elf);
/* Whether function names are handed out demangled (C++ and Rust, as `addr2line -C` prints
 * them; the default) or as the ELF has them: the DWARF linkage name, else DW_AT_name, and the
 * symbol-table name (as addr2line without -C). Names returned before stay valid. */
void spoor_elf_set_demangle(spoor_elf *elf, bool demangle);
const char *spoor_elf_path(const spoor_elf *elf);

/* The parts of the ELF spoor could not read and skipped, one line each naming the file, the
 * section and, for DWARF, the unit's offset ("FW.elf: .debug_line unit at 0x1a4: line_range 0:
 * line rows of this unit ignored"), each once. Opening finds problems of the sections and the
 * symbol table; DWARF units are read on first use, so lookups can add lines: the list only grows
 * and its earlier entries stay. Returns the number of lines; *list (when list is not NULL) gets
 * them, valid until the next lookup or spoor_elf_close(). */
size_t spoor_elf_warnings(const spoor_elf *elf, const char *const **list);

/* True when the answer for addr (spoor_elf_symbolize, spoor_elf_function) may be missing
 * something because of a part spoor_elf_warnings lists: the DWARF unit whose code holds addr, or
 * a part that every answer depends on (the symbol table, the list of units). False when nothing
 * was skipped. Ask after the lookup: units are read on first use. */
bool spoor_elf_partial(const spoor_elf *elf, uint32_t addr);

/* True when the ELF has DWARF line or function information. */
bool spoor_elf_has_dwarf(const spoor_elf *elf);
/* True when the ELF was built for the hard-float ABI (EF_ARM_ABI_FLOAT_HARD). */
bool spoor_elf_hard_float(const spoor_elf *elf);
/* True when the ELF has at least one function symbol or DWARF subprogram. */
bool spoor_elf_has_symbols(const spoor_elf *elf);

/* Copies bytes of the ELF's loadable contents (SHF_ALLOC sections with file data, by
 * their load address) at [addr, addr+len) into buf. Returns how many leading bytes were
 * available (0 if addr is not in any such section). */
size_t spoor_elf_read(const spoor_elf *elf, uint32_t addr, void *buf, size_t len);

/* One loadable section (SHF_ALLOC with file data), for views of the target's memory. */
typedef struct spoor_elf_range {
    const char *name;
    uint32_t addr, size;
    const uint8_t *data;
    bool writable; /* SHF_WRITE: initial values only, not what a running target holds */
    bool code;     /* SHF_EXECINSTR */
} spoor_elf_range;

/* The loadable sections in file order: writes at most max into out, returns how many exist. */
size_t spoor_elf_ranges(const spoor_elf *elf, spoor_elf_range *out, size_t max);

/* The sections the running target writes (SHF_ALLOC and SHF_WRITE: .data, .bss, heap and stack
 * sections), in file order, data NULL for those without file contents (SHT_NOBITS): where its RAM
 * state is. Writes at most max into out, returns how many exist. */
size_t spoor_elf_ram_ranges(const spoor_elf *elf, spoor_elf_range *out, size_t max);

/* The loadable segments (PT_LOAD with file data, at their virtual address) in file order, name
 * "LOAD": what the loader copies, padding between sections included. Writes at most max into
 * out, returns how many exist. */
size_t spoor_elf_load_segments(const spoor_elf *elf, spoor_elf_range *out, size_t max);

/* A section by name ("".ARM.exidx", ".text", ...): its address, contents and size. */
bool spoor_elf_section(const spoor_elf *elf, const char *name, uint32_t *addr, const uint8_t **data,
                       size_t *size);

/* True when addr lies in an executable (SHF_EXECINSTR) section. */
bool spoor_elf_is_code(const spoor_elf *elf, uint32_t addr);

/* The GNU build-id note (NT_GNU_BUILD_ID), or false when the ELF has none. */
bool spoor_elf_build_id(const spoor_elf *elf, const uint8_t **id, size_t *len);

/* A symbol's value (Thumb bit cleared for functions) and size, by name. */
bool spoor_elf_symbol(const spoor_elf *elf, const char *name, uint32_t *addr, uint32_t *size);

/* One frame of a symbolized address. frames[0] is the innermost: the function whose code
 * holds the address (an inlined function when the address is in inlined code) and the
 * line-table file:line. Each later frame is the function the previous one was inlined
 * into, with the call site's file:line. Unknown strings are NULL, unknown line 0. */
typedef struct spoor_location {
    const char *function;
    uint32_t offset;  /* addr - start of the code range of `function` that holds addr */
    bool has_offset;  /* false when function is unknown */
    const char *file; /* as DWARF names it (comp dir joined when the name is relative) */
    unsigned line;
} spoor_location;

/* Symbolizes addr into at most max frames (innermost first). Returns the number of frames
 * written; a frame count of 1 with function == NULL means nothing is known. When more than
 * max frames exist the outermost ones are dropped. Returns 0 only when max is 0. */
size_t spoor_elf_symbolize(const spoor_elf *elf, uint32_t addr, spoor_location *frames, size_t max);

/* spoor_elf_symbolize() of a PC that may be a return address: the inline chain of
 * spoor_lookup_pc(pc, pc_is_return) (spoor/thumb.h), with loc[0].offset counted to pc, the
 * address shown, not to the lookup address (a return address is one byte further). */
size_t spoor_elf_symbolize_pc(const spoor_elf *elf, uint32_t pc, bool pc_is_return,
                              spoor_location *loc, size_t max);

/* The offset to show after the outermost name of such a PC: pc minus the start of the
 * out-of-line function that holds its lookup address, as a disassembly (gdb's `info symbol`,
 * addr2line -f) counts it; an inlined function's own offset counts from its inlined block,
 * which no disassembly shows. A return address after a function's last call gives that
 * function's size. innermost (loc[0] of spoor_elf_symbolize_pc) gives the offset when no
 * function holds the address. */
uint32_t spoor_elf_function_offset(const spoor_elf *elf, uint32_t pc, bool pc_is_return,
                                   const spoor_location *innermost);

/* Which answer spoor_elf_symbolize gives for addr, as two numbers into id, for callers that
 * print many answers (an answer formatted once serves every address of its id): two addresses
 * with the same id get the same frames but for frames[0].offset, which is the address (its Thumb
 * bit cleared) minus *base (when frames[0].has_offset), and frames[0].line, which is *line; when
 * frames[0].file is NULL, *line is 0 for every address of the id. False when it cannot tell: before
 * many lookups were made (while tables of single units answer) and when the ELF has warnings.
 * Looks up nothing that spoor_elf_symbolize would not. */
bool spoor_elf_answer_id(const spoor_elf *elf, uint32_t addr, uint64_t id[2], uint32_t *base,
                         unsigned *line);

/* The function containing addr and its start address and size (DWARF first, then the
 * symbol table; a symbol of size 0, as assembly without .size has, names the code up to the
 * next symbol in its section, as in addr2line and gdb, and *size is that many bytes); false
 * when none. */
bool spoor_elf_function(const spoor_elf *elf, uint32_t addr, const char **name, uint32_t *start,
                        uint32_t *size);

/* The distinct DW_AT_comp_dir of the ELF's compile units, in unit order, at most max of them
 * (strings owned by the ELF): the directories a relative source file name may be relative to. */
size_t spoor_elf_comp_dirs(const spoor_elf *elf, const char **dirs, size_t max);

/* Tag_CPU_arch of the ELF's build attributes (.ARM.attributes, "aeabi" file attributes; ARM
 * IHI 0045 "Addenda to the ARM ABI" 2.4), e.g. SPOOR_ELF_ARCH_V6M for a Cortex-M0 build;
 * SPOOR_ELF_ARCH_UNKNOWN when there are none or they cannot be read. */
typedef enum spoor_elf_arch {
    SPOOR_ELF_ARCH_UNKNOWN = -1,
    SPOOR_ELF_ARCH_V7 = 10, /* ARMv7 (with profile M: ARMv7-M) */
    SPOOR_ELF_ARCH_V6M = 11,
    SPOOR_ELF_ARCH_V6SM = 12,
    SPOOR_ELF_ARCH_V7EM = 13,
    SPOOR_ELF_ARCH_V8M_BASE = 16,
    SPOOR_ELF_ARCH_V8M_MAIN = 17,
    SPOOR_ELF_ARCH_V81M_MAIN = 21,
} spoor_elf_arch;
spoor_elf_arch spoor_elf_cpu_arch(const spoor_elf *elf);

#endif
