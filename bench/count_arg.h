/* bench/count_arg.h — a count on a bench program's command line (after_setup.c, pass_through.c):
 * a whole number in 1..most, or a message naming the program, the argument and its range, and
 * exit status 2. */
#ifndef MULTILANE_BENCH_COUNT_ARG_H
#define MULTILANE_BENCH_COUNT_ARG_H

#include <stdio.h>
#include <stdlib.h>

static inline int count_arg(const char* program, const char* text, const char* what, int most) {
  char* end = NULL;
  const long value = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < 1 || value > most) {
    fprintf(stderr, "%s: %s must be 1..%d, not '%s'\n", program, what, most, text);
    exit(2);
  }
  return (int)value;
}

#endif
