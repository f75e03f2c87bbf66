/* unwind_snapshot: runs the spoor unwinder on a register/memory snapshot taken with a
 * debugger and prints the frames, for the live unwinder test (tests/e2e/test_unwind_live.py)
 * and for developers.
 *
 *   unwind_snapshot -e FW.elf --regs REGS [--mem ADDR:FILE]... [--methods LIST] [--max N]
 *
 * REGS holds one register per line as gdb's `info registers` prints it ("name value ..."):
 * r0..r12, sp, lr, pc, xpsr and optionally msp, psp, control. LIST is a comma-separated
 * subset of cfi,ehabi,prologue,scan. Output, one line per frame, tab-separated:
 *   call  METHOD PC SP FUNCTIONS [tailcalls-possible]  (FUNCTIONS: the inline chain innermost
 *         first, comma-joined; the last field when tail calls may be missing above the frame)
 *   exception METHOD EXC_RETURN FRAME_ADDR NUMBER FLAGS  (FLAGS: fp,psp,state or -)
 * then "stop REASON" ("stop task entry HOOK" names the task-exit hook). Memory not covered by --mem
 * is read from the ELF's loadable sections. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/elf.h"
#include "spoor/error.h"
#include "spoor/unwind.h"

#define MAX_REGIONS 16
#define MAX_FRAMES 64

typedef struct region {
    uint32_t addr;
    uint8_t *bytes;
    size_t size;
} region;

typedef struct memory {
    region regions[MAX_REGIONS];
    size_t count;
    const spoor_elf *elf;
} memory;

static bool read_memory(void *ctx, uint32_t addr, void *buf, size_t len)
{
    const memory *m = ctx;
    for (size_t i = 0; i < m->count; i++) {
        const region *r = &m->regions[i];
        if (addr >= r->addr && addr - r->addr <= r->size && len <= r->size - (addr - r->addr)) {
            memcpy(buf, r->bytes + (addr - r->addr), len);
            return true;
        }
    }
    return spoor_elf_read(m->elf, addr, buf, len) == len;
}

static int fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "unwind_snapshot: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return 2;
}

static bool load_file(const char *path, uint8_t **bytes, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    size_t cap = 65536, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    *bytes = buf;
    *size = len;
    return buf != NULL;
}

static bool parse_u32(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0' || v > 0xFFFFFFFFul) {
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static bool load_regs(const char *path, spoor_regs *regs)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return false;
    }
    char line[256];
    unsigned seen_banked = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char name[32], value[64];
        uint32_t v;
        if (sscanf(line, "%31s %63s", name, value) != 2 || !parse_u32(value, &v)) {
            continue;
        }
        if (name[0] == 'r' && name[1] >= '0' && name[1] <= '9') {
            int n = atoi(name + 1);
            if (n >= 0 && n <= 12) {
                regs->r[n] = v;
            }
        } else if (strcmp(name, "sp") == 0) {
            regs->r[13] = v;
        } else if (strcmp(name, "lr") == 0) {
            regs->r[14] = v;
        } else if (strcmp(name, "pc") == 0) {
            regs->r[15] = v;
        } else if (strcmp(name, "xpsr") == 0) {
            regs->xpsr = v;
        } else if (strcmp(name, "msp") == 0) {
            regs->msp = v;
            seen_banked |= 1;
        } else if (strcmp(name, "psp") == 0) {
            regs->psp = v;
            seen_banked |= 2;
        } else if (strcmp(name, "control") == 0) {
            regs->control = v;
        }
    }
    fclose(f);
    regs->have |= (seen_banked == 3) ? SPOOR_HAVE_BANKED_SP : 0u;
    return true;
}

static bool parse_methods(char *list, unsigned *methods)
{
    *methods = 0;
    for (char *tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (strcmp(tok, "cfi") == 0) {
            *methods |= SPOOR_UNWIND_USE_CFI;
        } else if (strcmp(tok, "ehabi") == 0) {
            *methods |= SPOOR_UNWIND_USE_EHABI;
        } else if (strcmp(tok, "prologue") == 0) {
            *methods |= SPOOR_UNWIND_USE_PROLOGUE;
        } else if (strcmp(tok, "scan") == 0) {
            *methods |= SPOOR_UNWIND_USE_SCAN;
        } else {
            return false;
        }
    }
    return *methods != 0;
}

static void print_functions(const spoor_elf *elf, const spoor_frame *f)
{
    spoor_location loc[8];
    uint32_t lookup = f->pc_is_return ? f->pc - 1 : f->pc;
    size_t n = spoor_elf_symbolize(elf, lookup, loc, 8);
    for (size_t i = 0; i < n; i++) {
        printf("%s%s", i ? "," : "", loc[i].function ? loc[i].function : "??");
    }
}

int main(int argc, char **argv)
{
    const char *elf_path = NULL, *regs_path = NULL;
    memory mem = {0};
    spoor_unwind_options options = {0};
    size_t max = MAX_FRAMES;
    int status = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0) {
            printf("usage: unwind_snapshot -e FW.elf --regs REGS [--mem ADDR:FILE]... "
                   "[--methods cfi,ehabi,prologue,scan] [--max N]\n");
            return 0;
        }
        if (v == NULL) {
            return fail("%s needs a value", a);
        }
        i++;
        if (strcmp(a, "-e") == 0) {
            elf_path = v;
        } else if (strcmp(a, "--regs") == 0) {
            regs_path = v;
        } else if (strcmp(a, "--mem") == 0) {
            char spec[512];
            snprintf(spec, sizeof spec, "%s", v);
            char *colon = strchr(spec, ':');
            region *r = &mem.regions[mem.count];
            if (colon == NULL || mem.count == MAX_REGIONS) {
                return fail("bad --mem %s (want ADDR:FILE)", v);
            }
            *colon = '\0';
            if (!parse_u32(spec, &r->addr)) {
                return fail("bad address in --mem %s", v);
            }
            if (!load_file(colon + 1, &r->bytes, &r->size)) {
                return fail("cannot read %s", colon + 1);
            }
            mem.count++;
        } else if (strcmp(a, "--methods") == 0) {
            char list[128];
            snprintf(list, sizeof list, "%s", v);
            if (!parse_methods(list, &options.methods)) {
                return fail("bad --methods %s", v);
            }
        } else if (strcmp(a, "--max") == 0) {
            uint32_t n;
            if (!parse_u32(v, &n) || n == 0 || n > MAX_FRAMES) {
                return fail("bad --max %s", v);
            }
            max = n;
        } else {
            return fail("unknown option %s", a);
        }
    }
    if (elf_path == NULL || regs_path == NULL) {
        return fail("%s", "needs -e FW.elf and --regs REGS");
    }
    spoor_regs regs = {0};
    if (!load_regs(regs_path, &regs)) {
        return fail("cannot read %s", regs_path);
    }
    spoor_elf *elf = spoor_elf_open(elf_path);
    if (elf == NULL) {
        return fail("%s", spoor_last_error());
    }
    mem.elf = elf;

    spoor_frame frames[MAX_FRAMES];
    spoor_unwind_stop stop;
    size_t n = spoor_unwind(elf, &regs, read_memory, &mem, &options, frames, max, &stop);
    for (size_t i = 0; i < n; i++) {
        const spoor_frame *f = &frames[i];
        if (f->kind == SPOOR_FRAME_EXCEPTION) {
            char flags[32];
            snprintf(flags, sizeof flags, "%s%s%s", f->fp_frame ? "fp," : "",
                     f->on_psp ? "psp," : "", f->additional_state ? "state," : "");
            size_t len = strlen(flags);
            if (len > 0) {
                flags[len - 1] = '\0';
            }
            printf("exception\t%s\t0x%08x\t0x%08x\t%d\t%s\n", spoor_unwind_method_name(f->method),
                   f->pc, f->sp, f->exception, len > 0 ? flags : "-");
            continue;
        }
        printf("call\t%s\t0x%08x\t0x%08x\t", spoor_unwind_method_name(f->method), f->pc, f->sp);
        print_functions(elf, f);
        printf("%s\n", f->tailcalls_possible ? "\ttailcalls-possible" : "");
    }
    printf("stop\t%s", spoor_unwind_stop_name(stop));
    const char *hook = NULL;
    if (stop == SPOOR_STOP_TASK_ENTRY && n > 0 &&
        !spoor_elf_function(elf, frames[n - 1].task_exit_hook, &hook, NULL, NULL)) {
        hook = "??";
    }
    printf("%s%s\n", hook ? "\t" : "", hook ? hook : "");
    spoor_elf_close(elf);
    for (size_t i = 0; i < mem.count; i++) {
        free(mem.regions[i].bytes);
    }
    return status;
}
