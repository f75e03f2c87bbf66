/*
 * printf: the Cortex-M4F example linked with the full newlib C library (printf, snprintf and
 * libm with floating point). It is the large ELF of the set, for symbolizer benchmarks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* volatile, so the compiler cannot fold the arithmetic at build time */
static volatile double angle_degrees = 30.0;
static volatile float float_seed = 2.5f;

static double degrees_to_radians(double degrees)
{
    return degrees * 3.14159265358979323846 / 180.0;
}

int main(void)
{
    printf("printf on %s\n", SPOOR_EXAMPLE_MACHINE);
    printf("sqrt(2) = %.6f\n", sqrt(2.0));
    double radians = degrees_to_radians(angle_degrees);
    printf("sin(30 deg) = %.4f\n", sin(radians));
    printf("float 2.5*2.5 = %.3f\n", (double)(float_seed * float_seed));

    char line[64];
    int length = snprintf(line, sizeof line, "%8.3e|%-6d|%x", 12345.678, -42, 0xBEEFu);
    printf("snprintf [%s] length %d\n", line, length);

    char *copy = malloc(strlen(line) + 1u);
    if (copy == NULL) {
        printf("malloc failed\n");
        return 1;
    }
    strcpy(copy, line);
    printf("heap copy matches: %s\n", strcmp(copy, line) == 0 ? "yes" : "no");
    free(copy);
    fflush(stdout);
    return 0;
}
