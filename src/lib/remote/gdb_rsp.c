/* GDB remote serial protocol: packet parsing and framing, and answering the requests GDB
 * makes of a stopped Cortex-M (register and memory reads, target description). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/gdb_rsp.h"
#include "util/number.h"

enum { WAIT_START, IN_PACKET, IN_ESCAPE, CHECKSUM1, CHECKSUM2 };

void spoor_rsp_init(spoor_rsp_parser *p)
{
    memset(p, 0, sizeof *p);
}

static int hexval(uint8_t c)
{
    return spoor_hex_digit(c);
}

static void put(spoor_rsp_parser *p, char c)
{
    if (p->len < SPOOR_RSP_MAX_PACKET)
        p->packet[p->len++] = c;
    else
        p->overflow = true;
}

spoor_rsp_event spoor_rsp_feed(spoor_rsp_parser *p, uint8_t c)
{
    switch (p->state) {
    case WAIT_START:
        if (c == '$') {
            p->state = IN_PACKET;
            p->len = 0;
            p->sum = 0;
            p->overflow = false;
        } else if (c == '+') {
            return SPOOR_RSP_ACK;
        } else if (c == '-') {
            return SPOOR_RSP_NACK;
        } else if (c == 0x03) {
            return SPOOR_RSP_INTERRUPT;
        }
        return SPOOR_RSP_NONE; /* noise between packets */
    case IN_PACKET:
        if (c == '#') {
            p->state = CHECKSUM1;
            return SPOOR_RSP_NONE;
        }
        p->sum += c;
        if (c == '}')
            p->state = IN_ESCAPE;
        else
            put(p, (char)c);
        return SPOOR_RSP_NONE;
    case IN_ESCAPE:
        p->sum += c;
        put(p, (char)(c ^ 0x20));
        p->state = IN_PACKET;
        return SPOOR_RSP_NONE;
    case CHECKSUM1:
        if (hexval(c) < 0) {
            p->state = WAIT_START;
            return SPOOR_RSP_BAD_CHECKSUM;
        }
        p->expect = (uint8_t)(hexval(c) << 4);
        p->state = CHECKSUM2;
        return SPOOR_RSP_NONE;
    case CHECKSUM2:
        p->state = WAIT_START;
        if (hexval(c) < 0 || (uint8_t)(p->expect | hexval(c)) != p->sum || p->overflow)
            return SPOOR_RSP_BAD_CHECKSUM;
        p->packet[p->len] = 0;
        return SPOOR_RSP_PACKET;
    }
    return SPOOR_RSP_NONE;
}

size_t spoor_rsp_frame(const char *payload, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    uint8_t sum = 0;
    if (cap < 4)
        return 0;
    out[n++] = '$';
    for (size_t i = 0; i < len; i++) {
        char c = payload[i];
        int esc = c == '$' || c == '#' || c == '}' || c == '*';
        if (n + 2 + 3 > cap)
            return 0;
        if (esc) {
            out[n++] = '}';
            sum += '}';
            c ^= 0x20;
        }
        out[n++] = c;
        sum += (uint8_t)c;
    }
    if (n + 3 > cap)
        return 0;
    n += (size_t)snprintf(out + n, cap - n, "#%02x", sum);
    return n;
}

/* The M-profile register set in gdb's "org.gnu.gdb.arm.m-profile" feature, numbered in the
 * order of the 'g' packet: r0-r12, sp, lr, pc, xpsr. */
