/* spoor sym: addresses to function+offset, file:line and the chain of inlined frames. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cli.h"
#include "spoor/elf.h"
#include "spoor/thumb.h"
#include "sym_memo.h"
#include "util/json_write.h"
#include "util/outbuf.h"

#define MAX_FRAMES 64
#define STDIN_BLOCK (1 << 16) /* bytes read from stdin at once */

#if defined(__x86_64__) && defined(__GNUC__)
#define MEMO_AVX 1 /* kept answers copied with AVX moves where the processor has them */
#else
#define MEMO_AVX 0
#endif

static const char sym_usage[] =
    "usage: spoor sym -e FW.elf [--json] [--no-demangle] [-r] [ADDR ...]\n"
    "Symbolizes code addresses with the ELF's DWARF (functions, inlined functions, lines)\n"
    "and its symbol table where there is no DWARF. Reads addresses from standard input,\n"
    "separated by white space, when none are given. The Thumb bit of an address is ignored.\n\n"
    "  -e, --elf FILE   the firmware ELF (32-bit ARM); -e is needed: an address has no build-id,\n"
    "                   so --elf-dir (of crash, gdbserver, mtb, calls, top) cannot apply here\n"
    "  -j, --json       one JSON object per address:\n"
    "                   {\"addr\":\"0x..\",\"function\":..,\"offset\":..,\"file\":..,\"line\":..,\n"
    "                    \"inlined\":[{\"function\":..,\"file\":..,\"line\":..}]}\n"
    "                   with \"partial\":true added when a part of the ELF the answer needs\n"
    "                   could not be read (see the warning on stderr)\n"
    "      --no-demangle  C++ and Rust names as the ELF has them (mangled linkage names),\n"
    "                     not demangled with parameters as 'addr2line -C' prints them\n"
    "  -r, --return-addresses  the addresses are return addresses (a backtrace's callers, as\n"
    "                   spoor_backtrace() prints them on the device): name the call before\n"
    "                   each, ADDR-1, as spoor crash does; the offset stays that of ADDR\n"
    "  -h, --help       this text\n\n"
    "Text output: '0x000001a4 main+0xc at src/main.c:42', then for an address in inlined\n"
    "code one line '  inlined in CALLER at FILE:LINE' per enclosing function, innermost first.\n"
    "Unknown parts print as ?? (JSON: null). Line 0 is DWARF's 'no line' for code of a known\n"
    "file (compiler-generated code): 'FILE:0' (addr2line prints 'FILE:?'); so is code that no\n"
    "line row covers in a local function whose file the symbol table names (STT_FILE).\n"
    "A part of the ELF that cannot be read (a DWARF unit, a line table, a section) is skipped\n"
    "with one 'WARNING:' line on stderr naming it, printed before the first answer it affects;\n"
    "the rest still answers. An ELF whose section headers do not fit together is refused.\n";

struct sym_ctx {
    spoor_elf *elf;
    int json;
    bool return_addresses; /* -r: look up ADDR-1, the call (spoor_lookup_pc) */
    int bad;               /* tokens that were not addresses */
    struct {
        const char *s;
        size_t len;
        bool plain;  /* nothing in it for ob_text to escape */
    } lengths[4096]; /* strlen of the names and files printed, by address of the string */
    outbuf out;
    json_out jout;  /* JSON writer onto out */
    size_t warned;  /* the ELF's warnings printed so far */
    size_t addr_at; /* where an answer's address is: TEXT_ADDR_AT, JSON_ADDR_AT */
    struct memo memo;
    struct forms forms;
    uint64_t *numbers;      /* put_number's words (with the forms): decimal, then hex */
    uint64_t *offset_words; /* of the offsets: hex in text, decimal in JSON */
    char *num, *num_end;   /* where the last answer's offset digits went (NULL: not in one piece) */
    char *line, *line_end; /* and its first frame's line's digits (NULL: none, or not so) */
};

/* strlen(s), remembered with whether it is plain (ob_text_plain): the symbolizer hands out the
 * same few thousand strings again and again. */
