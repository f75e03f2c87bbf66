@ Assembled without debug information (tests/e2e/test_sym_producers.py, see stt_file.c): a local
@ and a global function; the STT_FILE symbol gas writes names the file of the local one.
    .syntax unified
    .thumb
    .text
    .balign 2
    .thumb_func
    .type stt_asm_local, %function
stt_asm_local:
    adds r0, r0, #1
    adds r0, r0, #2
    bx lr
    .size stt_asm_local, .-stt_asm_local
    .global stt_asm_global
    .thumb_func
    .type stt_asm_global, %function
stt_asm_global:
    push {lr}
    bl stt_asm_local
    pop {pc}
    .size stt_asm_global, .-stt_asm_global
