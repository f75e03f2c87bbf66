/* spoor gdbserver: serves a crash dump to GDB over the remote protocol on 127.0.0.1, so that
 * `gdb FW.elf -ex "target remote :PORT" -ex bt` inspects the crash as if the device were
 * stopped at the fault. Memory comes from the dump, then from the ELF's loadable sections. */
#include <arpa/inet.h>
#include <errno.h>
#include <gelf.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "dump_input.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/gdb_rsp.h"

static const char gdbserver_usage[] =
    "usage: spoor gdbserver -e FW.elf [--port N] DUMP\n"
    "       spoor gdbserver -e FW.elf [--port N] --regs regs.json [--mem ADDR:FILE ...]\n"
    "Serves a crash dump over the GDB remote serial protocol on 127.0.0.1:N (default 3333;\n"
    "0 picks a free port). Prints 'listening on 127.0.0.1:PORT', serves one GDB session, and\n"
    "exits when GDB detaches or disconnects. Registers are the faulting code's (r0-r15,\n"
    "xPSR); memory is the dump's regions, then the ELF's loadable sections; writes and\n"
    "resuming are refused. Then: gdb-multiarch FW.elf -ex 'target remote :PORT' -ex bt\n\n"
    "  -e, --elf FILE  the firmware ELF (for code and read-only data the dump does not hold)\n"
    "  -p, --port N    TCP port on 127.0.0.1 (0: any free port)\n" DUMP_INPUT_HELP
    "  -h, --help      this text\n";

struct server {
    spoor_dump *dump;
    spoor_elf *elf;
    bool fp;
};

/* GDB reads FPCCR (and FPCAR) to unwind through an extended exception frame; a dump does not
 * hold them, so an FP target answers with their reset values (ARMv7-M B3.2.20: FPCCR.ASPEN and
 * LSPEN set; FPCAR unknown, 0). */
static bool read_fp_control(uint32_t addr, uint8_t *out)
{
    static const struct {
        uint32_t addr, value;
    } regs[] = {{0xE000EF34u, 0xC0000000u}, {0xE000EF38u, 0}};
    for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
        if (addr - regs[i].addr < 4) {
            *out = (uint8_t)(regs[i].value >> (8 * (addr - regs[i].addr)));
            return true;
        }
    return false;
}

static bool read_target(void *ctx, uint32_t addr, void *buf, size_t len)
{
    struct server *s = ctx;
    if (spoor_dump_read(s->dump, addr, buf, len))
        return true;
    if (spoor_elf_read(s->elf, addr, buf, len) == len)
        return true;
    for (size_t i = 0; i < len; i++)
        if (!s->fp || !read_fp_control(addr + (uint32_t)i, (uint8_t *)buf + i))
            return false;
    return true;
}

static bool send_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

