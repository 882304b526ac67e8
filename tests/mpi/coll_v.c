/* tests/mpi/coll_v.c — MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv and MPI_Alltoallv with uneven
 * counts (a ramp, every other rank empty, one block of 1 MiB, all empty), displacements in rank
 * order and in reverse order with gaps, a datatype with holes (an int resized to 8 bytes) on
 * one side and plain ints on the other (matching signatures), roots 0 and last, and
 * MPI_IN_PLACE where MPI allows it; MPI_Iallgatherv whose datatype is freed before the wait;
 * MPI_Igatherv, MPI_Iscatterv and MPI_Ialltoallv in flight together with an MPI_Ibcast started
 * after them and a blocking MPI_Allreduce, their datatypes freed before the wait.
 * Every int of every receive buffer is checked: the data where the displacements say, and
 * the gaps and holes untouched. All of it on MPI_COMM_WORLD, then on a communicator that
 * MPI_Comm_split made with the ranks in reverse order. Prints "No Errors". */
#include "mltest.h"

enum { kSentinel = -7, kHuge = 262147 }; /* one block of a little over 1 MiB */

typedef struct {
  MPI_Datatype type;
  int stride; /* ints from one element to the next in memory */
} VType;

static int value(int origin, int dest, int k, int round) {
  return origin * 1000003 + dest * 7919 + k * 13 + round * 101 + 1;
}

/* Block sizes of pattern `pattern` for p ranks. */
static int count_of(int pattern, int i, int p) {
  switch (pattern) {
    case 0:
      return (i * 5 + 1) % 7;
    case 1:
      return i % 2 ? 0 : 3;
    case 2:
      return i == p - 1 ? kHuge : 1;
    default:
      return 0;
  }
}

/* Displacements (elements) of `counts`: in rank order end to end, or in reverse order with a
 * gap of 2 elements; returns the elements the layout spans. */
static int lay_out(const int* counts, int p, int reversed, int* displs) {
  int at = 0;
  for (int n = 0; n < p; ++n) {
    const int i = reversed ? p - 1 - n : n;
    displs[i] = at;
    at += counts[i] + (reversed ? 2 : 0);
  }
  return at;
}

static int* filled(long ints) {
  int* b = malloc((size_t)(ints > 0 ? ints : 1) * sizeof(int));
  for (long i = 0; i < ints; ++i) b[i] = kSentinel;
  return b;
}

static void put(int* buf, const VType* t, int displ, int k, int v) {
  buf[(long)(displ + k) * t->stride] = v;
}

static void expect_equal(const int* got, const int* want, long ints, const char* what, int round) {
  for (long i = 0; i < ints; ++i) {
    if (got[i] != want[i]) {
      MLTEST_FAIL("%s (round %d): int %ld is %d, expected %d", what, round, i, got[i], want[i]);
      return;
    }
  }
}

/* What a gathering rank must hold: block i of rank i's values for `dest` where the
 * displacements say, sentinels elsewhere. */
static int* gathered(const VType* t, const int* counts, const int* displs, int p, long span,
                     int dest, int round) {
  int* want = filled(span);
  for (int i = 0; i < p; ++i) {
    for (int k = 0; k < counts[i]; ++k) put(want, t, displs[i], k, value(i, dest, k, round));
  }
  return want;
}

static void gatherv(MPI_Comm comm, int root, const int* counts, int reversed, const VType* rt,
                    const VType* st, int in_place, int round) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* displs = malloc((size_t)p * sizeof(int));
  const long span = (long)lay_out(counts, p, reversed, displs) * rt->stride;
  int* send = filled((long)counts[rank] * st->stride);
  for (int k = 0; k < counts[rank]; ++k) put(send, st, 0, k, value(rank, root, k, round));
  int* recv = filled(span);
  int* want = gathered(rt, counts, displs, p, span, root, round);
  const int here = in_place && rank == root;
  if (here) {
    for (int k = 0; k < counts[rank]; ++k)
      put(recv, rt, displs[rank], k, value(rank, root, k, round));
  }
  MLTEST_CHECK_MPI(MPI_Gatherv(here ? MPI_IN_PLACE : send, counts[rank], st->type, recv, counts,
                               displs, rt->type, root, comm));
  if (rank == root) expect_equal(recv, want, span, "MPI_Gatherv", round);
  free(displs), free(send), free(recv), free(want);
}

