/* Writes a probe-rs coredump (.coredump) with msgpack-c, in the layout probe-rs's
 * CoreDump::store writes (rmp_serde::encode::write_named of struct CoreDump in
 * probe-rs/src/core/dump.rs, github.com/probe-rs/probe-rs commit
 * 67993c4b6f3fcbabfc811d1df334acfe66cef150; rmp-serde 1.3 rmp-serde/src/encode.rs): a map of
 * the struct's fields by name in declaration order:
 *   "registers": map of u16 register id -> RegisterValue, a newtype enum variant: {"U32": n}
 *   "data": array of [ {"start": u64, "end": u64}, [byte, byte, ...] ] (Range<u64> is a struct,
 *           Vec<u8> a serde sequence: an array of integers)
 *   "instruction_set": "Thumb2" (a unit variant: its name)
 *   "supports_native_64bit_access": false
 *   "core_type": "armv6m" | "armv7m" | "armv7em" | "armv8m" (CoreType, rename_all snake_case)
 *   "fpu_support": bool
 *   "floating_point_register_count": n (Option<usize>: Some(n) is n)
 * Used by tests/e2e/test_probers_coredump.py and to make the fuzz seeds.
 *
 * Usage: probers_coredump_gen OUT < SPEC, SPEC lines:
 *   core_type NAME          fpu 0|1
 *   reg ID VALUE            {"U32": VALUE}        reg64 ID VALUE / reg128 ID VALUE: U64, U128
 *   regstr ID               the value a string (a damaged file)
 *   noreg ID                leave out the register given earlier
 *   mem START FILE          a range holding FILE's bytes as an array of integers
 *   membin START FILE       the same as a bin
 *   memend START END FILE   the range's end given (a damaged file when it does not match)
 *   omit FIELD              leave a field out       wrongtype FIELD   write it as a string */
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX 256

static struct reg {
    unsigned long id;
    unsigned long long value;
    char kind[8];
} regs[MAX];
static struct mem {
    unsigned long long start, end;
    unsigned char *bytes;
    size_t len;
    int bin;
} mems[MAX];
static size_t nregs, nmems;
static char omit[8][64], wrong[8][64], core_type[32] = "armv7m";
static size_t nomit, nwrong;
static int fpu;

static int listed(char (*list)[64], size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], name))
            return 1;
    return 0;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n ? (size_t)n : 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
        exit(1);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void pack_str(msgpack_packer *pk, const char *s)
{
    msgpack_pack_str(pk, strlen(s));
    msgpack_pack_str_body(pk, s, strlen(s));
}

static void pack_value(msgpack_packer *pk, const struct reg *r)
{
    if (!strcmp(r->kind, "str")) {
        pack_str(pk, "wrong");
        return;
    }
    msgpack_pack_map(pk, 1);
    if (!strcmp(r->kind, "128")) {
        unsigned char be[16] = {0};
        for (int i = 0; i < 8; i++)
            be[15 - i] = (unsigned char)(r->value >> (8 * i));
        pack_str(pk, "U128");
        msgpack_pack_bin(pk, 16);
        msgpack_pack_bin_body(pk, be, 16);
        return;
    }
    pack_str(pk, !strcmp(r->kind, "64") ? "U64" : "U32");
    msgpack_pack_uint64(pk, r->value);
}

