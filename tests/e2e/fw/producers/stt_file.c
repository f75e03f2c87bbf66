/* Code with no line row, for the symbolizer's differential test (tests/e2e/test_sym_producers.py,
 * build "gcc-stt-file"): addr2line and llvm-symbolizer name the file of such an address by the
 * STT_FILE symbol before a local function symbol. This unit has DWARF, but its top-level
 * assembly functions have no line rows and no DIE (a known unit, no row); stt_file_nodebug.c is
 * built without debug information and stt_file_asm.s is assembled without it. Each kind has a
 * local function (a file is given) and a global one (none is). Linked for the mps2-an385 memory
 * map; it is never run. */
int stt_nodebug_global(int x); /* stt_file_nodebug.c */
int stt_asm_global(int x);     /* stt_file_asm.s */
int stt_asm_in_c_global(int x);
int stt_asm_in_c_local(int x);

__asm__(".text\n"
        ".thumb\n"
        ".balign 2\n"
        ".thumb_func\n"
        ".type stt_asm_in_c_local, %function\n"
        "stt_asm_in_c_local:\n"
        "    adds r0, r0, #1\n"
        "    adds r0, r0, #2\n"
        "    bx lr\n"
        ".size stt_asm_in_c_local, .-stt_asm_in_c_local\n"
        ".global stt_asm_in_c_global\n"
        ".thumb_func\n"
        ".type stt_asm_in_c_global, %function\n"
        "stt_asm_in_c_global:\n"
        "    adds r0, r0, #3\n"
        "    adds r0, r0, #4\n"
        "    bx lr\n"
        ".size stt_asm_in_c_global, .-stt_asm_in_c_global\n");

volatile int sink;

int main(void)
{
    sink = stt_asm_in_c_local(sink) + stt_asm_in_c_global(sink);
    sink += stt_nodebug_global(sink) + stt_asm_global(sink);
    return 0;
}

void Reset_Handler(void)
{
    main();
    for (;;) {
    }
}
