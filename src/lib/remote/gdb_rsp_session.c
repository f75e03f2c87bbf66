/* One GDB connection's protocol state, sans I/O (spoor/gdb_rsp.h): acknowledgements, the
 * '-' that asks for the last reply again, and the '-' that came before that reply went out. */
#include <string.h>

#include "spoor/gdb_rsp.h"

void spoor_rsp_session_init(spoor_rsp_session *s, const spoor_rsp_target *t)
{
    memset(s, 0, sizeof *s);
    spoor_rsp_init(&s->parser);
    s->target = t;
}

static void say(spoor_rsp_io *io, spoor_rsp_event event, const char *out, size_t len)
{
    io->event = event;
    io->out = out ? out : ""; /* never NULL: a caller may copy 0 bytes from it */
    io->out_len = len;
    io->detach = false;
}

size_t spoor_rsp_session_feed(spoor_rsp_session *s, const uint8_t *in, size_t n, spoor_rsp_io *io)
{
    for (size_t i = 0; i < n; i++) {
        bool stale = s->stale > 0;
        if (stale)
            s->stale--;
        spoor_rsp_event e = spoor_rsp_feed(&s->parser, in[i]);
        switch (e) {
        case SPOOR_RSP_NONE: continue;
        case SPOOR_RSP_PACKET:
            s->spoken = true;
            say(io, e, "+", 1); /* at once: GDB resends a packet not acknowledged */
            break;
        case SPOOR_RSP_BAD_CHECKSUM: say(io, e, "-", 1); break;
        case SPOOR_RSP_NACK: say(io, e, s->frame, stale ? 0 : s->frame_len); break;
        case SPOOR_RSP_INTERRUPT: /* already stopped: repeat the stop reply */
            s->frame_len = spoor_rsp_frame("S0b", 3, s->frame, sizeof s->frame);
            say(io, e, s->frame, s->frame_len);
            break;
        case SPOOR_RSP_ACK: say(io, e, NULL, 0); break;
        }
        return i + 1;
    }
    say(io, SPOOR_RSP_NONE, NULL, 0);
    return n;
}

void spoor_rsp_session_answer(spoor_rsp_session *s, spoor_rsp_io *io)
{
    bool detach;
    size_t len = spoor_rsp_handle(s->target, s->parser.packet, s->reply, sizeof s->reply, &detach);
    s->frame_len = spoor_rsp_frame(s->reply, len, s->frame, sizeof s->frame);
    say(io, SPOOR_RSP_PACKET, s->frame, s->frame_len);
    io->detach = detach;
}

void spoor_rsp_session_replied(spoor_rsp_session *s, size_t unfed)
{
    s->stale = unfed;
}