static size_t length_of(struct sym_ctx *c, const char *s, bool *plain)
{
    size_t h = (size_t)(((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15u) >> 52); /* 12 bits */
    if (c->lengths[h].s != s) {
        c->lengths[h].s = s;
        c->lengths[h].len = strlen(s);
        c->lengths[h].plain = ob_text_plain(s);
    }
    *plain &= c->lengths[h].plain;
    return c->lengths[h].len;
}

/* Longest text of one frame besides its function and file names: "0x%08x " or "  inlined in ",
 * "+0x%x", " at ", ":%u", newline. */
#define TEXT_FRAME_EXTRA (13 + 11 + 4 + 11 + 1)

/* One text line: head ("0x%08x " or "  inlined in "), the function ("??" when unknown) with
 * "+0x%x" of its offset when has_offset, " at FILE:LINE" (LINE 0: no line) when the file is
 * known, newline. Written in one piece into the output buffer. */
static inline __attribute__((always_inline)) void print_frame(struct sym_ctx *c, const char *head,
                                                              size_t head_len,
                                                              const spoor_location *f,
                                                              bool has_offset, bool first)
{
    const char *fn = f->function ? f->function : "??";
    bool plain = true;
    size_t fn_len = f->function ? length_of(c, f->function, &plain) : 2;
    size_t file_len = f->file ? length_of(c, f->file, &plain) : 0;
    char *p = plain ? ob_reserve(&c->out, fn_len + file_len + TEXT_FRAME_EXTRA) : NULL;
    if (!p) { /* names to escape (ob_text), or longer than the whole buffer: piece by piece */
        char num[16];
        ob_write(&c->out, head, head_len);
        ob_text(&c->out, fn);
        if (has_offset) {
            num[0] = '+';
            ob_write(&c->out, num, (size_t)(ob_put_hex(num + 1, f->offset) - num));
        }
        if (f->file) {
            ob_write(&c->out, " at ", 4);
            ob_text(&c->out, f->file);
            num[0] = ':';
            char *e = ob_put_u32(num + 1, f->line);
            ob_write(&c->out, num, (size_t)(e - num));
        }
        ob_char(&c->out, '\n');
        return;
    }
    p = ob_put(p, head, head_len);
    p = ob_put_short(p, fn, fn_len);
    if (has_offset) {
        *p++ = '+';
        c->num = p + 2; /* the digits after 0x */
        p = ob_put_hex(p, f->offset);
        c->num_end = p;
    }
    if (f->file) {
        p = ob_put(p, " at ", 4);
        p = ob_put_short(p, f->file, file_len);
        *p++ = ':';
        if (first)
            c->line = p;
        p = ob_put_u32(p, f->line);
        if (first)
            c->line_end = p;
    }
    *p++ = '\n';
    ob_commit(&c->out, p);
}

static void print_text(struct sym_ctx *c, uint32_t addr, const spoor_location *f, size_t n)
{
    char head[11];
    ob_put_hex8(head, addr);
    head[10] = ' ';
    print_frame(c, head, sizeof head, &f[0], f[0].function != NULL, true);
    for (size_t i = 1; i < n; i++)
        print_frame(c, "  inlined in ", 13, &f[i], false, false);
}

/* The line; null only when the file is unknown too (line 0: DWARF's "no line" in that file). */
static void json_line(json_out *j, const spoor_location *f)
{
    if (f->file || f->line)
        json_key_uint(j, JSON_KEY("line"), f->line);
    else
        json_key_null(j, JSON_KEY("line"));
}

/* A member of a number after others (json_key_uint), and where its digits went into *at and *end
 * (left alone when the output was flushed on the way). */
static void json_number_at(struct sym_ctx *c, const char *key, size_t key_len, uint32_t value,
                           char **at, char **end)
{
    unsigned long flushes = c->out.flushes;
    size_t pos = c->out.len + 1 + key_len; /* after the comma and the key */
    json_key_uint(&c->jout, key, key_len, value);
    if (c->out.flushes == flushes && pos < c->out.len && c->out.buf[pos - 1] == ':') {
        *at = c->out.buf + pos;
        *end = c->out.buf + c->out.len;
    }
}

static void print_json(struct sym_ctx *c, uint32_t addr, const spoor_location *f, size_t n,
                       bool partial)
{
    json_out *j = &c->jout;
    json_object_begin(j, NULL);
    json_key_hex32(j, JSON_KEY("addr"), addr);
    json_key_string(j, JSON_KEY("function"), f[0].function);
    if (f[0].has_offset)
        json_number_at(c, JSON_KEY("offset"), f[0].offset, &c->num, &c->num_end);
    else
        json_key_null(j, JSON_KEY("offset"));
    json_key_string(j, JSON_KEY("file"), f[0].file);
    if (f[0].file)
        json_number_at(c, JSON_KEY("line"), f[0].line, &c->line, &c->line_end);
    else
        json_line(j, &f[0]);
    json_key_array_begin(j, JSON_KEY("inlined"));
    for (size_t i = 1; i < n; i++) {
        json_object_begin(j, NULL);
        json_key_string(j, JSON_KEY("function"), f[i].function);
        json_key_string(j, JSON_KEY("file"), f[i].file);
        json_line(j, &f[i]);
        json_object_end(j);
    }
    json_array_end(j);
    if (partial)
        json_key_bool(j, JSON_KEY("partial"), true);
    json_object_end(j);
    json_finish(j);
}

/* Prints the ELF's warnings not printed yet on stderr, after the answers before them. Units are
 * read on first use, so a lookup can add some: each shows up before the answer it affects. */
__attribute__((noinline, cold)) static void print_new_warnings(struct sym_ctx *c)
{
    const char *const *list;
    size_t n = spoor_elf_warnings(c->elf, &list);
    if (n > c->warned) {
        ob_flush(&c->out);
        for (; c->warned < n; c->warned++)
            cli_warn_input("sym", "%s", list[c->warned]);
    }
}

/* Where an answer's address goes: "0x%08x " (text), {"addr":"0x%08x", (JSON). */
#define TEXT_ADDR_AT 0
#define JSON_ADDR_AT (sizeof "{\"addr\":\"" - 1)

/* The 8 digits of "0x%08x" of an address from its memo key (its 1 to 8 hex digits as the token
 * has them, see struct memo_slot): zeros put before them, upper case made lower. */
static inline uint64_t key_hex8(uint64_t key)
{
    unsigned shift = (unsigned)__builtin_clzll(key) & 56;            /* 8 bits a missing digit */
    uint64_t zeros = 0x1010101010101010u & ~(~(uint64_t)0 << shift); /* '0' with bit 5 */
    return key << shift | zeros | 0x2020202020202020u; /* '0'-'9' keep bit 5, A-F made a-f */
}

/* The digits of v (below NUMBER_WORDS) in hex (%x) or decimal (%u) as one word, as they lie in
 * memory, with their number in the top byte, made and kept in words[v] (0: not made yet) on
 * first use. */
__attribute__((noinline)) static uint64_t number_word(uint64_t *words, uint32_t v, bool hex)
{
    char d[16] = {0};
    uint64_t w, n = (uint64_t)((hex ? ob_put_hex_digits(d, v) : ob_put_u32(d, v)) - d);
    memcpy(&w, d, 8); /* at most 5 digits */
    return words[v] = w | n << 56;
}

/* %x (hex) or %u of v at p (8 bytes written), from words (c->numbers, in hex the second half)
 * when v is below NUMBER_WORDS: answers print the same few thousand line numbers and function
 * offsets again and again. */
static inline char *put_number(uint64_t *words, char *p, uint32_t v, bool hex)
{
    if (v >= NUMBER_WORDS)
        return hex ? ob_put_hex_digits(p, v) : ob_put_u32(p, v);
    uint64_t w = words[v];
    if (!w)
        w = number_word(words, v, hex);
    memcpy(p, &w, 8);
    return p + (w >> 56);
}

/* Prints the answer of addr from its form f, the offset addr - base (and keeps it in the memo
 * under key, unless 0: then key also gives the address's digits). */
static inline __attribute__((always_inline)) void
answer_from_form(struct sym_ctx *c, const struct form_slot *fp, uint32_t addr, uint32_t base,
                 unsigned line, uint64_t key, struct memo_slot *at)
{
    /* read once, as full-width numbers: the stores into the output may alias the form */
    size_t len = fp->len, num = fp->num, end = fp->end, lnum = fp->lnum, lend = fp->lend;
    const char *src = c->forms.a.text + fp->off;
    uint32_t off = (addr & ~1u) - base;
    /* the offset and the line: 10 digits each at most */
    char *o = ob_reserve(&c->out, len + 20 + MEMO_PAD);
    memo_copy(o, src, num);
    char *p = o + num;
    if (num < end) /* the digits after 0x in text */
        p = put_number(c->offset_words, p, off, !c->json);
    memo_copy(p, src + end, lnum - end);
    p += lnum - end;
    if (lnum < lend)
        p = put_number(c->numbers, p, line, false);
    memo_copy(p, src + lend, len - lend);
    p += len - lend;
    if (key) {
        uint64_t w = key_hex8(key);
        memcpy(o + c->addr_at + 2, &w, 8);
    } else {
        ob_put_hex8(o + c->addr_at, addr);
    }
    ob_commit(&c->out, p);
    memo_keep(&c->memo, key, at, o, (size_t)(p - o), true);
}

/* Looks addr up and prints its answer (and keeps it in the memo under key, unless 0), and its
 * form at form (the slot of id, empty; NULL: none), base and line those of spoor_elf_answer_id. */
__attribute__((noinline)) static void answer_looked_up(struct sym_ctx *c, uint32_t addr,
                                                       uint64_t key, struct memo_slot *at,
                                                       struct form_slot *form, const uint64_t id[2],
                                                       uint32_t base, unsigned line)
{
    size_t start = c->out.len;
    unsigned long flushes = c->out.flushes;
    c->num = c->num_end = c->line = c->line_end = NULL;
    spoor_location frames[MAX_FRAMES];
    size_t n;
    if (c->return_addresses) {
        n = spoor_elf_symbolize_pc(c->elf, addr & ~1u, true, frames, MAX_FRAMES);
        if (n && frames[0].has_offset) /* as spoor crash counts it */
            frames[0].offset = spoor_elf_function_offset(c->elf, addr & ~1u, true, &frames[0]);
    } else {
        n = spoor_elf_symbolize(c->elf, addr, frames, MAX_FRAMES);
    }
    bool partial = false;
    size_t warnings = spoor_elf_warnings(c->elf, NULL);
    if (warnings) { /* a damaged ELF: the rare case */
        if (warnings > c->warned)
            print_new_warnings(c);
        partial = spoor_elf_partial(c->elf, spoor_lookup_pc(addr, c->return_addresses));
    }
    if (c->json)
        print_json(c, addr, frames, n, partial);
    else
        print_text(c, addr, frames, n);
    if (c->out.flushes == flushes && !memo_is_off(&c->memo)) { /* the answer is all in the buffer */
        if (warnings) {
            memo_stop(&c->memo);
            forms_stop(&c->forms);
            return;
        }
        const char *text = c->out.buf + start;
        size_t len = c->out.len - start;
        memo_keep(&c->memo, key, at, text, len, false);
        size_t addr_at = c->addr_at;
        char hex[10];
        ob_put_hex8(hex, addr);
        /* the places in order: the address, the offset, the line */
        size_t num = c->num ? (size_t)(c->num - text) : addr_at + 10;
        size_t end = c->num ? (size_t)(c->num_end - text) : num;
        size_t lnum = c->line ? (size_t)(c->line - text) : len;
        size_t lend = c->line ? (size_t)(c->line_end - text) : len;
        if (form && frames[0].has_offset == (c->num != NULL) &&
            (!c->num || frames[0].offset == (addr & ~1u) - base) &&
            (frames[0].file != NULL) == (c->line != NULL) && frames[0].line == line &&
            addr_at + 10 <= num && num <= end && end <= lnum && lnum <= lend && lend <= len &&
            !memcmp(text + addr_at, hex, 10))
            form_keep(&c->forms, form, id, text, len, num, end, lnum, lend);
    }
}

/* Prints the answer of addr (and keeps it in the memo under key, unless 0): from its form when
 * one was kept, else looked up. */
static inline __attribute__((always_inline)) void
answer_new_body(struct sym_ctx *c, uint32_t addr, uint64_t key, struct memo_slot *at)
{
    static const uint64_t no_id[2];
    uint32_t base;
    unsigned line;
    uint64_t id[2];
    if (c->forms.slot && spoor_elf_answer_id(c->elf, addr, id, &base, &line) && id[0]) {
        struct form_slot *form = form_find(c->forms.slot, id);
        if (form->id[0])
            answer_from_form(c, form, addr, base, line, key, at);
        else
            answer_looked_up(c, addr, key, at, form, id, base, line);
        return;
    }
    answer_looked_up(c, addr, key, at, NULL, no_id, 0, 0);
}

__attribute__((noinline)) static void answer_new(struct sym_ctx *c, uint32_t addr, uint64_t key,
                                                 struct memo_slot *at)
{
    answer_new_body(c, addr, key, at);
}

#if MEMO_AVX
/* The same with AVX (and BMI) where the processor has them. */
__attribute__((noinline, target("avx,bmi"))) static void
answer_new_avx(struct sym_ctx *c, uint32_t addr, uint64_t key, struct memo_slot *at)
{
    answer_new_body(c, addr, key, at);
}
#define ANSWER_NEW(avx, c, addr, key, at)                                                          \
    ((avx) ? answer_new_avx(c, addr, key, at) : answer_new(c, addr, key, at))
#else
#define ANSWER_NEW(avx, c, addr, key, at) ((void)(avx), answer_new(c, addr, key, at))
#endif

static void symbolize_token(struct sym_ctx *c, const char *tok, size_t len)
{
    uint32_t addr;
    if (!spoor_parse_u32_fast(tok, len, SPOOR_NUM_AUTO, &addr)) {
        ob_flush(&c->out);
        cli_error("sym", "not an address: '%.*s'", (int)(len > 64 ? 64 : len), tok);
        c->bad++;
        return;
    }
    answer_new(c, addr, 0, NULL); /* the memo is for the common case, 0x and hex digits */
}

/* The number the len hex digits of a memo key (struct memo_slot, token_key) stand for, into
 * *v, all 8 bytes classified and converted at once; false when one of them is no hex digit (the
 * caller's slow path decides). */
#if defined(__SSE2__)
/* key_value's constants: 0x20, 0x0f, 9 in every byte, 0xff in every 16-bit lane */
static const uint64_t key_value_consts[4][2]
    __attribute__((aligned(16))) = {{0x2020202020202020u, 0x2020202020202020u},
                                    {0x0f0f0f0f0f0f0f0fu, 0x0f0f0f0f0f0f0f0fu},
                                    {0x0909090909090909u, 0x0909090909090909u},
                                    {0x00ff00ff00ff00ffu, 0x00ff00ff00ff00ffu}};

/* In an SSE2 register: the digits moved to the top of 8 bytes (the zero bytes below them, leading
 * zeros), classed by signed compares (bytes of 0x80 and more are negative: no digit), paired
 * into bytes in 16-bit lanes and packed. The constants read from memory (hidden from GCC, which
 * makes each one in three instructions). */
static inline bool key_value(uint64_t w, unsigned len, uint32_t *v)
{
    if (len - 1 >= 8)
        return false;
    const __m128i *k = (const __m128i *)(const void *)key_value_consts;
    __asm__("" : "+r"(k));
    __m128i x = _mm_cvtsi64_si128((long long)(w << (8 * (8 - len))));
    __m128i lower = _mm_or_si128(x, _mm_load_si128(&k[0])); /* A-F made a-f */
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('0' - 1)),
                                  _mm_cmplt_epi8(lower, _mm_set1_epi8('9' + 1)));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                   _mm_cmplt_epi8(lower, _mm_set1_epi8('f' + 1)));
    if ((unsigned)_mm_movemask_epi8(_mm_or_si128(digit, letter)) != ((0xffu << (8 - len)) & 0xff))
        return false;
    __m128i d = _mm_add_epi8(_mm_and_si128(x, _mm_load_si128(&k[1])),
                             _mm_and_si128(letter, _mm_load_si128(&k[2]))); /* digit values */
    /* a 16-bit lane's first byte (the higher digit) and second into its low byte */
    __m128i pairs = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(d, 4), _mm_srli_epi16(d, 8)),
                                  _mm_load_si128(&k[3]));
    *v = __builtin_bswap32((uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(pairs, pairs)));
    return true;
}
#else
/* SWAR: in a 64-bit word. */
static inline bool key_value(uint64_t w, unsigned len, uint32_t *v)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x80 * ones;
    if (w & high) /* not ASCII (the bytes past the digits are zero) */
        return false;
    /* per byte (each < 0x80, so no carry crosses into the next): the top bit set when the byte
     * is at least the bound k, by adding 0x80 - k */
    uint64_t digit = (w + 0x50 * ones) & ~(w + 0x46 * ones) & high; /* '0' to '9' */
    uint64_t lower = w | 0x20 * ones;
    uint64_t letter = (lower + 0x1f * ones) & ~(lower + 0x19 * ones) & high; /* a-f, A-F */
    uint64_t want = (w + 0x7f * ones) & high; /* the digits: the bytes not zero (all < 0x80) */
    if (!want || ((digit | letter) & want) != want)
        return false;
    uint64_t x = (w & 0x0f * ones) + 9 * (letter >> 7); /* each byte its digit's value */
    x = __builtin_bswap64(x) >> (8 * (8 - len));        /* the last digit in the lowest byte */
    x = (x | x >> 4) & 0x00ff00ff00ff00ffu;
    x = (x | x >> 8) & 0x0000ffff0000ffffu;
    *v = (uint32_t)(x | x >> 16);
    return true;
}
#endif

