#include "arch/capstone_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

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

static capstone_api api;
static bool api_loaded;
static pthread_key_t thumb_key;
static bool thumb_key_made;

static void close_thumb(void *p)
{
    capstone_thumb *t = p;
    t->cs->free(t->insn, 1);
    t->cs->close(&t->handle);
    free(t);
}

static void load_once(void)
{
    api_loaded = load(&api);
    thumb_key_made = api_loaded && pthread_key_create(&thumb_key, close_thumb) == 0;
}

static pthread_once_t load_control = PTHREAD_ONCE_INIT;

const capstone_api *spoor_capstone_get(void)
{
    pthread_once(&load_control, load_once);
    return api_loaded ? &api : NULL;
}

const capstone_thumb *spoor_capstone_thumb(void)
{
    if (!spoor_capstone_get() || !thumb_key_made)
        return NULL;
    capstone_thumb *t = pthread_getspecific(thumb_key);
    if (t)
        return t;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cs = &api;
    if (api.open(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS, &t->handle) != CS_ERR_OK) {
        free(t);
        return NULL;
    }
    api.option(t->handle, CS_OPT_DETAIL, CS_OPT_ON);
    t->insn = api.malloc_insn(t->handle);
    if (!t->insn || pthread_setspecific(thumb_key, t) != 0) {
        if (t->insn)
            api.free(t->insn, 1);
        api.close(&t->handle);
        free(t);
        return NULL;
    }
    return t;
}
