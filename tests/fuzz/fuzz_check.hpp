// tests/fuzz/fuzz_check.hpp — what a fuzz target asserts beyond "no crash": a property that
// fails prints the target's words and aborts, which libFuzzer reports as a crash with the
// input, and the corpus replay (replay_main.cpp) as a failed test.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                                    \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      std::fprintf(stderr, "%s:%d: %s (%s does not hold)\n", __FILE__, __LINE__, what, \
                   #condition);                                                        \
      std::abort();                                                                    \
    }                                                                                  \
  } while (false)