static void pack_field(msgpack_packer *pk, const char *name)
{
    pack_str(pk, name);
    if (listed(wrong, nwrong, name)) {
        pack_str(pk, "wrong");
        return;
    }
    if (!strcmp(name, "registers")) {
        msgpack_pack_map(pk, nregs);
        for (size_t i = 0; i < nregs; i++) {
            msgpack_pack_uint16(pk, (uint16_t)regs[i].id);
            pack_value(pk, &regs[i]);
        }
    } else if (!strcmp(name, "data")) {
        msgpack_pack_array(pk, nmems);
        for (size_t i = 0; i < nmems; i++) {
            msgpack_pack_array(pk, 2);
            msgpack_pack_map(pk, 2);
            pack_str(pk, "start");
            msgpack_pack_uint64(pk, mems[i].start);
            pack_str(pk, "end");
            msgpack_pack_uint64(pk, mems[i].end);
            if (mems[i].bin) {
                msgpack_pack_bin(pk, mems[i].len);
                msgpack_pack_bin_body(pk, mems[i].bytes, mems[i].len);
            } else {
                msgpack_pack_array(pk, mems[i].len);
                for (size_t j = 0; j < mems[i].len; j++)
                    msgpack_pack_uint8(pk, mems[i].bytes[j]);
            }
        }
    } else if (!strcmp(name, "instruction_set")) {
        pack_str(pk, "Thumb2");
    } else if (!strcmp(name, "supports_native_64bit_access")) {
        msgpack_pack_false(pk);
    } else if (!strcmp(name, "core_type")) {
        pack_str(pk, core_type);
    } else if (!strcmp(name, "fpu_support")) {
        if (fpu)
            msgpack_pack_true(pk);
        else
            msgpack_pack_false(pk);
    } else {
        msgpack_pack_uint64(pk, fpu ? 32 : 0);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: probers_coredump_gen OUT < SPEC\n");
        return 1;
    }
    char line[4096], word[32], a[1024], b[1024], c[1024];
    while (fgets(line, sizeof line, stdin)) {
        int n = sscanf(line, "%31s %1023s %1023s %1023s", word, a, b, c);
        if (n < 2)
            continue;
        if (!strcmp(word, "core_type"))
            snprintf(core_type, sizeof core_type, "%.31s", a);
        else if (!strcmp(word, "fpu"))
            fpu = atoi(a);
        else if (!strcmp(word, "noreg")) {
            size_t keep = 0;
            for (size_t i = 0; i < nregs; i++)
                if (regs[i].id != strtoul(a, NULL, 0))
                    regs[keep++] = regs[i];
            nregs = keep;
        } else if (!strncmp(word, "reg", 3) && nregs < MAX) {
            struct reg *r = &regs[nregs++];
            r->id = strtoul(a, NULL, 0);
            r->value = n > 2 ? strtoull(b, NULL, 0) : 0;
            snprintf(r->kind, sizeof r->kind, "%.7s", word + 3);
        } else if (!strncmp(word, "mem", 3) && nmems < MAX) {
            struct mem *m = &mems[nmems++];
            m->start = strtoull(a, NULL, 0);
            m->bin = !strcmp(word, "membin");
            int with_end = !strcmp(word, "memend");
            m->bytes = slurp(with_end ? c : b, &m->len);
            m->end = with_end ? strtoull(b, NULL, 0) : m->start + m->len;
        } else if (!strcmp(word, "omit") && nomit < 8)
            snprintf(omit[nomit++], sizeof omit[0], "%.63s", a);
        else if (!strcmp(word, "wrongtype") && nwrong < 8)
            snprintf(wrong[nwrong++], sizeof wrong[0], "%.63s", a);
    }
    static const char *const fields[] = {"registers",
                                         "data",
                                         "instruction_set",
                                         "supports_native_64bit_access",
                                         "core_type",
                                         "fpu_support",
                                         "floating_point_register_count"};
    size_t count = 0;
    for (size_t i = 0; i < 7; i++)
        count += !listed(omit, nomit, fields[i]);
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &buf, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, count);
    for (size_t i = 0; i < 7; i++)
        if (!listed(omit, nomit, fields[i]))
            pack_field(&pk, fields[i]);
    FILE *out = fopen(argv[1], "wb");
    if (!out || fwrite(buf.data, 1, buf.size, out) != buf.size || fclose(out)) {
        perror(argv[1]);
        return 1;
    }
    msgpack_sbuffer_destroy(&buf);
    return 0;
}
