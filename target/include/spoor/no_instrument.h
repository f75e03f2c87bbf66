/*
 * SPOOR_NO_INSTRUMENT marks every function of the target library, static inline helpers
 * included: none of them is instrumented when the application compiles the library with its
 * own -finstrument-functions or -pg (a Make fragment adding the library's sources to the
 * application's, sources copied into an IDE project). The recorder's hooks would otherwise call
 * themselves, and the fault path would record into the ring it captures. GCC and clang honour
 * the attribute for both kinds of instrumentation (tests/e2e/test_target_instrument.py checks
 * the objects the compiler makes).
 */
#ifndef SPOOR_NO_INSTRUMENT_H
#define SPOOR_NO_INSTRUMENT_H

#define SPOOR_NO_INSTRUMENT __attribute__((no_instrument_function))

#endif
