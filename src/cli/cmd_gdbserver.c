/* spoor gdbserver: serves a crash dump to GDB over the remote protocol on 127.0.0.1, so that
 * `gdb FW.elf -ex "target remote :PORT" -ex bt` inspects the crash as if the device were
 * stopped at the fault. Memory comes from the dump, then from the ELF's loadable sections. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "spoor/analysis.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/gdb_remote.h"
#include "spoor/gdb_rsp.h"
#include "spoor/mtb_decode.h"
#include "spoor/rtos.h"
#include "spoor/snapshot.h"
#include "target_input.h"

static const char gdbserver_usage[] =
    "usage: spoor gdbserver -e FW.elf [--port N] DUMP\n"
    "       spoor gdbserver -e FW.elf [--port N] --regs regs.json [--mem ADDR:FILE ...]\n"
    "       spoor gdbserver -e FW.elf [--port N] --gdb HOST:PORT [--mem ADDR:FILE ...]\n"
    "Serves a crash dump over the GDB remote serial protocol on 127.0.0.1:N (default 3333;\n"
    "0 picks a free port). Prints 'listening on 127.0.0.1:PORT', serves one GDB session, and\n"
    "exits when GDB detaches or disconnects. A client that leaves without sending a packet\n"
    "(a port scan) does not end it; a second client meanwhile is refused at once. Registers\n"
    "are the faulting code's (r0-r15,\n"
    "xPSR); memory is the dump's regions, then the ELF's loadable sections; writes and\n"
    "resuming are refused. Then: gdb-multiarch FW.elf -ex 'target remote :PORT' -ex bt\n\n"
    "  -e, --elf FILE  the firmware ELF (for code and read-only data the dump does not hold)\n"
    "  -p, --port N    TCP port on 127.0.0.1 (0: any free port)\n"
    "      --once      exit after the first connection, whatever it did\n"
    "      --threads   the RTOS's threads as GDB threads (info threads, thread apply all bt),\n"
    "                  each with the registers its RTOS saved\n"
    "      --mtb-regs ADDR  the Micro Trace Buffer's register block in target memory (--mem\n"
    "                  images, --gdb): its trace is served as GDB's branch trace, as a\n"
    "                  dump's MTB record is (record instruction-history, reverse-step;\n"
    "                  docs/gdbserver.md)\n" TARGET_INPUT_HELP "  -h, --help      this text\n";

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

/* Refuses a client while another session runs: one line of protocol error, then close. */
static void refuse_second_client(int lfd)
{
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        return;
    static const char msg[] = "E.spoor gdbserver serves one GDB session at a time";
    char frame[128];
    size_t n = spoor_rsp_frame(msg, sizeof msg - 1, frame, sizeof frame);
    send_all(fd, frame, n);
    close(fd);
    cli_note("gdbserver", "refused a second client (one session at a time)");
}

/* With --gdb: the live target's connection failed (closed, silent, garbled). Said once, when
 * it happens; GDB is served on (what the dump of registers and the ELF hold; the target's
 * memory answers E01, as memory that cannot be read: a GDB that lost its server mid-command
 * is not always robust) and the exit status is 2. */
static bool live_lost(spoor_gdb *live, int *rc)
{
    if (!live || spoor_gdb_alive(live))
        return false;
    if (*rc == SPOOR_EXIT_OK)
        *rc = cli_error("gdbserver", "%s; GDB is told the target's memory cannot be read",
                        spoor_last_error());
    return true;
}

/* Serves one connection until detach or EOF; *spoken is set once the client sent a packet.
 * A connection to the listening socket meanwhile is refused, unless this client has not said
 * anything yet (a port scan that has not closed, an idle probe): then the new client replaces
 * it (*next is its socket; the caller closes this one). live: the --gdb connection memory
 * comes through (NULL for a dump): once it fails, the session's exit status is 2. The
 * protocol's state is the library's session (spoor_rsp_session): this moves its bytes. */