/* The top bit of the first of the 8 bytes of w that is white space or a control byte (<= ' ');
 * 0 when none is. below and high: 0x21 and 0x80 in every byte (arguments, so that a loop keeps
 * them in registers). A byte below 0x21 is found by the borrow of subtracting 0x21 from it,
 * exact for the first such byte (borrows only go up). */
static inline uint64_t token_end_bit(uint64_t w, uint64_t below, uint64_t high)
{
    uint64_t ends = (w - below) & ~w & high;
    return ends & (0 - ends);
}

/* The memo key of a token whose hex digits start at s (see struct memo_slot): the bytes before
 * the first of the 8 at s that is white space or a control byte (<= ' '), *len their number; all
 * 8 (*len 8) when none is. Reads the 8 bytes at once (token_end_bit). */
static inline uint64_t token_key(const char *s, unsigned *len)
{
    uint64_t w;
    memcpy(&w, s, 8);
    uint64_t first = token_end_bit(w, 0x2121212121212121u, 0x8080808080808080u);
    if (!first) {
        *len = 8;
        return w;
    }
    *len = (unsigned)__builtin_ctzll(first) / 8;
    return w & ((first >> 7) - 1); /* the bytes below the first end */
}

/* The token at p (p < end, not white space) in the general case: its answer from the memo, or
 * looked up and printed (and kept), or the error of a token that is no address. Returns where
 * the token ends, or NULL when the end of the block cuts it (last: the block is the input's
 * last), to be finished after the next read. Writes at c->out (the caller's position stored). */
