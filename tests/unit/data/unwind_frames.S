/* Test program for the unwinder's unit tests (tests/unit/unwind/test_unwind_methods.c): functions
 * with frames of known shape, each described three ways (DWARF CFI in .debug_frame, EHABI
 * in .ARM.exidx/.ARM.extab, and the prologue instructions themselves). The test builds a
 * stack by hand from the layouts written next to each function and checks every method.
 * Built at test time: arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -nostdlib -g. */
    .syntax unified
    .cpu cortex-m3
    .thumb
    .cfi_sections .debug_frame
    .text

    .global __aeabi_unwind_cpp_pr0
    .type __aeabi_unwind_cpp_pr0, %function
    .thumb_func
__aeabi_unwind_cpp_pr0:
    bx lr
    .size __aeabi_unwind_cpp_pr0, . - __aeabi_unwind_cpp_pr0

/* Reset_Handler: calls outer; never returns. */
    .global Reset_Handler
    .type Reset_Handler, %function
    .thumb_func
Reset_Handler:
    .fnstart
    .cantunwind
    bl outer
    .global ret_reset
ret_reset:
    b .
    .fnend
    .size Reset_Handler, . - Reset_Handler

/* outer: push {r4, r5, lr}; sub sp, #12. At the call: [sp+12] r4, [sp+16] r5,
 * [sp+20] return address; CFA = sp + 24. */
    .global outer
    .type outer, %function
    .thumb_func
outer:
    .fnstart
    .cfi_startproc
    push {r4, r5, lr}
    .save {r4, r5, lr}
    .cfi_def_cfa_offset 12
    .cfi_offset r4, -12
    .cfi_offset r5, -8
    .cfi_offset lr, -4
    sub sp, #12
    .pad #12
    .cfi_def_cfa_offset 24
    bl middle
    .global ret_outer
ret_outer:
    add sp, #12
    pop {r4, r5, pc}
    .cfi_endproc
    .fnend
    .size outer, . - outer

/* middle: push {r7, lr}; mov r7, sp; sub sp, sp, r0 (a run-time amount, like a VLA).
 * r7 = CFA - 8, [r7] saved r7, [r7+4] return address. */
    .global middle
    .type middle, %function
    .thumb_func
middle:
    .fnstart
    .cfi_startproc
    push {r7, lr}
    .save {r7, lr}
    .cfi_def_cfa_offset 8
    .cfi_offset r7, -8
    .cfi_offset lr, -4
    mov r7, sp
    .setfp r7, sp, #0
    .cfi_def_cfa_register r7
    sub sp, sp, r0
    bl inner
    .global ret_middle
ret_middle:
    mov sp, r7
    pop {r7, pc}
    .cfi_endproc
    .fnend
    .size middle, . - middle

/* inner: push {r4-r8, lr} (32-bit encoding); sub sp, #8. At the call: [sp+8] r4 ..
 * [sp+24] r8, [sp+28] return address; CFA = sp + 32. */
    .global inner
    .type inner, %function
    .thumb_func
inner:
    .fnstart
    .cfi_startproc
    push {r4, r5, r6, r7, r8, lr}
    .save {r4, r5, r6, r7, r8, lr}
    .cfi_def_cfa_offset 24
    .cfi_offset r4, -24
    .cfi_offset r5, -20
    .cfi_offset r6, -16
    .cfi_offset r7, -12
    .cfi_offset r8, -8
    .cfi_offset lr, -4
    sub sp, #8
    .pad #8
    .cfi_def_cfa_offset 32
    .global inner_body
inner_body:
    nop
    blx r1
    .global ret_inner
ret_inner:
    add sp, #8
    pop {r4, r5, r6, r7, r8, pc}
    .cfi_endproc
    .fnend
    .size inner, . - inner

/* leaf: saves nothing; the return address stays in LR. */
    .global leaf
    .type leaf, %function
    .thumb_func
leaf:
    .fnstart
    .cfi_startproc
    nop
    .global leaf_body
leaf_body:
    nop
    bx lr
    .cfi_endproc
    .fnend
    .size leaf, . - leaf

/* handler: an interrupt handler, push {r4, lr} with lr = EXC_RETURN; [sp] r4,
 * [sp+4] EXC_RETURN, the exception frame right above. */
    .global handler
    .type handler, %function
    .thumb_func
handler:
    .fnstart
    .cfi_startproc
    push {r4, lr}
    .save {r4, lr}
    .cfi_def_cfa_offset 8
    .cfi_offset r4, -8
    .cfi_offset lr, -4
    bl leaf
    .global ret_handler
ret_handler:
    pop {r4, pc}
    .cfi_endproc
    .fnend
    .size handler, . - handler
