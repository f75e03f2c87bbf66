/* sched: a small preemptive scheduler for the examples (named tasks with fixed priorities, a
 * SysTick tick, the context switch in PendSV). Its TCB type and current-thread pointer are what
 * spoor's RTOS layer reads (spoor top -T sched, docs/top.md), through DWARF like any RTOS's. */
#ifndef SPOOR_EXAMPLE_SCHED_H
#define SPOOR_EXAMPLE_SCHED_H

#include <stdint.h>

struct sched_task {
    uint32_t *sp; /* the saved stack pointer: r4-r11 and EXC_RETURN, then the frame */
    const char *name;
    uint8_t priority;    /* higher runs first; 0 is the idle task's */
    void (*entry)(void); /* the task's function */
    uint32_t wake_tick;  /* sleeping until the tick count reaches this */
    uint32_t runs;       /* times switched to */
    uint32_t *stack;     /* lowest address of the stack */
    uint32_t stack_words;
};

/* The running task: written on every switch (what the DWT comparator watches). */
extern struct sched_task *volatile sched_current;
/* The idle task (runs when no other task is ready). */
extern struct sched_task *const volatile sched_idle;

/* Sleeps the calling task for ticks ticks. */
void sched_sleep(uint32_t ticks);
/* Starts the scheduler: never returns. */
void sched_start(void) __attribute__((noreturn));

#endif