__attribute__((noinline)) static const char *symbolize_token_at(struct sym_ctx *c, const char *p,
                                                                const char *end, bool last)
{
    const char *tok = p;
    uint64_t key = 0;
    struct memo_slot *at = NULL; /* where key goes in the memo: the token is whole */
    const char *q_key = p;       /* where the token ends */
    uint16_t head;
    memcpy(&head, p, 2);                       /* p[1] is in the buffer: *end is a 0 */
    if ((head | 0x2000) == ('0' | 'x' << 8)) { /* 0x and 1-8 digits */
        unsigned len;
        key = token_key(p + 2, &len);
        const char *q = q_key = p + 2 + len;
        /* below 8 digits, *q is the byte <= ' ' token_key stopped at */
        if ((len < 8 || (unsigned char)*q <= ' ') && (q < end || last)) { /* whole */
            const struct memo_slot *m = at = memo_find(&c->memo, key);
            if (m->len && m->key == key) { /* seen before: no need to read it */
                char *o = ob_reserve(&c->out, m->len + MEMO_PAD);
                memo_copy(o, c->memo.a.text + m->off, m->len);
                ob_commit(&c->out, o + m->len);
                return q;
            }
        }
    }
    uint32_t v;
    if (at && key_value(key, (unsigned)(q_key - p - 2), &v)) { /* whole, not seen */
        answer_new(c, v, key, at);
        return q_key;
    }
    while ((unsigned char)*p > ' ')
        p++;
    if (p == end && !last && (size_t)(end - tok) < STDIN_BLOCK)
        return NULL; /* cut by the end of the block: finished after the next read */
    symbolize_token(c, tok, (size_t)(p - tok));
    return p;
}

