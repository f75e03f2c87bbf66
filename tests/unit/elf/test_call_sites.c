/* The DWARF call-site reader (src/lib/dwarf_call_sites.c) and the tail-call chain rule on a
 * real ELF: the tail-call test firmware tests/e2e/fw/tailcall_fw.c is compiled here with
 * arm-none-eabi-gcc -O2 -g, once
 * with DWARF 5 (DW_TAG_call_site, DW_AT_call_return_pc, DW_AT_call_origin,
 * DW_AT_call_tail_call) and once with DWARF 4 (DW_TAG_GNU_call_site, DW_AT_low_pc,
 * DW_AT_abstract_origin, DW_AT_GNU_tail_call); readelf must show each build's tag. The
 * expected return addresses come from arm-none-eabi-objdump, not from the reader: a call's
 * return address is the address after its `bl`, a tail call's the address after its `b.w`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "elf/dwarf_call_sites.h"
#include "spoor/elf.h"
#include "spoor/error.h"

struct build {
    const char *name, *flags, *tag;
    spoor_elf *elf;
    char path[512];
};

static struct build builds[] = {
    {"dwarf5", "-O2 -gdwarf-5", "DW_TAG_call_site", NULL, ""},
    {"dwarf4", "-O2 -gdwarf-4", "DW_TAG_GNU_call_site", NULL, ""},
    {"O0", "-O0 -g", NULL, NULL, ""},
};

static int build_all(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
        struct build *b = &builds[i];
        char command[2048];
        snprintf(b->path, sizeof b->path, "%s/call_sites_%s.elf", SPOOR_BUILD_DIR, b->name);
        snprintf(command, sizeof command,
                 "arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -ffreestanding -nostdlib %s "
                 "-T %s/tests/e2e/fw/tailcall_fw.ld "
                 "-Wl,--defsym=FW_FLASH=0x1000,--defsym=FW_RAM=0x20000000 "
                 "%s/tests/e2e/fw/tailcall_fw.c -o %s",
                 b->flags, SPOOR_SOURCE_DIR, SPOOR_SOURCE_DIR, b->path);
        if (system(command) != 0) {
            fprintf(stderr, "cannot build the test program: %s\n", command);
            return -1;
        }
        b->elf = spoor_elf_open(b->path);
        if (b->elf == NULL) {
            fprintf(stderr, "%s\n", spoor_last_error());
            return -1;
        }
    }
    return 0;
}

static int close_all(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++)
        spoor_elf_close(builds[i].elf);
    return 0;
}

static uint32_t sym(const struct build *b, const char *name)
{
    uint32_t addr, size;
    if (!spoor_elf_symbol(b->elf, name, &addr, &size))
        fail_msg("no symbol %s in %s", name, b->path);
    return addr & ~1u;
}

/* The return address of the `MNEMONIC ... <target>` in function `in`, from objdump: the
 * address of the next instruction. */
static uint32_t return_address(const struct build *b, const char *in, const char *mnemonic,
                               const char *target)
{
    char command[1024], line[512], want_fn[128], want_op[128];
    snprintf(command, sizeof command, "arm-none-eabi-objdump -d --no-show-raw-insn %s", b->path);
    snprintf(want_fn, sizeof want_fn, " <%s>:", in);
    snprintf(want_op, sizeof want_op, " <%s>", target);
    FILE *p = popen(command, "r");
    assert_non_null(p);
    bool inside = false, take_next = false;
    unsigned long found = 0;
    while (fgets(line, sizeof line, p)) {
        if (strstr(line, ">:")) {
            inside = strstr(line, want_fn) != NULL;
            continue;
        }
        unsigned long addr;
        char op[32];
        if (sscanf(line, " %lx: %31s", &addr, op) != 2)
            continue;
        if (take_next) {
            found = addr;
            take_next = false;
        }
        if (inside && strcmp(op, mnemonic) == 0 && strstr(line, want_op))
            take_next = true;
    }
    pclose(p);
    if (!found)
        fail_msg("%s: no %s to %s in %s", b->name, mnemonic, target, in);
    return (uint32_t)found;
}

static void test_forms(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        char command[1024];
        snprintf(command, sizeof command,
                 "arm-none-eabi-readelf --debug-dump=info %s | grep -q '(%s)'", builds[i].path,
                 builds[i].tag);
        assert_int_equal(system(command), 0);
        /* 6 tail calls in single and chain, 5 in amb, 2 in ind_pick, 2 in h and x, the calls */
        assert_true(spoor_call_site_count(builds[i].elf) >= 20);
        assert_true(spoor_call_site_units_read(builds[i].elf) == 1);
    }
}

