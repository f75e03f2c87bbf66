/* Built without debug information (tests/e2e/test_sym_producers.py, see stt_file.c): a static
 * function, named by the symbol table, whose file addr2line takes from the STT_FILE symbol. */
static __attribute__((noinline, used)) int stt_nodebug_local(int x)
{
    return x * 7 + 3;
}

int stt_nodebug_global(int x)
{
    return stt_nodebug_local(x) ^ 5;
}
