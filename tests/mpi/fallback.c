/* tests/mpi/fallback.c — calls the multilane path must not change: a vector datatype on the
 * root against plain MPI_INT elsewhere (same type signature, different layouts) and on every
 * rank, a user-defined reduction operation (MPI_Reduce is the MPI library's), and
 * collectives on an intercommunicator (always the MPI library's). Exact results. */
#include "mltest.h"

enum { kN = 1000 };

static void my_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((long long*)inout)[i] += ((long long*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int root = size - 1;

  /* A vector: kN ints at stride 2 (every other int of a 2*kN array). */
  MPI_Datatype every_other;
  MPI_Type_vector(kN, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int* strided = mltest_alloc(sizeof(int) * 2 * kN);
  int* dense = mltest_alloc(sizeof(int) * kN);
  for (int i = 0; i < 2 * kN; ++i) strided[i] = rank == root ? (i % 2 ? -1 : 5 * i + 3) : -7;
  for (int i = 0; i < kN; ++i) dense[i] = -7;
  if (rank == root) {
    MLTEST_CHECK_MPI(MPI_Bcast(strided, 1, every_other, root, MPI_COMM_WORLD));
  } else {
    MLTEST_CHECK_MPI(MPI_Bcast(dense, kN, MPI_INT, root, MPI_COMM_WORLD));
    for (int i = 0; i < kN; ++i) {
      if (dense[i] != 10 * i + 3) MLTEST_FAIL("vector bcast: element %d is %d", i, dense[i]);
    }
  }
  /* The vector on every rank: the holes stay untouched. */
  MLTEST_CHECK_MPI(MPI_Bcast(strided, 1, every_other, root, MPI_COMM_WORLD));
  for (int i = 0; i < 2 * kN; ++i) {
    const int want = i % 2 ? (rank == root ? -1 : -7) : 5 * i + 3;
    if (strided[i] != want)
      MLTEST_FAIL("vector bcast everywhere: int %d is %d, not %d", i, strided[i], want);
  }
  /* Gather of vectors into a dense array at the root. */
  int* gathered = mltest_alloc(sizeof(int) * kN * size);
  for (int i = 0; i < 2 * kN; ++i) strided[i] = i % 2 ? -1 : rank * 100000 + i;
  MLTEST_CHECK_MPI(MPI_Gather(strided, 1, every_other, gathered, kN, MPI_INT, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < kN; ++i) {
        if (gathered[r * kN + i] != r * 100000 + 2 * i) {
          MLTEST_FAIL("vector gather: rank %d element %d is %d", r, i, gathered[r * kN + i]);
        }
      }
    }
  }
  MPI_Type_free(&every_other);

  /* A user operation. */
  MPI_Op op;
  MPI_Op_create(my_sum, 1, &op);
  long long mine[3] = {rank, 2 * rank, 1}, total[3] = {0, 0, 0};
  MLTEST_CHECK_MPI(MPI_Reduce(mine, total, 3, MPI_LONG_LONG, op, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    const long long n = size, s = n * (n - 1) / 2;
    if (total[0] != s || total[1] != 2 * s || total[2] != n) {
      MLTEST_FAIL("user op reduce gave %lld %lld %lld", total[0], total[1], total[2]);
    }
  }
  MPI_Op_free(&op);

  /* An intercommunicator between the even and the odd ranks. */
  if (size >= 2) {
    MPI_Comm local, inter;
    const int color = rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MLTEST_CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &inter));
    int local_rank;
    MPI_Comm_rank(local, &local_rank);
    int value[4] = {0, 0, 0, 0};
    int root_arg;
    if (color == 0) {
      root_arg = local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
      if (local_rank == 0) value[0] = 11, value[1] = 22, value[2] = 33, value[3] = 44;
    } else {
      root_arg = 0;
    }
    MLTEST_CHECK_MPI(MPI_Bcast(value, 4, MPI_INT, root_arg, inter));
    if (color == 1 && (value[0] != 11 || value[3] != 44)) {
      MLTEST_FAIL("intercommunicator bcast gave %d %d", value[0], value[3]);
    }
    int remote_size;
    MPI_Comm_remote_size(inter, &remote_size);
    int* all = mltest_alloc(sizeof(int) * remote_size);
    int me = 1000 + rank;
    MLTEST_CHECK_MPI(MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, inter));
    for (int i = 0; i < remote_size; ++i) {
      const int want = 1000 + 2 * i + (1 - color);
      if (all[i] != want)
        MLTEST_FAIL("intercommunicator allgather: %d is %d, not %d", i, all[i], want);
    }
    MLTEST_CHECK_MPI(MPI_Barrier(inter));
    free(all);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
  }
  free(strided);
  free(dense);
  free(gathered);
  return mltest_finish();
}