/* The tokens of in[0, end) (*end a 0), answered: returns where the block's last token, cut by
 * its end, starts (end when none is). The common case, a token of 0x and 1 to 7 hex digits ended
 * by white space whose answer the memo keeps in the slot a lookup probes first, is done here,
 * the answer copied from the memo; every other token by symbolize_token_at. The memo and the
 * output position are kept in locals (the compiler cannot keep c's fields in registers across
 * the stores of the copies): written back to c before symbolize_token_at, read again after. */
static inline __attribute__((always_inline)) const char *
symbolize_block_body(struct sym_ctx *c, const char *p, const char *end, bool last, bool avx)
{
    /* the constants of the test and the lookup, kept in registers (not made again each token) */
    uint64_t below = 0x2121212121212121u, high = 0x8080808080808080u, mul = MEMO_MUL;
    __asm__("" : "+r"(below), "+r"(high), "+r"(mul));
    char *slots = (char *)c->memo.slot;
    size_t mask16 = (size_t)c->memo.mask * sizeof *c->memo.slot;
    const char *text = c->memo.a.text;
    char *o = c->out.buf + c->out.len;
    char *const o_limit = c->out.buf + sizeof c->out.buf - (MEMO_MAX_ANSWER + MEMO_PAD);
    for (;;) {
        uint16_t head;
        memcpy(&head, p, 2); /* p[1] is in the buffer: *end is a 0 */
        if ((head | 0x2000) == ('0' | 'x' << 8)) {
            uint64_t w; /* token_key's work: the first byte <= ' ' of the 8 after 0x ends it */
            memcpy(&w, p + 2, 8);
            uint64_t first = token_end_bit(w, below, high);
            const char *q;
            /* first > 0x80: an end in the 8 bytes, after at least one digit */
            if (first > 0x80 && (q = p + 2 + (size_t)__builtin_ctzll(first) / 8) < end) {
                uint64_t key = w & ((first >> 7) - 1); /* a whole token: as memo_find's key */
                /* memo_find's loop, the miss handled inside it (fused: no second test) */
                size_t at = memo_at(key, mul, mask16);
                struct memo_slot *m = (struct memo_slot *)(slots + at);
                while (m->key != key) {
                    if (!m->key) { /* not seen: looked up and printed (and kept at m) */
                        uint32_t v;
                        if (!key_value(key, (unsigned)(q - p - 2), &v))
                            goto general;
                        c->out.len = (size_t)(o - c->out.buf);
                        ANSWER_NEW(avx, c, v, key, m);
                        slots = (char *)c->memo.slot;
                        mask16 = (size_t)c->memo.mask * sizeof *c->memo.slot;
                        text = c->memo.a.text;
                        o = c->out.buf + c->out.len;
                        p = q + 1; /* past the white space that ends the token */
                        goto next;
                    }
                    at = (at + sizeof *m) & mask16;
                    m = (struct memo_slot *)(slots + at);
                }
                if (o > o_limit) {
                    c->out.len = (size_t)(o - c->out.buf);
                    ob_flush(&c->out);
                    o = c->out.buf + c->out.len;
                }
                const char *src = text + m->off;
                size_t len = m->len;
                memo_copy_answer(o, src, len);
                o += len;
                p = q + 1; /* past the white space that ends the token */
                continue;
            }
        }
        if ((unsigned char)*p <= ' ') { /* *end is a 0: no need to test p first */
            do {
                if (p == end)
                    goto out;
                p++;
            } while ((unsigned char)*p <= ' ');
            continue;
        }
    general:
        c->out.len = (size_t)(o - c->out.buf);
        const char *next = symbolize_token_at(c, p, end, last);
        slots = (char *)c->memo.slot;
        mask16 = (size_t)c->memo.mask * sizeof *c->memo.slot;
        text = c->memo.a.text;
        o = c->out.buf + c->out.len;
        if (!next)
            break;
        p = next;
    next:;
    }
out:
    c->out.len = (size_t)(o - c->out.buf);
    return p;
}