static void test_one_chain(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        const struct build *b = &builds[i];
        call_site_chain c;
        uint32_t ra = return_address(b, "chain_caller", "bl", "chain_a");
        spoor_call_site_chain(b->elf, ra | 1u, sym(b, "chain_leaf"), &c);
        assert_int_equal(c.count, 3);
        assert_int_equal(c.pc[0], return_address(b, "chain_c", "b.w", "chain_leaf"));
        assert_int_equal(c.pc[1], return_address(b, "chain_b", "b.w", "chain_c"));
        assert_int_equal(c.pc[2], return_address(b, "chain_a", "b.w", "chain_b"));
        assert_false(c.possible);
        /* from the middle of the chain */
        spoor_call_site_chain(b->elf, ra, sym(b, "chain_b"), &c);
        assert_int_equal(c.count, 1);
        assert_int_equal(c.pc[0], return_address(b, "chain_a", "b.w", "chain_b"));
        /* chain_b's other tail call leads to chain_other: one chain again */
        spoor_call_site_chain(b->elf, ra, sym(b, "chain_other"), &c);
        assert_int_equal(c.count, 2);
        assert_int_equal(c.pc[0], return_address(b, "chain_b", "b.w", "chain_other"));
        /* the call site calls the callee itself: nothing to insert */
        spoor_call_site_chain(b->elf, ra, sym(b, "chain_a"), &c);
        assert_int_equal(c.count, 0);
        assert_false(c.possible);
        /* no chain leads from chain_a to single_leaf: the gap is said, nothing invented */
        spoor_call_site_chain(b->elf, ra, sym(b, "single_leaf"), &c);
        assert_int_equal(c.count, 0);
        assert_true(c.possible);
        /* no call site there */
        spoor_call_site_chain(b->elf, sym(b, "chain_leaf") + 2u, sym(b, "chain_c"), &c);
        assert_int_equal(c.count, 0);
        assert_false(c.possible);
    }
}

/* Two chains: amb_pick ~> amb_mid ~> amb_left ~> amb_leaf and ... ~> amb_right ~> amb_leaf.
 * Only what both have is given (amb_pick's tail call, the callers' end), and the gap below
 * it (above amb_leaf) is marked. */
static void test_ambiguous(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        const struct build *b = &builds[i];
        call_site_chain c;
        uint32_t ra = return_address(b, "amb_caller", "bl", "amb_pick");
        spoor_call_site_chain(b->elf, ra, sym(b, "amb_leaf"), &c);
        assert_int_equal(c.count, 1);
        assert_int_equal(c.pc[0], return_address(b, "amb_pick", "b.w", "amb_mid"));
        assert_true(c.possible);
        assert_int_equal(c.gap, 0);
        /* from amb_left on there is one chain again */
        spoor_call_site_chain(b->elf, ra, sym(b, "amb_left"), &c);
        assert_int_equal(c.count, 2);
        assert_int_equal(c.pc[0], return_address(b, "amb_mid", "b.w", "amb_left"));
        assert_int_equal(c.pc[1], return_address(b, "amb_pick", "b.w", "amb_mid"));
        assert_false(c.possible);
    }
}

/* ind_pick tail-calls ind_leaf or, through a pointer, anything: the one chain found is not
 * the only possible one, so nothing is inserted and the gap is marked. */
static void test_unknown_target(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        const struct build *b = &builds[i];
        call_site_chain c;
        uint32_t ra = return_address(b, "ind_caller", "bl", "ind_pick");
        spoor_call_site_chain(b->elf, ra, sym(b, "ind_leaf"), &c);
        assert_int_equal(c.count, 0);
        assert_true(c.possible);
        assert_int_equal(c.gap, 0);
    }
}

static void test_targets(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        const struct build *b = &builds[i];
        assert_true(spoor_call_site_targets(b->elf, sym(b, "chain_leaf")));
        assert_true(spoor_call_site_targets(b->elf, sym(b, "amb_right")));
        assert_false(spoor_call_site_targets(b->elf, sym(b, "Reset_Handler")));
    }
}

/* -O0: GCC writes no call sites; the reader learns that from .debug_abbrev alone and walks
 * no unit. */
static void test_none(void **state)
{
    (void)state;
    const struct build *b = &builds[2];
    char command[1024];
    snprintf(command, sizeof command,
             "arm-none-eabi-readelf --debug-dump=info %s | grep -q 'TAG_[A-Z_]*call_site'",
             b->path);
    assert_int_not_equal(system(command), 0);
    assert_int_equal(spoor_call_site_count(b->elf), 0);
    assert_int_equal(spoor_call_site_units_read(b->elf), 0);
    call_site_chain c;
    spoor_call_site_chain(b->elf, return_address(b, "chain_caller", "bl", "chain_a"),
                          sym(b, "chain_leaf"), &c);
    assert_int_equal(c.count, 0);
    assert_false(c.possible);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),     cmocka_unit_test(test_one_chain),
        cmocka_unit_test(test_ambiguous), cmocka_unit_test(test_unknown_target),
        cmocka_unit_test(test_targets),   cmocka_unit_test(test_none),
    };
    return cmocka_run_group_tests(tests, build_all, close_all);
}
