/* tests/mpi/mltest.h — what the MPI test programs share: datatypes under test, byte patterns
 * that name their origin, exact checks, and the "No Errors" verdict.
 *
 * A byte of a block is pattern(origin rank, block, byte index, round): a received byte that
 * came from the wrong rank, block or offset, or from an earlier call, differs. Datatypes with
 * holes (MPI_DOUBLE_INT, ...) are compared on their data bytes only (a mask). Every program
 * ends with mltest_finish(): rank 0 prints "No Errors" when no rank saw a mismatch, and the
 * exit status is non-zero otherwise. */
#ifndef MULTILANE_TESTS_MPI_MLTEST_H
#define MULTILANE_TESTS_MPI_MLTEST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  MPI_Datatype type;
  const char* name;
  size_t extent;          /* bytes per element in memory */
  unsigned char mask[32]; /* 1 where a byte of an element is data (all ones when dense) */
} MlType;

/* Atomic: the threads of tests/mpi/thread_multiple.c count into it at once. */
static _Atomic long mltest_errors = 0;

#define MLTEST_FAIL(...)                  \
  do {                                    \
    if (mltest_errors < 10) {             \
      int r_ = -1;                        \
      MPI_Comm_rank(MPI_COMM_WORLD, &r_); \
      fprintf(stderr, "rank %d: ", r_);   \
      fprintf(stderr, __VA_ARGS__);       \
      fprintf(stderr, "\n");              \
    }                                     \
    ++mltest_errors;                      \
  } while (0)

#define MLTEST_CHECK_MPI(call)                                             \
  do {                                                                     \
    int code_ = (call);                                                    \
    if (code_ != MPI_SUCCESS) MLTEST_FAIL("%s returned %d", #call, code_); \
  } while (0)

static inline unsigned char mltest_pattern(int origin, long block, size_t byte, int round) {
  return (unsigned char)(origin * 131 + block * 29 + (long)(byte * 13) + (byte >> 8) + round * 71 +
                         1);
}

static inline MlType mltest_dense(MPI_Datatype type, const char* name, size_t extent) {
  MlType t;
  t.type = type;
  t.name = name;
  t.extent = extent;
  memset(t.mask, 1, sizeof t.mask);
  return t;
}

/* A pair type: data bytes [0, first) and [second, second + second_size). */
static inline MlType mltest_pair(MPI_Datatype type, const char* name, size_t extent, size_t first,
                                 size_t second, size_t second_size) {
  MlType t = mltest_dense(type, name, extent);
  memset(t.mask, 0, sizeof t.mask);
  memset(t.mask, 1, first);
  memset(t.mask + second, 1, second_size);
  return t;
}

struct mltest_double_int {
  double d;
  int i;
};
struct mltest_long_int {
  long l;
  int i;
};
struct mltest_short_int {
  short s;
  int i;
};
struct mltest_long_double_int {
  long double d;
  int i;
};

/* Every predefined datatype of C the tests send; returns how many. */
static inline int mltest_types(MlType* out) {
  int n = 0;
#define MLTEST_DENSE(T, C) out[n++] = mltest_dense(T, #T, sizeof(C))
  MLTEST_DENSE(MPI_CHAR, char);
  MLTEST_DENSE(MPI_SIGNED_CHAR, signed char);
  MLTEST_DENSE(MPI_UNSIGNED_CHAR, unsigned char);
  MLTEST_DENSE(MPI_BYTE, unsigned char);
  MLTEST_DENSE(MPI_WCHAR, wchar_t);
  MLTEST_DENSE(MPI_SHORT, short);
  MLTEST_DENSE(MPI_UNSIGNED_SHORT, unsigned short);
  MLTEST_DENSE(MPI_INT, int);
  MLTEST_DENSE(MPI_UNSIGNED, unsigned);
  MLTEST_DENSE(MPI_LONG, long);
  MLTEST_DENSE(MPI_UNSIGNED_LONG, unsigned long);
  MLTEST_DENSE(MPI_LONG_LONG, long long);
  MLTEST_DENSE(MPI_UNSIGNED_LONG_LONG, unsigned long long);
  MLTEST_DENSE(MPI_FLOAT, float);
  MLTEST_DENSE(MPI_DOUBLE, double);
  MLTEST_DENSE(MPI_LONG_DOUBLE, long double);
  MLTEST_DENSE(MPI_INT8_T, int8_t);
  MLTEST_DENSE(MPI_INT16_T, int16_t);
  MLTEST_DENSE(MPI_INT32_T, int32_t);
  MLTEST_DENSE(MPI_INT64_T, int64_t);
  MLTEST_DENSE(MPI_UINT8_T, uint8_t);
  MLTEST_DENSE(MPI_UINT16_T, uint16_t);
  MLTEST_DENSE(MPI_UINT32_T, uint32_t);
  MLTEST_DENSE(MPI_UINT64_T, uint64_t);
  MLTEST_DENSE(MPI_C_BOOL, _Bool);
  MLTEST_DENSE(MPI_C_FLOAT_COMPLEX, float _Complex);
  MLTEST_DENSE(MPI_C_DOUBLE_COMPLEX, double _Complex);
  MLTEST_DENSE(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex);
  MLTEST_DENSE(MPI_AINT, MPI_Aint);
  MLTEST_DENSE(MPI_OFFSET, MPI_Offset);
  MLTEST_DENSE(MPI_COUNT, MPI_Count);
  MLTEST_DENSE(MPI_2INT, int[2]);
#undef MLTEST_DENSE
  out[n++] = mltest_pair(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(struct mltest_double_int),
                         sizeof(double), offsetof(struct mltest_double_int, i), sizeof(int));
  out[n++] = mltest_pair(MPI_LONG_INT, "MPI_LONG_INT", sizeof(struct mltest_long_int), sizeof(long),
                         offsetof(struct mltest_long_int, i), sizeof(int));
  out[n++] = mltest_pair(MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(struct mltest_short_int),
                         sizeof(short), offsetof(struct mltest_short_int, i), sizeof(int));
  out[n++] =
      mltest_pair(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(struct mltest_long_double_int),
                  sizeof(long double), offsetof(struct mltest_long_double_int, i), sizeof(int));
  return n;
}

/* Fills `count` elements (block `block` of `origin`) with the pattern. */
static inline void mltest_fill(unsigned char* p, const MlType* t, long count, int origin,
                               long block, int round) {
  for (size_t b = 0; b < (size_t)count * t->extent; ++b)
    p[b] = mltest_pattern(origin, block, b, round);
}

/* Checks the data bytes of `count` elements against the pattern; `what` names the call. */
static inline void mltest_expect(const unsigned char* p, const MlType* t, long count, int origin,
                                 long block, int round, const char* what) {
  for (size_t b = 0; b < (size_t)count * t->extent; ++b) {
    if (!t->mask[b % t->extent]) continue;
    const unsigned char want = mltest_pattern(origin, block, b, round);
    if (p[b] != want) {
      MLTEST_FAIL("%s %s count %ld: block %ld byte %zu is %u, expected %u (from rank %d)", what,
                  t->name, count, block, b, p[b], want, origin);
      return;
    }
  }
}

static inline void* mltest_alloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (p == NULL) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return p;
}

/* Collects every rank's error count; rank 0 prints the verdict. Finalizes MPI. */
static inline int mltest_finish(void) {
  long total = 0;
  long mine = mltest_errors;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0) {
      printf("No Errors\n");
    } else {
      printf("Found %ld errors\n", total);
    }
    fflush(stdout);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

#endif
