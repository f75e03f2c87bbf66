/* The trace sources behind include/spoor/trace_source.h: every kind hands out exactly the
 * bytes that were put in, in order (a regular file larger than several windows, a file that
 * grows while it is read, an empty file, a FIFO, a TCP server), and SOURCE strings that name
 * nothing usable fail with one error naming the problem. The reference for the bytes is what
 * the test wrote. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "spoor/error.h"
#include "spoor/trace_source.h"

static char dir[] = "/tmp/spoor-trace-source-XXXXXX";

static uint8_t *pattern(size_t n, uint32_t seed)
{
    uint8_t *p = malloc(n);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
    return p;
}

static void write_file(const char *path, const uint8_t *data, size_t n, const char *mode)
{
    FILE *f = fopen(path, mode);
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Everything the source hands out until the end, into a new buffer of *len bytes. */
static uint8_t *drain(spoor_trace_source *s, size_t *len)
{
    size_t cap = 1 << 20, n = 0;
    uint8_t *all = malloc(cap);
    assert_non_null(all);
    for (;;) {
        const uint8_t *data;
        ssize_t got = spoor_trace_source_receive(s, &data, -1);
        assert_true(got >= 0);
        if (got == 0)
            break;
        while (n + (size_t)got > cap)
            assert_non_null(all = realloc(all, cap *= 2));
        memcpy(all + n, data, (size_t)got);
        n += (size_t)got;
    }
    const uint8_t *data;
    assert_int_equal(spoor_trace_source_receive(s, &data, -1), SPOOR_TRACE_EOF); /* stays */
    *len = n;
    return all;
}

/* The source hands out exactly the n bytes of want, then the end; closes it. */
static void expect_stream(spoor_trace_source *s, const uint8_t *want, size_t n)
{
    assert_non_null(s);
    size_t len;
    uint8_t *got = drain(s, &len);
    assert_int_equal(len, n);
    assert_memory_equal(got, want, n);
    spoor_trace_source_close(s);
    free(got);
}

static void regular_file_in_windows(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "%s/big", dir);
    size_t n = (9u << 20) + 12345; /* more than two 4 MiB windows, not a multiple of a page */
    uint8_t *want = pattern(n, 1);
    write_file(path, want, n, "wb");
    expect_stream(spoor_trace_source_file(path), want, n);
    free(want);
}

static void growing_file_read_to_its_new_end(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "%s/grows", dir);
    size_t first = 5u << 20, more = (1u << 20) + 3;
    uint8_t *want = pattern(first + more, 2);
    write_file(path, want, first, "wb");
    spoor_trace_source *s = spoor_trace_source_file(path);
    assert_non_null(s);
    const uint8_t *data;
    ssize_t got = spoor_trace_source_receive(s, &data, -1);
    assert_true(got > 0 && (size_t)got < first);
    assert_memory_equal(data, want, (size_t)got);
    size_t at = (size_t)got;
    write_file(path, want + first, more, "ab"); /* appended while the source is open */
    size_t len;
    uint8_t *rest = drain(s, &len);
    assert_int_equal(at + len, first + more);
    assert_memory_equal(rest, want + at, len);
    spoor_trace_source_close(s);
    free(rest);
    free(want);
}

static void empty_file(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "%s/empty", dir);
    write_file(path, (const uint8_t *)"", 0, "wb");
    spoor_trace_source *s = spoor_trace_source_open(path, 0);
    assert_non_null(s);
    const uint8_t *data;
    assert_int_equal(spoor_trace_source_receive(s, &data, 100), SPOOR_TRACE_EOF);
    spoor_trace_source_close(s);
}

static void fifo(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    size_t n = (3u << 20) + 7;
    uint8_t *want = pattern(n, 3);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        write_file(path, want, n, "wb");
        _exit(0);
    }
    expect_stream(spoor_trace_source_open(path, 0), want, n);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    free(want);
}

static void tcp_server(void **state)
{
    (void)state;
    int srv = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(srv, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(srv, 1), 0);
    assert_int_equal(getsockname(srv, (struct sockaddr *)&a, &alen), 0);
    size_t n = (2u << 20) + 11;
    uint8_t *want = pattern(n, 4);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int c = accept(srv, NULL, NULL);
        for (size_t off = 0; c >= 0 && off < n;) {
            ssize_t w = write(c, want + off, n - off);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(c >= 0 ? 0 : 1);
    }
    close(srv);
    char spec[64];
    snprintf(spec, sizeof spec, "tcp:127.0.0.1:%u", ntohs(a.sin_port));
    expect_stream(spoor_trace_source_open(spec, 0), want, n); /* no reconnection: EOF */
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    free(want);
}

static void refused(const char *spec, const char *words)
{
    spoor_trace_source *s = spoor_trace_source_open(spec, 0);
    if (s)
        fail_msg("%s: opened", spec);
    const char *e = spoor_last_error();
    if (!strstr(e, words) || strchr(e, '\n'))
        fail_msg("%s: error '%s' does not say '%s'", spec, e, words);
}

static void bad_sources(void **state)
{
    (void)state;
    refused("", "empty SOURCE");
    refused("/nonexistent/capture.bin", "cannot open");
    refused(dir, "is a directory");
    refused("tcp:nohost", "expected tcp:HOST:PORT");
    refused("tcp::1234", "expected tcp:HOST:PORT");
    refused("tcp:localhost:", "expected tcp:HOST:PORT");
    refused("serial:/dev/null:fast", "expected serial:/dev/ttyX:BAUD");
    refused("serial:/dev/null:0", "expected serial:/dev/ttyX:BAUD");
    refused("serial:/dev/null:123", "unsupported baud rate 123");
    refused("serial:/dev/null:115200", "not a tty");
    spoor_trace_source_close(NULL);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regular_file_in_windows),
        cmocka_unit_test(growing_file_read_to_its_new_end),
        cmocka_unit_test(empty_file),
        cmocka_unit_test(fifo),
        cmocka_unit_test(tcp_server),
        cmocka_unit_test(bad_sources),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