static const char target_xml[] =
    "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\">"
    "<target version=\"1.0\"><architecture>arm</architecture>"
    "<feature name=\"org.gnu.gdb.arm.m-profile\">"
    "<reg name=\"r0\" bitsize=\"32\"/><reg name=\"r1\" bitsize=\"32\"/>"
    "<reg name=\"r2\" bitsize=\"32\"/><reg name=\"r3\" bitsize=\"32\"/>"
    "<reg name=\"r4\" bitsize=\"32\"/><reg name=\"r5\" bitsize=\"32\"/>"
    "<reg name=\"r6\" bitsize=\"32\"/><reg name=\"r7\" bitsize=\"32\"/>"
    "<reg name=\"r8\" bitsize=\"32\"/><reg name=\"r9\" bitsize=\"32\"/>"
    "<reg name=\"r10\" bitsize=\"32\"/><reg name=\"r11\" bitsize=\"32\"/>"
    "<reg name=\"r12\" bitsize=\"32\"/><reg name=\"sp\" bitsize=\"32\" type=\"data_ptr\"/>"
    "<reg name=\"lr\" bitsize=\"32\"/><reg name=\"pc\" bitsize=\"32\" type=\"code_ptr\"/>"
    "<reg name=\"xpsr\" bitsize=\"32\"/>"
    "</feature>";

static const char target_xml_vfp[] =
    "<feature name=\"org.gnu.gdb.arm.vfp\">"
    "<reg name=\"d0\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d1\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d2\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d3\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d4\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d5\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d6\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d7\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d8\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d9\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d10\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d11\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d12\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d13\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d14\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"d15\" bitsize=\"64\" type=\"ieee_double\"/>"
    "<reg name=\"fpscr\" bitsize=\"32\" type=\"int\" group=\"float\"/>"
    "</feature>";

static const char target_xml_end[] = "</target>";

/* The description for t, assembled once per call into buf. */
static size_t target_xml_for(const spoor_rsp_target *t, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s%s%s", target_xml, t->fp ? target_xml_vfp : "", target_xml_end);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

static size_t hex_le(char *out, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        sprintf(out + 2 * i, "%02x", (unsigned)((v >> (8 * i)) & 0xff));
    return (size_t)(2 * bytes);
}

static size_t hex_le32(char *out, uint32_t v)
{
    return hex_le(out, v, 4);
}

/* The registers 'g' and 'p' answer with: the thread Hg selected, else the target's. */
static const spoor_regs *selected_regs(const spoor_rsp_target *t)
{
    if (t->threads && t->selected && *t->selected < t->nthreads)
        return &t->threads[*t->selected].regs;
    return &t->regs;
}

/* Register n in target byte order as hex; 0 when the target has no register n. */
static size_t hex_register(const spoor_rsp_target *t, unsigned long n, char *out)
{
    const spoor_regs *r = selected_regs(t);
    if (n < 16)
        return hex_le32(out, r->r[n]);
    if (n == 16)
        return hex_le32(out, r->xpsr);
    if (t->fp && n < 33) {
        unsigned k = (unsigned)(n - 17);
        return hex_le(out, r->s[2 * k] | (uint64_t)r->s[2 * k + 1] << 32, 8);
    }
    if (t->fp && n == 33)
        return hex_le32(out, r->fpscr);
    return 0;
}

static size_t reply_str(char *reply, size_t cap, const char *s);

/* A thread id of a packet ("1", "-1" any, "0" any) as an index; false when there is none. */
static bool thread_index(const spoor_rsp_target *t, const char *id, size_t *index)
{
    uint32_t v;
    if (!strcmp(id, "-1") || !strcmp(id, "0")) {
        *index = 0;
        return true;
    }
    if (!spoor_parse_u32z(id, SPOOR_NUM_HEX_BARE, &v) || v == 0)
        return false;
    size_t n = t->threads ? t->nthreads : 1;
    if (v > n)
        return false;
    *index = v - 1;
    return true;
}

/* qfThreadInfo: "m1,2,3" */
static size_t thread_list(const spoor_rsp_target *t, char *reply, size_t cap)
{
    size_t n = t->threads ? t->nthreads : 1, len = 0;
    if (cap < 2)
        return 0;
    reply[len++] = 'm';
    for (size_t i = 0; i < n && len + 12 < cap; i++)
        len += (size_t)snprintf(reply + len, cap - len, "%s%zx", i ? "," : "", i + 1);
    reply[len] = 0;
    return len;
}

/* qThreadExtraInfo,ID: the thread's text, hex encoded. */
static size_t thread_extra(const spoor_rsp_target *t, const char *id, char *reply, size_t cap)
{
    size_t index;
    if (!thread_index(t, id, &index))
        return reply_str(reply, cap, "E01");
    const char *text = t->threads ? t->threads[index].extra : "";
    size_t len = 0;
    for (; *text && len + 3 < cap; text++, len += 2)
        snprintf(reply + len, 3, "%02x", (unsigned char)*text);
    reply[len] = 0;
    return len;
}

/* FPCCR and FPCAR at their reset values, for an FP target whose memory lacks them. */
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

static bool read_byte(const spoor_rsp_target *t, uint32_t addr, uint8_t *b)
{
    return t->read(t->ctx, addr, b, 1) || (t->fp && read_fp_control(addr, b));
}

static size_t reply_str(char *reply, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n >= cap)
        n = cap - 1;
    memcpy(reply, s, n);
    reply[n] = 0;
    return n;
}