static void scatterv(MPI_Comm comm, int root, const int* counts, int reversed, const VType* rt,
                     const VType* st, int in_place, int round) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* displs = malloc((size_t)p * sizeof(int));
  const long span = (long)lay_out(counts, p, reversed, displs) * st->stride;
  int* send = filled(span);
  for (int i = 0; i < p; ++i) {
    for (int k = 0; k < counts[i]; ++k) put(send, st, displs[i], k, value(root, i, k, round));
  }
  int* before = filled(span);
  memcpy(before, send, (size_t)span * sizeof(int));
  const long mine = (long)counts[rank] * rt->stride;
  int* recv = filled(mine);
  int* want = filled(mine);
  for (int k = 0; k < counts[rank]; ++k) put(want, rt, 0, k, value(root, rank, k, round));
  const int here = in_place && rank == root;
  MLTEST_CHECK_MPI(MPI_Scatterv(send, counts, displs, st->type, here ? MPI_IN_PLACE : recv,
                                counts[rank], rt->type, root, comm));
  if (!here) expect_equal(recv, want, mine, "MPI_Scatterv", round);
  if (rank == root) expect_equal(send, before, span, "MPI_Scatterv's send buffer", round);
  free(displs), free(send), free(before), free(recv), free(want);
}

static void allgatherv(MPI_Comm comm, const int* counts, int reversed, const VType* rt,
                       const VType* st, int in_place, int round) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* displs = malloc((size_t)p * sizeof(int));
  const long span = (long)lay_out(counts, p, reversed, displs) * rt->stride;
  int* send = filled((long)counts[rank] * st->stride);
  for (int k = 0; k < counts[rank]; ++k) put(send, st, 0, k, value(rank, 0, k, round));
  int* recv = filled(span);
  int* want = gathered(rt, counts, displs, p, span, 0, round);
  if (in_place) {
    for (int k = 0; k < counts[rank]; ++k) put(recv, rt, displs[rank], k, value(rank, 0, k, round));
  }
  MLTEST_CHECK_MPI(MPI_Allgatherv(in_place ? MPI_IN_PLACE : send, counts[rank], st->type, recv,
                                  counts, displs, rt->type, comm));
  expect_equal(recv, want, span, "MPI_Allgatherv", round);
  free(displs), free(send), free(recv), free(want);
}

/* MPI_Iallgatherv into blocks of a datatype with holes that the program frees before the wait
 * (MPI allows it). */
static void iallgatherv(MPI_Comm comm, const int* counts, int reversed, MPI_Datatype holes,
                        int round) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  MPI_Datatype freed;
  MPI_Type_dup(holes, &freed);
  const VType rt = {freed, 2};
  int* displs = malloc((size_t)p * sizeof(int));
  const long span = (long)lay_out(counts, p, reversed, displs) * rt.stride;
  int* send = filled(counts[rank]);
  for (int k = 0; k < counts[rank]; ++k) send[k] = value(rank, 1, k, round);
  int* recv = filled(span);
  int* want = gathered(&rt, counts, displs, p, span, 1, round);
  MPI_Request request;
  MLTEST_CHECK_MPI(
      MPI_Iallgatherv(send, counts[rank], MPI_INT, recv, counts, displs, freed, comm, &request));
  MPI_Type_free(&freed);
  MLTEST_CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  expect_equal(recv, want, span, "MPI_Iallgatherv", round);
  free(displs), free(send), free(recv), free(want);
}

/* What rank i sends rank j: symmetric when in place (MPI requires the send and receive
 * signatures of a pair to match, and in place both are the receive side's). */
static int pair_count(int i, int j, int p, int pattern, int symmetric) {
  if (pattern == 2 && i == 0 && j == p - 1) return kHuge;
  if (pattern == 2 && symmetric && i == p - 1 && j == 0) return kHuge;
  if (pattern == 3) return 0;
  return symmetric ? (i + j + pattern) % 4 : (i + 2 * j + pattern) % 4;
}

