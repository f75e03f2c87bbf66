@ Assembly functions without .size, as kernels write them (Zephyr's arch_cpu_idle, ThreadX's
@ _tx_timer_interrupt with the local label __tx_ts_wait inside it), one function with .size
@ between them, and one without .size last in its own output section. Built for tests/e2e/test_sym_zero_size.py
@ (never run).
        .syntax unified
        .thumb
        .text

        .global arch_cpu_idle
        .type arch_cpu_idle, %function
        .thumb_func
arch_cpu_idle:
        movs r0, #0
        msr basepri, r0
        wfi
        cpsie i
        bx lr

        .global _tx_timer_interrupt
        .type _tx_timer_interrupt, %function
        .thumb_func
_tx_timer_interrupt:
        push {r4, lr}
        ldr r4, =0x20000000
        ldr r0, [r4]
        adds r0, r0, #1
__tx_ts_wait:
        str r0, [r4]
        cmp r0, #8
        bne __tx_ts_wait
.Lnot_in_symtab:
        pop {r4, pc}
        .ltorg

        .global sized_between
        .type sized_between, %function
        .thumb_func
        .align 2
sized_between:
        adds r0, r0, #1
        bx lr
        .size sized_between, .-sized_between

        .section .fast,"ax",%progbits
        .global last_nosize
        .type last_nosize, %function
        .thumb_func
last_nosize:
        nop
        nop
        bx lr
