/* spoor_demangle and its cache against binutils' c++filt.
 *
 * The expected names below were taken from `arm-none-eabi-c++filt -i` (binutils 2.40): -i
 * drops DMGL_VERBOSE, which leaves DMGL_PARAMS | DMGL_ANSI, the options addr2line -C uses
 * (so Rust names come without their hash or crate disambiguator). Each test also runs
 * c++filt on the same names now, so the table and the tool cannot drift apart unseen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/demangle.h"

struct case_ {
    const char *mangled, *demangled; /* demangled NULL: not a mangled name, left as it is */
};

static const struct case_ cases[] = {
    /* C++ (Itanium ABI), from the issue and tests/e2e/fw/producers/cxx_classes.cpp */
    {"_ZN9MMA8652FC16I2C_RegisterReadEh", "MMA8652FC::I2C_RegisterRead(unsigned char)"},
    {"_Z11showVersionv", "showVersion()"},
    {"_ZN4util4RingIiLi8EEC4Ev", "util::Ring<int, 8>::Ring()"},
    {"_ZN4util5clampIiEET_S1_S1_S1_", "int util::clamp<int>(int, int, int)"},
    {"_ZN4utilplENS_3VecES0_", "util::operator+(util::Vec, util::Vec)"},
    {"_ZN12_GLOBAL__N_113hidden_helperEi", "(anonymous namespace)::hidden_helper(int)"},
    {"_ZNK6sensor13Accelerometer4axisEi", "sensor::Accelerometer::axis(int) const"},
    {"_Z4worki.part.0", "work(int) [clone .part.0]"},
    {"_ZN2ns1fIJidEEEvDpT_", "void ns::f<int, double>(int, double)"},
    {"_ZNSt6vectorIiSaIiEE9push_backERKi",
     "std::vector<int, std::allocator<int> >::push_back(int const&)"},
    {"_ZNSs4swapERSs", "std::string::swap(std::string&)"},
    {"_ZdlPv", "operator delete(void*)"},
    {"_ZThn8_N1B1fEv", "non-virtual thunk to B::f()"},
    {"_ZGVZ4mainE1x", "guard variable for main::x"},
    {"_GLOBAL__I_main", "global constructors keyed to main"},
    /* Rust, legacy mangling (an Itanium-like name ending in a hash) */
    {"_ZN3foo3bar17h05af221e174051e9E", "foo::bar"},
    {"_ZN4core3fmt9Formatter3pad17h1a2b3c4d5e6f7a8bE", "core::fmt::Formatter::pad"},
    {"_ZN71_$LT$Test$u20$$u2b$$u20$$u27$static$u20$as$u20$foo..Bar$LT$Test$GT$$GT$"
     "3bar17h930b740aa94f1d3aE",
     "<Test + 'static as foo::Bar<Test>>::bar"},
    /* Rust, v0 mangling */
    {"_RNvCskwGfYPst2Cb_3foo16example_function", "foo::example_function"},
    {"_RINvNtC3std3mem8align_ofjE", "std::mem::align_of::<usize>"},
    {"_RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3newCs15kBYyAo9fc_7mycrate",
     "<std::path::PathBuf>::new"},
    {"_RNCNvC8my_crate4main0B3_", "my_crate::main::{closure#0}"},
    {"_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar"},
    /* not mangled, or not validly: c++filt echoes them */
    {"main", NULL},
    {"Reset_Handler", NULL},
    {"_sbrk", NULL},
    {"__libc_init_array", NULL},
    {"_GLOBAL__sub_I_main", NULL},
    {"_Zfoo", NULL},
    {"_R", NULL},
    {"_Z", NULL},
    {"", NULL},
};

#define NCASES (sizeof cases / sizeof cases[0])

/* What `arm-none-eabi-c++filt -i` prints for name (newline removed), in a static buffer. The
 * name goes through a file on standard input: no quoting, no limit on its length. */
static const char *cxxfilt(const char *name)
{
    static char out[1 << 16];
    char path[] = "/tmp/spoor-demangle-XXXXXX", cmd[128];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", name);
    assert_int_equal(fclose(f), 0);
    snprintf(cmd, sizeof cmd, "arm-none-eabi-c++filt -i < %s", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    assert_int_equal(pclose(p), 0);
    unlink(path);
    out[n] = 0;
    out[strcspn(out, "\n")] = 0;
    return out;
}

static void table_matches_cxxfilt(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        const char *ref = cxxfilt(cases[i].mangled);
        const char *want = cases[i].demangled ? cases[i].demangled : cases[i].mangled;
        if (strcmp(ref, want))
            fail_msg("%s: c++filt -i says '%s', the table '%s'", cases[i].mangled, ref, want);
    }
}