/* "A,B" (hex fields, as the protocol writes them) into *a and *b; false for anything else. */
static bool two_fields(const char *args, uint32_t *a, uint32_t *b)
{
    const char *comma = strchr(args, ',');
    return comma && spoor_parse_u32(args, (size_t)(comma - args), SPOOR_NUM_HEX_BARE, a) &&
           spoor_parse_u32z(comma + 1, SPOOR_NUM_HEX_BARE, b);
}

static size_t read_memory(const spoor_rsp_target *t, const char *args, char *reply, size_t cap)
{
    uint32_t addr32, len32;
    if (!two_fields(args, &addr32, &len32))
        return reply_str(reply, cap, "E01");
    unsigned long addr = addr32, len = len32;
    if (len > (cap - 1) / 2)
        len = (cap - 1) / 2;
    size_t n = 0;
    uint8_t bytes[SPOOR_RSP_MAX_PACKET / 2];
    if (len && len <= sizeof bytes && addr + len - 1 <= 0xffffffffUL &&
        t->read(t->ctx, (uint32_t)addr, bytes, len)) { /* all of it at once: one read */
        for (; n < len; n++)
            sprintf(reply + 2 * n, "%02x", bytes[n]);
        return 2 * n;
    }
    for (unsigned long i = 0; i < len; i++) { /* as much as is known, from the start */
        uint8_t b;
        if (addr + i > 0xffffffffUL || !read_byte(t, (uint32_t)(addr + i), &b))
            break;
        sprintf(reply + 2 * n, "%02x", b);
        n++;
    }
    if (!n && len)
        return reply_str(reply, cap, "E01");
    reply[2 * n] = 0;
    return 2 * n;
}

/* The part "OFFSET,LENGTH" (range) of a qXfer read asks of doc: 'm' and the bytes while more
 * follow, 'l' with the last ones. *last is set when the reply reaches the end. */
static size_t xfer_slice(const char *doc, size_t total, const char *range, char *reply, size_t cap,
                         bool *last)
{
    uint32_t off, len;
    *last = false;
    if (!two_fields(range, &off, &len))
        return reply_str(reply, cap, "E00");
    *last = true;
    if (off >= total)
        return reply_str(reply, cap, "l");
    size_t n = total - off;
    if (n > len)
        n = len;
    if (n > cap - 2)
        n = cap - 2;
    *last = off + n >= total;
    reply[0] = *last ? 'l' : 'm';
    memcpy(reply + 1, doc + off, n);
    reply[n + 1] = 0;
    return n + 1;
}

static size_t xfer_features(const spoor_rsp_target *t, const char *args, char *reply, size_t cap)
{
    char xml[sizeof target_xml + sizeof target_xml_vfp + sizeof target_xml_end];
    size_t total = target_xml_for(t, xml, sizeof xml);
    bool last;
    /* args: "target.xml:OFFSET,LENGTH" */
    if (strncmp(args, "target.xml:", 11) != 0)
        return reply_str(reply, cap, "E00");
    return xfer_slice(xml, total, args + 11, reply, cap, &last);
}

/* ---- branch trace ---------------------------------------------------------------------- */

static const char btrace_head[] = "<?xml version=\"1.0\"?>\n"
                                  "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n"
                                  "<btrace version=\"1.0\">\n";
static const char btrace_tail[] = "</btrace>\n";