/* Serves one connection until detach or EOF. */
static int serve(int fd, const spoor_rsp_target *t)
{
    static spoor_rsp_parser parser;
    static char reply[SPOOR_RSP_MAX_PACKET + 1], frame[2 * SPOOR_RSP_MAX_PACKET + 8];
    size_t frame_len = 0;
    spoor_rsp_init(&parser);
    uint8_t in[4096];
    for (;;) {
        ssize_t n = recv(fd, in, sizeof in, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? SPOOR_EXIT_OK
                          : cli_error("gdbserver", "connection lost: %s", strerror(errno));
        for (ssize_t i = 0; i < n; i++) {
            switch (spoor_rsp_feed(&parser, in[i])) {
            case SPOOR_RSP_PACKET: {
                bool detach;
                size_t len = spoor_rsp_handle(t, parser.packet, reply, sizeof reply, &detach);
                frame_len = spoor_rsp_frame(reply, len, frame, sizeof frame);
                if (!send_all(fd, "+", 1) || !send_all(fd, frame, frame_len))
                    return cli_error("gdbserver", "connection lost while replying");
                if (detach)
                    return SPOOR_EXIT_OK;
                break;
            }
            case SPOOR_RSP_BAD_CHECKSUM:
                if (!send_all(fd, "-", 1))
                    return cli_error("gdbserver", "connection lost");
                break;
            case SPOOR_RSP_NACK:
                if (frame_len && !send_all(fd, frame, frame_len))
                    return cli_error("gdbserver", "connection lost");
                break;
            case SPOOR_RSP_INTERRUPT: /* already stopped: repeat the stop reply */
                frame_len = spoor_rsp_frame("S0b", 3, frame, sizeof frame);
                if (!send_all(fd, frame, frame_len))
                    return cli_error("gdbserver", "connection lost");
                break;
            default: break;
            }
        }
    }
}

int cmd_gdbserver(int argc, char **argv)
{
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"port", required_argument, 0, 'p'},
                                         {"help", no_argument, 0, 'h'},
                                         DUMP_INPUT_LONG_OPTIONS,
                                         {0, 0, 0, 0}};
    const char *elf_path = NULL;
    uint32_t port = 3333;
    static dump_input in;
    memset(&in, 0, sizeof in);
    int opt, err;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:p:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'p':
            if (!cli_parse_u32(optarg, &port) || port > 65535)
                return cli_error("gdbserver", "bad port '%s'", optarg);
            break;
        case DUMP_OPT_REGS:
        case DUMP_OPT_MEM:
            if ((err = dump_input_option("gdbserver", &in, opt, optarg)))
                return err;
            break;
        case 'h': fputs(gdbserver_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("gdbserver", argv);
        }
    }
    struct server s = {0};
    int rc = SPOOR_EXIT_USAGE, lfd = -1, cfd = -1;
    if (!(s.elf = cli_open_elf("gdbserver", elf_path)))
        goto out;
    if (!(s.dump = dump_input_load("gdbserver", &in, argv + optind, argc - optind)))
        goto out;
    spoor_rsp_target t = {.read = read_target, .ctx = &s};
    memcpy(t.regs, s.dump->regs.r, sizeof s.dump->regs.r);
    t.regs[13] = s.dump->regs.sp;
    t.regs[14] = s.dump->regs.lr;
    t.regs[15] = s.dump->regs.pc;
    t.regs[16] = s.dump->regs.xpsr;
    t.signal = s.dump->has_reason && s.dump->reason != SPOOR_REASON_FAULT ? 5 : 11;
    /* FP registers for a hard-float image or a dump with FP state: s0-s15 pair into d0-d7 */
    GElf_Ehdr eh;
    const uint32_t fp_flags = SPOOR_REGS_FP_FRAME | SPOOR_REGS_FP_VALID;
    t.fp = (gelf_getehdr(spoor_elf_libelf(s.elf), &eh) && (eh.e_flags & EF_ARM_ABI_FLOAT_HARD)) ||
           (s.dump->regs.flags & fp_flags);
    s.fp = t.fp;
    if (s.dump->regs.flags & SPOOR_REGS_FP_VALID) {
        for (int i = 0; i < 8; i++)
            t.d[i] = s.dump->regs.s[2 * i] | (uint64_t)s.dump->regs.s[2 * i + 1] << 32;
        t.fpscr = s.dump->regs.fpscr;
    }

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof addr;
    int one = 1;
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(lfd, (struct sockaddr *)&addr, sizeof addr) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *)&addr, &alen)) {
        cli_error("gdbserver", "cannot listen on 127.0.0.1:%u: %s", port, strerror(errno));
        goto out;
    }
    printf("listening on 127.0.0.1:%u\n", ntohs(addr.sin_port));
    fflush(stdout);
    do
        cfd = accept(lfd, NULL, NULL);
    while (cfd < 0 && errno == EINTR);
    if (cfd < 0) {
        cli_error("gdbserver", "accept failed: %s", strerror(errno));
        goto out;
    }
    setsockopt(cfd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof one);
    rc = serve(cfd, &t);
out:
    if (cfd >= 0)
        close(cfd);
    if (lfd >= 0)
        close(lfd);
    spoor_dump_free(s.dump);
    spoor_elf_close(s.elf);
    return rc;
}
