/* gdb_walk: what the live memory layer costs, for tests/e2e/test_crash_gdb.py and developers.
 * Connects to a halted target's GDB server, walks its stack several times through one memory
 * view and prints what each walk sent over the wire; optionally reads a block of memory.
 *
 *   gdb_walk -e FW.elf --gdb HOST:PORT [--walks N] [--invalidate-before K]
 *            [--read ADDR:LEN --out FILE]
 *
 * Output, one line each, space-separated key=value:
 *   connect packet_size=N max_read=N have=0xHAVE missing=GROUPS packets=P bytes=B ...
 *   walk I frames=F functions=A,B,... packets=P bytes=B hits=H misses=M
 *   read addr=0x.. len=N packets=P bytes=B
 * (packets/bytes/hits/misses: what this step added to spoor_mem_stats). --invalidate-before K
 * drops the cache before walk K. --read writes the bytes read to FILE. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/elf.h"
#include "spoor/error.h"
#include "spoor/snapshot.h"
#include "spoor/unwind.h"
#include "util/number.h"

#define MAX_FRAMES 64

static spoor_mem_stats last;

static void print_delta(const spoor_mem *mem)
{
    spoor_mem_stats now;
    spoor_mem_stats_get(mem, &now);
    printf(" packets=%" PRIu64 " bytes=%" PRIu64 " hits=%" PRIu64 " misses=%" PRIu64 "\n",
           now.round_trips - last.round_trips, now.bytes_wire - last.bytes_wire,
           now.cache_hits - last.cache_hits, now.cache_misses - last.cache_misses);
    last = now;
}

static int walk(const spoor_elf *elf, spoor_snapshot *s, int number)
{
    spoor_frame frames[MAX_FRAMES];
    spoor_unwind_stop stop;
    size_t n =
        spoor_unwind(elf, &s->regs, spoor_mem_reader, s->mem, NULL, frames, MAX_FRAMES, &stop);
    printf("walk %d frames=%zu functions=", number, n);
    for (size_t i = 0; i < n; i++) {
        if (frames[i].kind == SPOOR_FRAME_EXCEPTION) {
            printf("%s<exception>", i ? "," : "");
            continue;
        }
        spoor_location loc[16];
        uint32_t pc = frames[i].pc_is_return ? frames[i].pc - 1 : frames[i].pc;
        size_t k = spoor_elf_symbolize(elf, pc & ~1u, loc, 16);
        for (size_t j = 0; j < k; j++)
            printf("%s%s", i || j ? "," : "", loc[j].function ? loc[j].function : "??");
        if (!k)
            printf("%s??", i ? "," : "");
    }
    print_delta(s->mem);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"gdb", required_argument, 0, 'g'},
                                         {"walks", required_argument, 0, 'w'},
                                         {"invalidate-before", required_argument, 0, 'i'},
                                         {"read", required_argument, 0, 'r'},
                                         {"out", required_argument, 0, 'o'},
                                         {0, 0, 0, 0}};
    const char *elf_path = NULL, *out = NULL, *read_arg = NULL;
    spoor_snapshot_source src = {0};
    uint32_t walks = 2, invalidate_before = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "e:", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'g': src.gdb = optarg; break;
        case 'w': spoor_parse_u32z(optarg, SPOOR_NUM_AUTO, &walks); break;
        case 'i': spoor_parse_u32z(optarg, SPOOR_NUM_AUTO, &invalidate_before); break;
        case 'r': read_arg = optarg; break;
        case 'o': out = optarg; break;
        default: fprintf(stderr, "gdb_walk: bad option\n"); return 2;
        }
    }
    if (!elf_path || !src.gdb || (read_arg && !out)) {
        fprintf(stderr, "usage: gdb_walk -e FW.elf --gdb HOST:PORT [--walks N] "
                        "[--invalidate-before K] [--read ADDR:LEN --out FILE]\n");
        return 2;
    }
    spoor_elf *elf = spoor_elf_open(elf_path);
    spoor_snapshot *s = elf ? spoor_snapshot_open(&src, elf) : NULL;
    if (!s) {
        fprintf(stderr, "gdb_walk: %s\n", spoor_last_error());
        spoor_elf_close(elf);
        return 2;
    }
    printf("connect packet_size=%zu max_read=%zu have=0x%02" PRIx32 " missing=%s",
           spoor_gdb_packet_size(s->gdb), spoor_gdb_max_read(s->gdb), s->regs.have,
           s->missing[0] ? s->missing : "-");
    print_delta(s->mem); /* opening read the fault status registers */
    for (uint32_t i = 1; i <= walks; i++) {
        if (i == invalidate_before)
            spoor_mem_invalidate(s->mem);
        walk(elf, s, (int)i);
    }
    int rc = 0;
    if (read_arg) {
        const char *colon = strchr(read_arg, ':');
        uint32_t addr, len;
        uint8_t *buf = NULL;
        if (!colon ||
            !spoor_parse_u32(read_arg, (size_t)(colon - read_arg), SPOOR_NUM_AUTO, &addr) ||
            !spoor_parse_u32z(colon + 1, SPOOR_NUM_AUTO, &len) || !(buf = malloc(len ? len : 1))) {
            fprintf(stderr, "gdb_walk: --read ADDR:LEN\n");
            rc = 2;
        } else if (!spoor_mem_read(s->mem, addr, buf, len)) {
            fprintf(stderr, "gdb_walk: %s\n", spoor_last_error());
            rc = 1;
        } else {
            FILE *f = fopen(out, "wb");
            if (!f || fwrite(buf, 1, len, f) != len)
                rc = 1;
            if (f)
                fclose(f);
            printf("read addr=0x%08" PRIx32 " len=%" PRIu32, addr, len);
            print_delta(s->mem);
        }
        free(buf);
    }
    spoor_snapshot_close(s);
    spoor_elf_close(elf);
    return rc;
}