typedef const char *symbolize_block_fn(struct sym_ctx *, const char *, const char *, bool);

static const char *symbolize_block(struct sym_ctx *c, const char *p, const char *end, bool last)
{
    return symbolize_block_body(c, p, end, last, false);
}

#if MEMO_AVX
/* The same with the answers copied by 32-byte AVX moves (where the processor has them). */
__attribute__((target("avx,bmi"))) static const char *
symbolize_block_avx(struct sym_ctx *c, const char *p, const char *end, bool last)
{
    return symbolize_block_body(c, p, end, last, true);
}
#endif

/* Reads white-space separated tokens from stdin in blocks. Unless stdin is a regular file,
 * output is flushed after each block read, so that spoor sym can serve as a coprocess (one
 * address written, its answer read back) like addr2line. */
static int symbolize_stdin(struct sym_ctx *c)
{
    struct stat st;
    int flush = !(fstat(0, &st) == 0 && S_ISREG(st.st_mode));
    static char in[STDIN_BLOCK + 16]; /* in[end] = 0 ends the last token; token_key reads on */
    size_t kept = 0;                  /* bytes of a token cut by the end of the previous block */
    symbolize_block_fn *block = symbolize_block;
#if MEMO_AVX
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx") && __builtin_cpu_supports("bmi"))
        block = symbolize_block_avx;
#endif
    for (;;) {
        ssize_t n = read(0, in + kept, STDIN_BLOCK - kept);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cli_error("sym", "cannot read standard input: %s", strerror(errno));
        const char *end = in + kept + n;
        in[kept + (size_t)n] = 0;
        const char *p = block(c, in, end, n == 0);
        if (n == 0)
            return SPOOR_EXIT_OK;
        kept = (size_t)(end - p);
        memmove(in, p, kept);
        if (flush)
            ob_flush(&c->out);
    }
}

