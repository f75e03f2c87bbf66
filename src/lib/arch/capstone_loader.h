/* capstone, loaded on first use: only the unwinder's prologue analysis disassembles, and
 * loading the library costs every spoor process ~1.2 ms of start-up (its relocations), which
 * commands such as `spoor sym` in a script loop would pay for nothing. */
#ifndef SPOOR_CAPSTONE_LOADER_H
#define SPOOR_CAPSTONE_LOADER_H

#include <capstone/capstone.h>

typedef struct capstone_api {
    cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
    cs_err (*option)(csh handle, cs_opt_type type, size_t value);
    cs_insn *(*malloc_insn)(csh handle);
    bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
                        cs_insn *insn);
    void (*free)(cs_insn *insn, size_t count);
    cs_err (*close)(csh *handle);
} capstone_api;

/* The library's functions, loaded the first time (once, whichever thread asks first); NULL
 * when it cannot be loaded. */
const capstone_api *spoor_capstone_get(void);

/* A Thumb (M-profile) disassembler with instruction details (cs_insn.detail) and the one
 * instruction buffer it decodes into. */
typedef struct capstone_thumb {
    const capstone_api *cs;
    csh handle;
    cs_insn *insn;
} capstone_thumb;

/* The calling thread's disassembler, opened on its first use in the thread and closed when the
 * thread ends; NULL when capstone cannot be loaded or opened. The one place libspoor opens
 * capstone (the prologue analysis, spoor_thumb_disassemble). */
const capstone_thumb *spoor_capstone_thumb(void);

#endif
