/*
 * hello: the smallest example. Prints which core and machine it was built for, the core's
 * CPUID part number (so a test can check QEMU runs the intended core), and on cores with an
 * FPU the result of a floating-point multiply (which faults if startup did not enable the FPU).
 */
#include <stdint.h>

#include "cortexm_regs.h"
#include "semihost.h"

#if defined(__ARM_FP)
static volatile float fpu_operand_a = 1.5f;
static volatile float fpu_operand_b = 2.25f;
#endif

int main(void)
{
    semihost_write_string("hello from " SPOOR_EXAMPLE_CPU " on " SPOOR_EXAMPLE_MACHINE "\n");
    semihost_write_string("cpuid partno ");
    semihost_write_hex(CPUID_PARTNO(SCB_CPUID));
    semihost_write_string("\n");
#if defined(__ARM_FP)
    float product = fpu_operand_a * fpu_operand_b;
    semihost_write_string("fpu 1.5*2.25*1000 = ");
    semihost_write_decimal((uint32_t)(product * 1000.0f));
    semihost_write_string("\n");
#endif
    semihost_write_string("bye\n");
    return 0;
}