static void alltoallv(MPI_Comm comm, int pattern, int reversed, const VType* rt, const VType* st,
                      int in_place, int round) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* scounts = malloc((size_t)p * sizeof(int));
  int* rcounts = malloc((size_t)p * sizeof(int));
  int* sdispls = malloc((size_t)p * sizeof(int));
  int* rdispls = malloc((size_t)p * sizeof(int));
  for (int j = 0; j < p; ++j) {
    scounts[j] = pair_count(rank, j, p, pattern, in_place);
    rcounts[j] = pair_count(j, rank, p, pattern, in_place);
  }
  const long sspan = (long)lay_out(scounts, p, reversed, sdispls) * st->stride;
  const long rspan = (long)lay_out(rcounts, p, !reversed, rdispls) * rt->stride;
  int* send = filled(sspan);
  for (int j = 0; j < p; ++j) {
    for (int k = 0; k < scounts[j]; ++k) put(send, st, sdispls[j], k, value(rank, j, k, round));
  }
  int* recv = filled(rspan);
  int* want = filled(rspan);
  for (int j = 0; j < p; ++j) {
    for (int k = 0; k < rcounts[j]; ++k) put(want, rt, rdispls[j], k, value(j, rank, k, round));
    /* In place, the input is the receive buffer: block j is what goes to rank j. */
    if (in_place) {
      for (int k = 0; k < rcounts[j]; ++k) put(recv, rt, rdispls[j], k, value(rank, j, k, round));
    }
  }
  MLTEST_CHECK_MPI(MPI_Alltoallv(in_place ? MPI_IN_PLACE : send, scounts, sdispls, st->type, recv,
                                 rcounts, rdispls, rt->type, comm));
  expect_equal(recv, want, rspan, "MPI_Alltoallv", round);
  free(scounts), free(rcounts), free(sdispls), free(rdispls), free(send), free(recv), free(want);
}

/* MPI_Igatherv (root 0), MPI_Iscatterv (root p-1) and MPI_Ialltoallv in flight at once, then
 * an MPI_Ibcast and a blocking MPI_Allreduce on the same communicator (multilane numbers a
 * communicator's calls in the order they start, and these v-forms start only once their counts
 * arrived), completed by one MPI_Waitall in reverse order. The datatype with holes each uses is
 * a duplicate the program frees before the wait. */
static void nonblocking_v_forms(MPI_Comm comm, int pattern, int reversed, MPI_Datatype holes,
                                int round) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  MPI_Datatype freed;
  MPI_Type_dup(holes, &freed);
  const VType rt = {freed, 2}, ints = {MPI_INT, 1};
  int* counts = malloc((size_t)p * sizeof(int));
  for (int i = 0; i < p; ++i) counts[i] = count_of(pattern, i, p);
  int* displs = malloc((size_t)p * sizeof(int));
  const long span = (long)lay_out(counts, p, reversed, displs) * rt.stride;
  MPI_Request requests[4];
  /* igatherv to root 0 into blocks of the freed type */
  int* gsend = filled(counts[rank]);
  for (int k = 0; k < counts[rank]; ++k) gsend[k] = value(rank, 0, k, round);
  int* grecv = filled(span);
  int* gwant = gathered(&rt, counts, displs, p, span, 0, round);
  MLTEST_CHECK_MPI(MPI_Igatherv(gsend, counts[rank], MPI_INT, grecv, counts, displs, freed, 0, comm,
                                &requests[0]));
  /* iscatterv from root p-1 into the freed type */
  const int sroot = p - 1;
  const long sspan = (long)lay_out(counts, p, reversed, displs);
  int* ssend = filled(sspan);
  for (int i = 0; i < p; ++i) {
    for (int k = 0; k < counts[i]; ++k) put(ssend, &ints, displs[i], k, value(sroot, i, k, round));
  }
  const long mine = (long)counts[rank] * rt.stride;
  int* srecv = filled(mine);
  int* swant = filled(mine);
  for (int k = 0; k < counts[rank]; ++k) put(swant, &rt, 0, k, value(sroot, rank, k, round));
  MLTEST_CHECK_MPI(MPI_Iscatterv(ssend, counts, displs, MPI_INT, srecv, counts[rank], freed, sroot,
                                 comm, &requests[1]));
  /* ialltoallv from plain ints into the freed type */
  int* scounts = malloc((size_t)p * sizeof(int));
  int* rcounts = malloc((size_t)p * sizeof(int));
  int* sdispls = malloc((size_t)p * sizeof(int));
  int* rdispls = malloc((size_t)p * sizeof(int));
  for (int j = 0; j < p; ++j) {
    scounts[j] = pair_count(rank, j, p, pattern, 0);
    rcounts[j] = pair_count(j, rank, p, pattern, 0);
  }
  const long aspan = lay_out(scounts, p, reversed, sdispls);
  const long rspan = (long)lay_out(rcounts, p, !reversed, rdispls) * rt.stride;
  int* asend = filled(aspan);
  for (int j = 0; j < p; ++j) {
    for (int k = 0; k < scounts[j]; ++k) put(asend, &ints, sdispls[j], k, value(rank, j, k, round));
  }
  int* arecv = filled(rspan);
  int* awant = filled(rspan);
  for (int j = 0; j < p; ++j) {
    for (int k = 0; k < rcounts[j]; ++k) put(awant, &rt, rdispls[j], k, value(j, rank, k, round));
  }
  MLTEST_CHECK_MPI(MPI_Ialltoallv(asend, scounts, sdispls, MPI_INT, arecv, rcounts, rdispls, freed,
                                  comm, &requests[2]));
  MPI_Type_free(&freed);
  /* a later nonblocking and a blocking call on the same communicator */
  int word[4] = {0, 0, 0, 0};
  if (rank == 0) word[0] = round, word[3] = -round;
  MLTEST_CHECK_MPI(MPI_Ibcast(word, 4, MPI_INT, 0, comm, &requests[3]));
  int one = 1, ranks = 0;
  MLTEST_CHECK_MPI(MPI_Allreduce(&one, &ranks, 1, MPI_INT, MPI_SUM, comm));
  if (ranks != p)
    MLTEST_FAIL("MPI_Allreduce beside the v-forms (round %d): %d, not %d", round, ranks, p);
  MPI_Request backwards[4] = {requests[3], requests[2], requests[1], requests[0]};
  MPI_Status statuses[4];
  MLTEST_CHECK_MPI(MPI_Waitall(4, backwards, statuses));
  if (rank == 0) expect_equal(grecv, gwant, span, "MPI_Igatherv", round);
  expect_equal(srecv, swant, mine, "MPI_Iscatterv", round);
  expect_equal(arecv, awant, rspan, "MPI_Ialltoallv", round);
  if (word[0] != round || word[3] != -round)
    MLTEST_FAIL("MPI_Ibcast beside the v-forms (round %d)", round);
  free(counts), free(displs), free(gsend), free(grecv), free(gwant), free(ssend), free(srecv);
  free(swant), free(scounts), free(rcounts), free(sdispls), free(rdispls), free(asend);
  free(arecv), free(awant);
}

