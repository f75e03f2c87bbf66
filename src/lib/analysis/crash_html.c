/* spoor report's page (spoor/analysis.h spoor_crash_html): the template crash_page.html (compiled
 * in as spoor_crash_page[]) with two JSON documents in it, the report spoor_crash_json writes
 * (so the page and spoor crash --json cannot disagree) and the annex of what only the page shows
 * (crash_annex.c). The page's own script renders both; nothing is fetched. */
#include <stdlib.h>

#include "base/set_error.h"
#include "crash_annex_internal.h"
#include "spoor/analysis.h"
#include "util/html_fill.h"

extern const unsigned char spoor_crash_page[];
extern const unsigned long spoor_crash_page_len;

char *spoor_crash_html_from_json(const spoor_elf *elf, const char *report, size_t report_len,
                                 const spoor_report_options *o, size_t *len)
{
    static const spoor_report_options none = {0};
    size_t annex_len = 0;
    char *annex = spoor_crash_annex_json(elf, report, report_len, o ? o : &none, &annex_len);
    if (!annex)
        return NULL;
    static const char *const markers[] = {"@SPOOR_CRASH_JSON@", "@SPOOR_ANNEX_JSON@"};
    const char *const docs[] = {report, annex};
    const size_t lens[] = {report_len, annex_len};
    outbuf *ob = malloc(sizeof *ob);
    char *page = NULL;
    if (ob) {
        ob_init_memory(ob);
        if (!html_fill(ob, (const char *)spoor_crash_page, spoor_crash_page_len, markers, docs,
                       lens, 2)) {
            free(ob->mem);
            free(ob);
            free(annex);
            spoor_set_error(SPOOR_ERR_UNSUPPORTED, "the page template lacks its markers (a bad "
                                                   "build)");
            return NULL;
        }
        page = ob_take(ob, len);
    }
    free(ob);
    free(annex);
    if (!page)
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
    return page;
}

char *spoor_crash_html(spoor_crash *c, const spoor_report_options *o, size_t *len)
{
    size_t report_len = 0;
    char *report = spoor_crash_json(c, &report_len);
    if (!report)
        return NULL;
    /* A connection lost on the way: what was read after it is not the target's memory (the
     * error the lost read set is the one to give). */
    if (c->snap->gdb && !spoor_gdb_alive(c->snap->gdb)) {
        free(report);
        return NULL;
    }
    char *page = spoor_crash_html_from_json(c->elf, report, report_len, o, len);
    free(report);
    return page;
}