spoor_rsp_block spoor_rsp_gap(uint32_t pc)
{
    spoor_rsp_block b = {pc, pc - 1u};
    if (pc == 0)
        b = (spoor_rsp_block){1u, 0u};
    return b;
}

bool spoor_rsp_btrace_set(spoor_rsp_btrace *bt, const spoor_rsp_block *blocks, size_t count)
{
    enum { BLOCK_MAX = sizeof "<block begin=\"0x00000000\" end=\"0x00000000\"/>\n" };
    memset(bt, 0, sizeof *bt);
    size_t cap = sizeof btrace_head + sizeof btrace_tail + count * BLOCK_MAX;
    if (count > (SIZE_MAX - 256) / BLOCK_MAX || !(bt->xml = malloc(cap))) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory for %zu branch trace blocks", count);
        return false;
    }
    size_t n = (size_t)snprintf(bt->xml, cap, "%s", btrace_head);
    for (size_t i = count; i-- > 0;) /* newest first */
        n += (size_t)snprintf(bt->xml + n, cap - n, "<block begin=\"0x%08x\" end=\"0x%08x\"/>\n",
                              blocks[i].begin, blocks[i].end);
    n += (size_t)snprintf(bt->xml + n, cap - n, "%s", btrace_tail);
    bt->len = n;
    return true;
}

void spoor_rsp_btrace_free(spoor_rsp_btrace *bt)
{
    free(bt->xml);
    memset(bt, 0, sizeof *bt);
}

/* Whether the thread Hg selected is the one the trace is of: the stopped one. */
static bool btrace_thread(const spoor_rsp_target *t)
{
    return !t->threads || !t->selected || *t->selected == 0;
}

/* qXfer:btrace-conf:read::OFFSET,LENGTH: BTS for the stopped thread, nothing for the others. */
static size_t xfer_btrace_conf(const spoor_rsp_target *t, const char *args, char *reply, size_t cap)
{
    static const char bts[] = "<?xml version=\"1.0\"?>\n"
                              "<!DOCTYPE btrace-conf SYSTEM \"btrace-conf.dtd\">\n"
                              "<btrace-conf version=\"1.0\">\n<bts/>\n</btrace-conf>\n";
    static const char none[] = "<?xml version=\"1.0\"?>\n"
                               "<!DOCTYPE btrace-conf SYSTEM \"btrace-conf.dtd\">\n"
                               "<btrace-conf version=\"1.0\">\n</btrace-conf>\n";
    bool last;
    if (args[0] != ':')
        return reply_str(reply, cap, "E00");
    if (btrace_thread(t))
        return xfer_slice(bts, sizeof bts - 1, args + 1, reply, cap, &last);
    return xfer_slice(none, sizeof none - 1, args + 1, reply, cap, &last);
}

/* qXfer:btrace:read:all|new|delta:OFFSET,LENGTH. A delta would have to continue GDB's last
 * block (its first block starting at 0): E01, and GDB reads :new instead. */
static size_t xfer_btrace(const spoor_rsp_target *t, const char *args, char *reply, size_t cap)
{
    static const char nothing[] = "<?xml version=\"1.0\"?>\n"
                                  "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n"
                                  "<btrace version=\"1.0\">\n</btrace>\n";
    spoor_rsp_btrace *bt = t->btrace;
    bool all = !strncmp(args, "all:", 4), fresh = !strncmp(args, "new:", 4), last;
    if ((!all && !fresh) || !btrace_thread(t) || !bt->xml)
        return reply_str(reply, cap, "E01");
    const char *range = args + 4;
    if (fresh && bt->sent && !strncmp(range, "0,", 2))
        return xfer_slice(nothing, sizeof nothing - 1, range, reply, cap, &last);
    size_t n = xfer_slice(bt->xml, bt->len, range, reply, cap, &last);
    if (last)
        bt->sent = true;
    return n;
}