int cmd_sym(int argc, char **argv)
{
    static const struct option opts[] = {
        {"elf", required_argument, 0, 'e'},   {"json", no_argument, 0, 'j'},
        {"no-demangle", no_argument, 0, 'N'}, {"return-addresses", no_argument, 0, 'r'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    const char *elf_path = NULL;
    bool demangle = true;
    static struct sym_ctx c; /* zero at the first call; cleared again for a later one */
    static bool used;
    if (used)
        memset(&c, 0, sizeof c);
    used = true;
    ob_init(&c.out, 1);
    json_init(&c.jout, &c.out);
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:jrh", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'j': c.json = 1; break;
        case 'N': demangle = false; break;
        case 'r': c.return_addresses = true; break;
        case 'h': fputs(sym_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("sym", argv);
        }
    }
    if (!(c.elf = cli_open_elf("sym", elf_path)))
        return SPOOR_EXIT_USAGE;
    spoor_elf_set_demangle(c.elf, demangle);
    c.addr_at = c.json ? JSON_ADDR_AT : TEXT_ADDR_AT;
    memo_init(&c.memo, optind >= argc); /* for the bulk case: addresses from stdin */
    if (!memo_is_off(&c.memo) && !c.return_addresses) {
        c.numbers = calloc(2 * NUMBER_WORDS, sizeof *c.numbers); /* decimal, hex */
        c.offset_words = c.numbers && !c.json ? c.numbers + NUMBER_WORDS : c.numbers;
        c.forms.slot = c.numbers ? calloc(1u << FORM_BITS, sizeof *c.forms.slot) : NULL;
    }
    print_new_warnings(&c);
    int rc = SPOOR_EXIT_OK;
    if (optind < argc)
        for (int i = optind; i < argc; i++)
            symbolize_token(&c, argv[i], strlen(argv[i]));
    else
        rc = symbolize_stdin(&c);
    spoor_elf_close(c.elf);
    memo_stop(&c.memo);
    forms_stop(&c.forms);
    free(c.numbers);
    if (!ob_flush(&c.out))
        return cli_error("sym", "cannot write output: %s", strerror(errno));
    return rc ? rc : c.bad ? SPOOR_EXIT_USAGE : SPOOR_EXIT_OK;
}
