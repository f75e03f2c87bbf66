/* Assembler producer for the symbolizer's differential test (tests/e2e/test_sym_producers.py):
 * functions named by Rust symbols, v0 and legacy mangling, and a C++ one. Assembled with -g,
 * GNU as describes each function in DWARF by its symbol name (DW_AT_name, language "MIPS
 * assembler") and gives the lines of this file; with --strip-debug only the symbol table
 * names them. Linked for the mps2-an385 memory map; it is never run. */
    .syntax unified
    .thumb
    .text

    .macro function name
    .globl  \name
    .type   \name, %function
    .thumb_func
\name:
    .endm

    function _RNvCskwGfYPst2Cb_3foo16example_function
    movs r0, #1
    adds r0, r0, #2
    nop
    bx lr
    .size _RNvCskwGfYPst2Cb_3foo16example_function, .-_RNvCskwGfYPst2Cb_3foo16example_function

    function _RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3newCs15kBYyAo9fc_7mycrate
    push {r4, lr}
    movs r4, #0
    mov r0, r4
    pop {r4, pc}
    .size _RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3newCs15kBYyAo9fc_7mycrate, .-_RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3newCs15kBYyAo9fc_7mycrate

    function _RNCNvC8my_crate4main0B3_
    subs r0, r0, #1
    bne _RNCNvC8my_crate4main0B3_
    bx lr
    .size _RNCNvC8my_crate4main0B3_, .-_RNCNvC8my_crate4main0B3_

    function _ZN4core3fmt9Formatter3pad17h1a2b3c4d5e6f7a8bE
    movs r1, #3
    muls r0, r1, r0
    nop
    nop
    bx lr
    .size _ZN4core3fmt9Formatter3pad17h1a2b3c4d5e6f7a8bE, .-_ZN4core3fmt9Formatter3pad17h1a2b3c4d5e6f7a8bE

    function _ZN3foo3bar17h05af221e174051e9E
    lsls r0, r0, #2
    bx lr
    .size _ZN3foo3bar17h05af221e174051e9E, .-_ZN3foo3bar17h05af221e174051e9E

    function _ZN9MMA8652FC16I2C_RegisterReadEh
    uxtb r0, r0
    adds r0, #0x1d
    bx lr
    .size _ZN9MMA8652FC16I2C_RegisterReadEh, .-_ZN9MMA8652FC16I2C_RegisterReadEh

    function Reset_Handler
    bl _RNvCskwGfYPst2Cb_3foo16example_function
    bl _ZN3foo3bar17h05af221e174051e9E
    b Reset_Handler
    .size Reset_Handler, .-Reset_Handler

    .section .vectors, "a"
    .word 0x20008000
    .word Reset_Handler
