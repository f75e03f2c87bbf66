/* Demangling of symbol names (C++ Itanium ABI, Rust legacy and v0) with GNU libiberty, the
 * demangler of binutils: names come out as `addr2line -C` prints them (parameters, qualifiers,
 * no Rust hashes or crate disambiguators). Results are cached per cache object by the
 * address of the name, since a symbolizer hands out the same few thousand names again. */
#ifndef SPOOR_DEMANGLE_H
#define SPOOR_DEMANGLE_H

#include <stddef.h>
#include <string.h>

/* The demangled form of name in a new malloc'ed string, or NULL when name is not a mangled
 * name libiberty knows, or memory ran out. libiberty refuses Itanium names of more than about
 * 1,000 characters itself (its recursion limit also bounds the stack arrays it sizes by the
 * name's length), as it does in addr2line. */
char *spoor_demangle(const char *name);

/* Whether libiberty could take name for a mangled one: Itanium names start with _Z (or are
 * _GLOBAL_ constructor names), Rust v0 names with _R. Everything else is left alone without
 * calling it (inline: a symbolizer asks this for every frame). */
static inline int spoor_may_be_mangled(const char *name)
{
    return name && name[0] == '_' &&
           (name[1] == 'Z' || name[1] == 'R' || (name[1] == 'G' && !strncmp(name, "_GLOBAL_", 8)));
}

struct spoor_demangle_entry;

/* Demangled names by the address of the mangled one. Zero-initialised it is empty; it owns
 * the demangled strings until spoor_demangle_cache_free(). */
struct spoor_demangle_cache {
    struct spoor_demangle_entry *slots;
    size_t cap, used; /* cap is 0 or a power of two */
};

/* The demangled form of name (NULL stays NULL), or name itself when it is not mangled. The
 * name must stay at its address, unchanged, while the cache lives. Never fails: without
 * memory the name comes back as it is. */
const char *spoor_demangle_cached(struct spoor_demangle_cache *cache, const char *name);

void spoor_demangle_cache_free(struct spoor_demangle_cache *cache);

#endif