/* Every v-form with every count pattern, layout, side of the datatype with holes, root and
 * MPI_IN_PLACE choice, on `comm`. */
static void all_v_forms(MPI_Comm comm, MPI_Datatype spaced, int* round) {
  int p;
  MPI_Comm_size(comm, &p);
  const VType ints = {MPI_INT, 1}, holes = {spaced, 2};
  int* counts = malloc((size_t)p * sizeof(int));
  for (int pattern = 0; pattern < 4; ++pattern) {
    for (int i = 0; i < p; ++i) counts[i] = count_of(pattern, i, p);
    for (int reversed = 0; reversed < 2; ++reversed) {
      for (int in_place = 0; in_place < 2; ++in_place) {
        /* The datatype with holes on the side the displacements describe, then on the other. */
        for (int typed = 0; typed < 2; ++typed) {
          const VType* blocks = typed ? &holes : &ints;
          const VType* single = typed ? &ints : &holes;
          for (int root = 0; root < p; root += (p > 1 ? p - 1 : 1)) {
            gatherv(comm, root, counts, reversed, blocks, single, in_place, ++*round);
            scatterv(comm, root, counts, reversed, single, blocks, in_place, ++*round);
          }
          allgatherv(comm, counts, reversed, blocks, single, in_place, ++*round);
          alltoallv(comm, pattern, reversed, blocks, single, in_place, ++*round);
          alltoallv(comm, pattern, reversed, single, blocks, in_place, ++*round);
        }
        if (!in_place) iallgatherv(comm, counts, reversed, spaced, ++*round);
        if (!in_place) nonblocking_v_forms(comm, pattern, reversed, spaced, ++*round);
      }
    }
  }
  free(counts);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Datatype spaced;
  MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &spaced);
  MPI_Type_commit(&spaced);
  int round = 0;
  all_v_forms(MPI_COMM_WORLD, spaced, &round);
  /* The ranks in reverse order: rank r of the new communicator is world rank p - 1 - r. */
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, p - rank, &reversed);
  all_v_forms(reversed, spaced, &round);
  MPI_Comm_free(&reversed);
  MPI_Type_free(&spaced);
  return mltest_finish();
}
