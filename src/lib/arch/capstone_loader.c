#include "arch/capstone_loader.h"

#include <dlfcn.h>
#include <stddef.h>

/* The shared library names to try: Debian 12's, a newer major version, the development link. */
static const char *const library_names[] = {"libcapstone.so.4", "libcapstone.so.5",
                                            "libcapstone.so"};

static bool load(capstone_api *api)
{
    void *lib = NULL;
    for (size_t i = 0; !lib && i < sizeof library_names / sizeof library_names[0]; i++)
        lib = dlopen(library_names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return false;
        /* POSIX: a void * from dlsym converts to a function pointer through this copy. */
#define BIND(field, symbol)                                                                        \
    do {                                                                                           \
        void *sym = dlsym(lib, symbol);                                                            \
        if (!sym)                                                                                  \
            return false;                                                                          \
        *(void **)&api->field = sym;                                                               \
    } while (0)
    BIND(open, "cs_open");
    BIND(option, "cs_option");
    BIND(malloc_insn, "cs_malloc");
    BIND(disasm_iter, "cs_disasm_iter");
    BIND(free, "cs_free");
    BIND(close, "cs_close");
#undef BIND
    return true; /* the library stays loaded for the life of the process */
}

const capstone_api *spoor_capstone_get(void)
{
    static capstone_api api;
    static int state; /* 0 not tried, 1 loaded, -1 failed */
    if (state == 0)
        state = load(&api) ? 1 : -1;
    return state > 0 ? &api : NULL;
}
