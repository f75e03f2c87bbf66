/* The call recorder's ITM output back into records: function words on port P, call sites on
 * P+1, paired innermost first (spoor/calls_decode.h, "Live records"). */
#include <string.h>

#include "spoor/calls_decode.h"
#include "spoor/cortexm_facts.h"
#include "spoor/itm_decoder.h"

const char *spoor_calls_loss_text(spoor_calls_loss why)
{
    switch (why) {
    case SPOOR_CALLS_LOSS_NONE: return "no loss";
    case SPOOR_CALLS_LOSS_OVERFLOW: return "ITM overflow";
    case SPOOR_CALLS_LOSS_UNDECODABLE: return "undecodable ITM bytes";
    case SPOOR_CALLS_LOSS_UNPAIRED: return "a call site without its function word";
    case SPOOR_CALLS_LOSS_BAD_WORD: return "a word that is no function or call site";
    case SPOOR_CALLS_LOSS_TOO_DEEP: return "too many function words without call sites";
    case SPOOR_CALLS_LOSS_SOURCE: return "the source reconnected";
    }
    return "loss";
}

void spoor_calls_itm_pairer_init(spoor_calls_itm_pairer *p, unsigned port)
{
    memset(p, 0, sizeof *p);
    p->port = (uint16_t)port;
}

void spoor_calls_itm_lose(spoor_calls_itm_pairer *p, spoor_calls_loss why)
{
    p->words_dropped += p->npending;
    p->npending = 0;
    p->losses++;
    if (p->loss == SPOOR_CALLS_LOSS_NONE)
        p->loss = why;
}

static bool valid_site(uint32_t site)
{
    return (site & 1u) || spoor_cortexm_is_exc_return(site);
}

bool spoor_calls_itm_pair(spoor_calls_itm_pairer *p, const spoor_itm_packet *pkt,
                          spoor_call_record *out)
{
    switch (pkt->type) {
    case SPOOR_ITM_OVERFLOW: spoor_calls_itm_lose(p, SPOOR_CALLS_LOSS_OVERFLOW); return false;
    case SPOOR_ITM_ERROR: spoor_calls_itm_lose(p, SPOOR_CALLS_LOSS_UNDECODABLE); return false;
    case SPOOR_ITM_SW: break;
    default: return false;
    }
    unsigned port = pkt->u.sw.port;
    if (port != p->port && port != p->port + 1u) {
        p->other_ports++;
        return false;
    }
    if (pkt->u.sw.page_unknown)
        p->page_unknown++;
    uint32_t w = pkt->u.sw.value;
    if (port == p->port) { /* a function word */
        if (pkt->u.sw.size != 4 || (w & ~1u) == 0) {
            spoor_calls_itm_lose(p, SPOOR_CALLS_LOSS_BAD_WORD);
            return false;
        }
        if (p->npending == SPOOR_CALLS_ITM_PENDING)
            spoor_calls_itm_lose(p, SPOOR_CALLS_LOSS_TOO_DEEP);
        p->pending[p->npending++] = w;
        return false;
    }
    if (pkt->u.sw.size != 4 || !valid_site(w)) {
        spoor_calls_itm_lose(p, SPOOR_CALLS_LOSS_BAD_WORD);
        return false;
    }
    if (p->npending == 0) {
        p->words_dropped++;
        spoor_calls_itm_lose(p, SPOOR_CALLS_LOSS_UNPAIRED);
        return false;
    }
    uint32_t fn = p->pending[--p->npending];
    memset(out, 0, sizeof *out);
    out->kind = (fn & SPOOR_CALLS_KIND_ENTER) ? SPOOR_CALL_ENTER : SPOOR_CALL_EXIT;
    out->function = fn & ~1u;
    out->site = spoor_cortexm_is_exc_return(w) ? w : w & ~1u;
    out->after_gap = p->loss != SPOOR_CALLS_LOSS_NONE;
    p->gap_why = p->loss;
    p->loss = SPOOR_CALLS_LOSS_NONE;
    p->records++;
    return true;
}