/* The btrace packets of a target with a trace; 0 for any other packet. */
static size_t btrace_packet(const spoor_rsp_target *t, const char *pkt, char *reply, size_t cap)
{
    if (!t->btrace)
        return 0;
    if (!strncmp(pkt, "qXfer:btrace:read:", 18))
        return xfer_btrace(t, pkt + 18, reply, cap);
    if (!strncmp(pkt, "qXfer:btrace-conf:read:", 23))
        return xfer_btrace_conf(t, pkt + 23, reply, cap);
    if (!strcmp(pkt, "Qbtrace:bts") || !strcmp(pkt, "Qbtrace:off")) {
        /* recording is always on: enabling it again reads the trace anew */
        t->btrace->sent = false;
        return reply_str(reply, cap, btrace_thread(t) ? "OK" : "E01");
    }
    return 0;
}

size_t spoor_rsp_handle(const spoor_rsp_target *t, const char *pkt, char *reply, size_t cap,
                        bool *detach)
{
    char buf[32];
    *detach = false;
    switch (pkt[0]) {
    case '?':
        if (t->threads) /* with threads: name the one that stopped (the current one) */
            snprintf(buf, sizeof buf, "T%02xthread:1;", t->signal & 0xff);
        else
            snprintf(buf, sizeof buf, "S%02x", t->signal & 0xff);
        return reply_str(reply, cap, buf);
    case 'g': {
        if (cap < 17 * 8 + 16 * 16 + 8 + 1)
            return reply_str(reply, cap, "E01");
        size_t n = 0;
        for (unsigned long i = 0; i < 34; i++)
            n += hex_register(t, i, reply + n);
        reply[n] = 0;
        return n;
    }
    case 'p': {
        uint32_t reg;
        size_t n =
            spoor_parse_u32z(pkt + 1, SPOOR_NUM_HEX_BARE, &reg) ? hex_register(t, reg, reply) : 0;
        if (!n)
            return reply_str(reply, cap, "E01");
        reply[n] = 0;
        return n;
    }
    case 'm': return read_memory(t, pkt + 1, reply, cap);
    case 'H': {
        size_t index;
        if (!thread_index(t, pkt + 2, &index))
            return reply_str(reply, cap, "E01");
        if (pkt[1] == 'g' && t->selected)
            *t->selected = index;
        return reply_str(reply, cap, "OK");
    }
    case 'T': { /* is the thread alive: every thread listed is */
        size_t index;
        return reply_str(reply, cap, thread_index(t, pkt + 1, &index) ? "OK" : "E01");
    }
    case 'D': *detach = true; return reply_str(reply, cap, "OK");
    case 'k': *detach = true; return reply_str(reply, cap, "");
    case 'G':
    case 'M':
    case 'X':
    case 'P':
    case 'c':
    case 's':
    case 'C':
    case 'S': return reply_str(reply, cap, "E01"); /* a dump cannot be changed or run */
    case 'Q':
    case 'q': {
        size_t n = btrace_packet(t, pkt, reply, cap);
        if (n)
            return n;
        if (!strncmp(pkt, "qSupported", 10))
            return reply_str(reply, cap,
                             t->btrace ? "PacketSize=1000;qXfer:features:read+;Qbtrace:bts+;"
                                         "Qbtrace:off+;qXfer:btrace:read+;qXfer:btrace-conf:read+"
                                       : "PacketSize=1000;qXfer:features:read+");
        if (!strncmp(pkt, "qXfer:features:read:", 20))
            return xfer_features(t, pkt + 20, reply, cap);
        if (!strcmp(pkt, "qAttached"))
            return reply_str(reply, cap, "1");
        if (!strcmp(pkt, "qC"))
            return reply_str(reply, cap, "QC1");
        if (!strcmp(pkt, "qfThreadInfo"))
            return thread_list(t, reply, cap);
        if (!strncmp(pkt, "qThreadExtraInfo,", 17))
            return thread_extra(t, pkt + 17, reply, cap);
        if (!strcmp(pkt, "qsThreadInfo"))
            return reply_str(reply, cap, "l");
        if (!strncmp(pkt, "qSymbol", 7))
            return reply_str(reply, cap, "OK");
        return reply_str(reply, cap, "");
    }
    default: return reply_str(reply, cap, ""); /* not supported */
    }
}