static void demangles_like_cxxfilt(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        char *got = spoor_demangle(cases[i].mangled);
        if (!cases[i].demangled) {
            if (got)
                fail_msg("%s: demangled to '%s'", cases[i].mangled, got);
            continue;
        }
        if (!got || strcmp(got, cases[i].demangled))
            fail_msg("%s: got '%s', want '%s'", cases[i].mangled, got ? got : "(null)",
                     cases[i].demangled);
        free(got);
    }
    assert_null(spoor_demangle(NULL));
}

/* The cache gives the demangled text, the same string for the same name, and the name itself
 * (the same pointer) for one that is not mangled. */
static void cache_returns_stable_strings(void **state)
{
    (void)state;
    struct spoor_demangle_cache cache = {0};
    assert_null(spoor_demangle_cached(&cache, NULL));
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < NCASES; i++) {
            const char *got = spoor_demangle_cached(&cache, cases[i].mangled);
            if (cases[i].demangled)
                assert_string_equal(got, cases[i].demangled);
            else
                assert_ptr_equal(got, cases[i].mangled);
            assert_ptr_equal(got, spoor_demangle_cached(&cache, cases[i].mangled));
        }
    /* equal text at another address is looked up on its own, with the same answer */
    char copy[64];
    strcpy(copy, "_Z11showVersionv");
    assert_string_equal(spoor_demangle_cached(&cache, copy), "showVersion()");
    spoor_demangle_cache_free(&cache);
    spoor_demangle_cache_free(&cache); /* freeing twice is harmless */
}

/* Many names: the table grows several times and every answer stays right. */
static void cache_grows(void **state)
{
    (void)state;
    enum { N = 5000 };
    static char names[N][32];
    const char *first[N];
    struct spoor_demangle_cache cache = {0};
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "_Z8func%04dv", i);
        first[i] = spoor_demangle_cached(&cache, names[i]);
    }
    for (int i = 0; i < N; i++) {
        char want[32];
        snprintf(want, sizeof want, "func%04d()", i);
        const char *got = spoor_demangle_cached(&cache, names[i]);
        assert_string_equal(got, want);
        assert_ptr_equal(got, first[i]);
    }
    spoor_demangle_cache_free(&cache);
}

/* _Z<n>aaa...v: a function of n characters' name, f() for n = 1. */
static char *long_name(size_t n)
{
    char *s = malloc(n + 16);
    assert_non_null(s);
    int len = snprintf(s, 16, "_Z%zu", n);
    memset(s + len, 'a', n);
    strcpy(s + len + n, "v");
    return s;
}

/* Long and hostile names come out as c++filt gives them: libiberty demangles names of up to
 * about 1,000 characters and refuses longer ones (whose working arrays it would put on the
 * stack), and gives up on nesting beyond its recursion limit. Both sides of that limit are
 * checked, and that it really is where it is. */
static void long_and_hostile_names(void **state)
{
    (void)state;
    int demangled = 0, refused = 0;
    for (size_t n = 1000; n <= 1040; n += 4) {
        char *name = long_name(n);
        char *got = spoor_demangle(name);
        assert_string_equal(got ? got : name, cxxfilt(name));
        demangled += got != NULL;
        refused += got == NULL;
        free(got);
        free(name);
    }
    assert_true(demangled > 0 && refused > 0);

    static char deep[20000];
    strcpy(deep, "_Z1fP");
    memset(deep + 5, 'P', sizeof deep - 7);
    deep[sizeof deep - 2] = 'v';
    char *d = spoor_demangle(deep);
    assert_string_equal(d ? d : deep, cxxfilt(deep));
    free(d);
    char rust[4096] = "_RNv";
    for (size_t i = 4; i < sizeof rust - 16; i += 2)
        memcpy(rust + i, "Nv", 2); /* nested paths: beyond the recursion limit */
    strcpy(rust + sizeof rust - 16, "C3foo3bar");
    d = spoor_demangle(rust);
    assert_string_equal(d ? d : rust, cxxfilt(rust));
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_matches_cxxfilt),        cmocka_unit_test(demangles_like_cxxfilt),
        cmocka_unit_test(cache_returns_stable_strings), cmocka_unit_test(cache_grows),
        cmocka_unit_test(long_and_hostile_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