static int serve(int fd, int lfd, const spoor_rsp_target *t, spoor_gdb *live, bool *spoken,
                 int *next)
{
    static spoor_rsp_session session;
    int lost = SPOOR_EXIT_OK;
    spoor_rsp_session_init(&session, t);
    static uint8_t in[8192]; /* what one recv gives, then what came while a reply was made */
    for (;;) {
        struct pollfd fds[2] = {{.fd = fd, .events = POLLIN}, {.fd = lfd, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return cli_error("gdbserver", "poll failed: %s", strerror(errno));
        }
        if ((fds[1].revents & POLLIN) && !*spoken) {
            int fresh = accept(lfd, NULL, NULL);
            if (fresh >= 0) {
                *next = fresh;
                return SPOOR_EXIT_OK;
            }
        } else if (fds[1].revents & POLLIN) {
            refuse_second_client(lfd);
        }
        if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t n = recv(fd, in, sizeof in / 2, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? lost : cli_error("gdbserver", "connection lost: %s", strerror(errno));
        for (size_t i = 0; i < (size_t)n;) {
            spoor_rsp_io io;
            i += spoor_rsp_session_feed(&session, in + i, (size_t)n - i, &io);
            *spoken = session.spoken;
            if (!send_all(fd, io.out, io.out_len))
                return cli_error("gdbserver", "connection lost");
            if (io.event != SPOOR_RSP_PACKET)
                continue;
            spoor_rsp_session_answer(&session, &io);
            live_lost(live, &lost);
            /* what GDB sent while the reply was made ('-' after its remotetimeout, shorter
             * than a slow target's answer) came before the reply: not a refusal of it */
            ssize_t more = recv(fd, in + n, sizeof in - (size_t)n, MSG_DONTWAIT);
            if (more > 0)
                n += more;
            spoor_rsp_session_replied(&session, (size_t)n - i);
            if (!send_all(fd, io.out, io.out_len))
                return cli_error("gdbserver", "connection lost while replying");
            if (io.detach)
                return lost;
        }
    }
}

/* The RTOS's threads for GDB: the current one with the snapshot's registers, the others with
 * the registers their port saved (a thread whose context cannot be read is left out, with a
 * note). When the lists were not all walked or more threads were found than are served, a last
 * thread says so (its registers the snapshot's), and stderr too. NULL (and *n 0) when the ELF
 * has no RTOS, after saying so. */
static spoor_rsp_thread *rtos_threads(const spoor_elf *elf, spoor_snapshot *snap, size_t *n)
{
    *n = 0;
    spoor_threads *ts = spoor_threads_read(elf, snap, 0, NULL, 0, SPOOR_STOP_RESET);
    if (!ts || !ts->rtos) {
        cli_note("gdbserver", "--threads: %s", ts ? ts->error : spoor_last_error());
        spoor_threads_free(ts);
        return NULL;
    }
    const spoor_rtos_walk *walk = &ts->walk;
    spoor_rsp_thread *out = calloc(ts->count + 1, sizeof *out);
    for (size_t i = 0; out && i < ts->count; i++) {
        const spoor_thread *t = &ts->thread[i];
        spoor_rsp_thread *r = &out[*n];
        if (t->unlisted) { /* what runs is no thread of the kernel's: its bytes are not read */
            r->regs = t->regs;
            snprintf(r->extra, sizeof r->extra,
                     "(start-up or deleted: on no thread list) (TCB 0x%08x)", t->tcb);
            (*n)++;
            continue;
        }
        if (!t->has_regs) {
            cli_note("gdbserver", "thread 0x%08x left out: %s", t->tcb, t->error);
            continue;
        }
        r->regs = t->regs;
        char state[160];
        spoor_rtos_state_text(&t->state, state, sizeof state);
        snprintf(r->extra, sizeof r->extra, "%.47s (%.80s, prio %d, TCB 0x%08x)",
                 t->info.name[0] ? t->info.name : "?", state,
                 t->info.has_prio ? (int)t->info.prio : 0, t->tcb);
        (*n)++;
    }
    if (walk->not_shown)
        cli_note("gdbserver", "--threads: %zu more threads not shown", walk->not_shown);
    if (walk->lists_cut)
        fprintf(stderr,
                "spoor gdbserver: --threads: partial: %u thread list%s not read to the "
                "end; %s\n",
                walk->lists_cut, walk->lists_cut == 1 ? "" : "s", walk->why);
    if (out && *n && (walk->not_shown || walk->lists_cut)) {
        spoor_rsp_thread *r = &out[(*n)++];
        r->regs = snap->regs;
        if (walk->lists_cut)
            snprintf(r->extra, sizeof r->extra, "<partial: %.80s>", walk->why);
        else
            snprintf(r->extra, sizeof r->extra, "<%zu more threads not shown>", walk->not_shown);
    }
    spoor_threads_free(ts);
    return out;
}

/* The MTB's history up to the stop as GDB's branch trace: from the dump's MTB record, or from
 * the register block at regs_addr (--mtb-regs) in target memory. False (GDB then gets no
 * branch trace) when there is none to serve or it cannot be read, after a warning for an MTB
 * that was asked for or is damaged; note gets what is served, said once the port is open. */
static bool mtb_btrace(spoor_snapshot *snap, bool has_regs_addr, uint32_t regs_addr,
                       spoor_rsp_btrace *out, char *note, size_t note_cap)
{
    bool from_dump = !has_regs_addr && snap->dump && snap->dump->has_mtb;
    if (!from_dump && !has_regs_addr)
        return false;
    spoor_mtb_trace trace = {0};
    spoor_mtb_btrace bt = {0};
    bool ok = from_dump ? spoor_mtb_from_dump(snap->dump, snap->input, &trace)
                        : spoor_mtb_read(snap->mem, regs_addr, NULL, snap->input, &trace);
    ok = ok && spoor_mtb_btrace_of(&trace, snap->regs.r[15], spoor_mem_reader, snap->mem, &bt) &&
         spoor_rsp_btrace_set(out, bt.blocks, bt.count);
    if (!ok)
        cli_warn("gdbserver", "%s; GDB gets no branch trace", spoor_last_error());
    else
        snprintf(note, note_cap,
                 "GDB gets the MTB's history as branch trace: %zu instructions up to pc 0x%08x, "
                 "%zu gap%s%s (docs/gdbserver.md)",
                 bt.insns, snap->regs.r[15] & ~1u, bt.gaps, bt.gaps == 1 ? "" : "s",
                 trace.layout.wrapped ? "; the buffer wrapped: older branches were overwritten"
                                      : "");
    spoor_mtb_btrace_free(&bt);
    spoor_mtb_trace_free(&trace);
    return ok;
}

int cmd_gdbserver(int argc, char **argv)
{
    static const struct option opts[] = {
        {"elf", required_argument, 0, 'e'}, {"port", required_argument, 0, 'p'},
        {"once", no_argument, 0, 'O'},      {"help", no_argument, 0, 'h'},
        {"threads", no_argument, 0, 'M'},   {"mtb-regs", required_argument, 0, 'R'},
        TARGET_INPUT_LONG_OPTIONS,          {0, 0, 0, 0}};
    const char *elf_path = NULL;
    uint32_t port = 3333;
    static target_input in;
    memset(&in, 0, sizeof in);
    int opt, err;
    bool once = false, threads = false, has_mtb_regs = false;
    uint32_t mtb_regs = 0;
    static spoor_rsp_btrace btrace;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:p:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'p':
            if (!cli_parse_u32(optarg, &port) || port > 65535)
                return cli_error("gdbserver", "bad port '%s'", optarg);
            break;
        TARGET_INPUT_CASES:
            if ((err = target_input_option("gdbserver", &in, opt, optarg)))
                return err;
            break;
        case 'O': once = true; break;
        case 'M': threads = true; break;
        case 'R':
            if (!cli_parse_u32(optarg, &mtb_regs) || (mtb_regs & 3u))
                return cli_error("gdbserver",
                                 "--mtb-regs: expected a word-aligned address, got '%s'", optarg);
            has_mtb_regs = true;
            break;
        case 'h': fputs(gdbserver_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("gdbserver", argv);
        }
    }
    spoor_elf *elf = NULL;
    spoor_snapshot *snap = NULL;
    spoor_rsp_thread *thread_list = NULL;
    int rc = SPOOR_EXIT_USAGE, lfd = -1, cfd = -1;
    if (!(elf = target_input_elf("gdbserver", elf_path, argv + optind, argc - optind)))
        goto out;
    if (!(snap = target_input_open("gdbserver", &in, argv + optind, argc - optind, elf)))
        goto out;
    cli_warn_build_id("gdbserver", snap->dump, elf);
    spoor_rsp_target t;
    spoor_rsp_target_from_snapshot(&t, snap, spoor_elf_hard_float(elf));
    size_t selected = 0;
    if (threads) {
        t.threads = thread_list = rtos_threads(elf, snap, &t.nthreads);
        t.selected = &selected;
        if (!t.nthreads)
            t.threads = NULL;
    }
    char note[256] = "";
    if (mtb_btrace(snap, has_mtb_regs, mtb_regs, &btrace, note, sizeof note))
        t.btrace = &btrace;
    if (snap->gdb && !spoor_gdb_alive(snap->gdb)) { /* while the fault status or threads
                                                       were read: nothing to serve */
        rc = cli_fail("gdbserver");
        goto out;
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
    if (note[0])
        cli_note("gdbserver", "%s", note);
    int next = -1;
    for (;;) {
        cfd = next;
        next = -1;
        while (cfd < 0 && ((cfd = accept(lfd, NULL, NULL)) >= 0 || errno == EINTR))
            ;
        if (cfd < 0) {
            rc = cli_error("gdbserver", "accept failed: %s", strerror(errno));
            goto out;
        }
        setsockopt(cfd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof one);
        bool spoken = false;
        rc = serve(cfd, lfd, &t, snap->gdb, &spoken, &next);
        close(cfd);
        cfd = -1;
        if (spoken || once) {
            if (next >= 0)
                close(next);
            break;
        }
        cli_note("gdbserver",
                 "a client went away or was replaced without sending a packet; still listening");
    }
out:
    if (cfd >= 0)
        close(cfd);
    if (lfd >= 0)
        close(lfd);
    free(thread_list);
    spoor_rsp_btrace_free(&btrace);
    spoor_snapshot_close(snap);
    spoor_elf_close(elf);
    return rc;
}
