/* bench/mpi_peer.c — Open MPI's collectives timed exactly like `multilane bench` times ours, so
 * one script can put the two side by side (bench/compare-openmpi.sh, docs/performance.md).
 *
 *   mpirun -n 8 --mca btl tcp,self build/bench/mpi_peer --collective bcast --sizes 1MiB,64MiB
 *          [--iterations K] [--repetitions R] [--root R] [--check]
 *   mpirun -n 8 ... mpi_peer --collective allgatherv|alltoallv --counts LIST [...]
 *   mpirun -n 8 ... mpi_peer --collective allreduce --sizes 16MiB --threads 2
 *
 * Method (tools/collective_benchmark.hpp): one warm-up call (with --check, that call runs
 * on patterned buffers and every rank verifies every byte it received); then per repetition an
 * MPI_Barrier, K calls back to back timed with MPI_Wtime, the per-call time of every rank, and
 * the maximum over ranks (MPI_Reduce MAX at rank 0); the result is the median over repetitions.
 * K = 0 (default) picks K from the size like multilane: about 32 MiB per repetition, 1..20 calls.
 *
 * `size` means what it means in multilane/collective.hpp (MPI's count of MPI_BYTE): the whole
 * message for bcast, one rank's block for scatter, gather, allgather and alltoall. The v-forms
 * take their blocks' bytes from --counts, as `multilane bench --counts LIST` does (p of them
 * for allgatherv; p² for alltoallv, row = sender), blocks packed in rank order; their `size`
 * is the largest block.
 *
 * With --threads N (MPI_THREAD_MULTIPLE), N threads of every rank each call the collective on a
 * communicator of their own (duplicates of MPI_COMM_WORLD, own buffers) at the same time: a
 * repetition's time runs from the barrier until every thread made its K calls, divided by K, so
 * it is the time of N calls at once. Against --threads 1 it shows whether calls on different
 * communicators overlap (N x the time: they are serialised).
 *
 * Rank 0 prints the JSON of `multilane bench --json` with algorithm "openmpi":
 *   {"kind":"collective","collective":..,"ranks":..,"platform":"mpi","library":..,
 *    "results":[{"algorithm":"openmpi","size":..,"iterations":..,"times_s":[..],"median_s":..,
 *                "checked":..,"check_ok":..}]}
 * Exit status: 0, 1 when a --check failed, 2 on bad arguments (message on stderr). */
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxSizes = 64, kMaxRepetitions = 1000, kMaxIterations = 1000000, kMaxThreads = 16 };

typedef enum {
  kBcast,
  kScatter,
  kGather,
  kAllgather,
  kAlltoall,
  kReduce,
  kAllreduce,
  kReduceScatter,
  kScan,
  kExscan,
  kAllgatherv,
  kAlltoallv,
  kPingpong, /* not a collective: ranks 0 and 1 send and receive, the time is one round trip */
  kNoCollective
} Collective;

static const char* const kCollectiveNames[] = {
    "bcast",          "scatter", "gather", "allgather",  "alltoall",  "reduce",  "allreduce",
    "reduce-scatter", "scan",    "exscan", "allgatherv", "alltoallv", "pingpong"};

/* Reductions combine floats with MPI_SUM (as `multilane bench --type float --op sum`, and the
 * OSU micro-benchmarks); sizes in bytes are cut to whole floats. */
static int is_reduction(Collective c) {
  return c == kReduce || c == kAllreduce || c == kReduceScatter || c == kScan || c == kExscan;
}

typedef struct {
  Collective collective;
  uint64_t sizes[kMaxSizes];
  int num_sizes;
  int iterations; /* 0: from the size */
  int repetitions;
  int root;
  int check;
  uint64_t* counts; /* the v-forms: bytes per block (p, or p² for alltoallv) */
  int num_counts;
  int threads; /* calls at once, each on its own communicator; 0: MPI_COMM_WORLD, this thread */
} Options;

typedef struct {
  unsigned char* send;
  unsigned char* recv;
  size_t send_bytes;
  size_t recv_bytes;
  /* The v-forms: counts and displacements in bytes (MPI_BYTE). */
  int* sendcounts;
  int* sdispls;
  int* recvcounts;
  int* rdispls;
} Buffers;

static int is_v_form(Collective c) {
  return c == kAllgatherv || c == kAlltoallv;
}

/* ---- arguments ---------------------------------------------------------------------------- */

/* Parses "4096", "64KiB", "1MB", "2 GiB" (binary and decimal units as multilane's parse_size;
 * whole numbers only). Returns 0 and sets *bytes, or -1. */
static int parse_size(const char* text, uint64_t* bytes) {
  static const struct {
    const char* name;
    uint64_t scale;
  } units[] = {{"", 1},
               {"B", 1},
               {"KB", 1000},
               {"kB", 1000},
               {"MB", 1000000},
               {"GB", 1000000000},
               {"KiB", 1ull << 10},
               {"MiB", 1ull << 20},
               {"GiB", 1ull << 30}};
  if (*text < '0' || *text > '9') return -1;
  errno = 0;
  char* end = NULL;
  const unsigned long long number = strtoull(text, &end, 10);
  if (errno == ERANGE) return -1;
  while (*end == ' ') ++end;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; ++i) {
    if (strcmp(end, units[i].name) == 0) {
      if (number > UINT64_MAX / units[i].scale) return -1;
      *bytes = number * units[i].scale;
      return 0;
    }
  }
  return -1;
}

/* Splits a comma-separated size list into o->sizes. Returns 0 or -1 (message printed). */
static int parse_size_list(const char* text, Options* o, int print) {
  char copy[1024];
  if (strlen(text) >= sizeof copy) {
    if (print) fprintf(stderr, "mpi_peer: --sizes: list longer than %zu characters\n", sizeof copy);
    return -1;
  }
  strcpy(copy, text);
  o->num_sizes = 0;
  char* saveptr = NULL;
  for (char* token = strtok_r(copy, ",", &saveptr); token != NULL;
       token = strtok_r(NULL, ",", &saveptr)) {
    if (o->num_sizes == kMaxSizes) {
      if (print) fprintf(stderr, "mpi_peer: --sizes: more than %d sizes\n", kMaxSizes);
      return -1;
    }
    while (*token == ' ') ++token;
    uint64_t bytes = 0;
    if (parse_size(token, &bytes) != 0) {
      if (print) {
        fprintf(stderr,
                "mpi_peer: --sizes: size \"%s\" does not parse: expected a whole number with an "
                "optional unit B, KB, MB, GB, KiB, MiB or GiB, e.g. 1KiB,64MiB\n",
                token);
      }
      return -1;
    }
    if (bytes > INT_MAX) {
      if (print) {
        fprintf(stderr, "mpi_peer: --sizes: size %s is above MPI's int count limit of %d bytes\n",
                token, INT_MAX);
      }
      return -1;
    }
    o->sizes[o->num_sizes++] = bytes;
  }
  if (o->num_sizes == 0) {
    if (print) fprintf(stderr, "mpi_peer: --sizes: empty list; expected e.g. 1KiB,64MiB\n");
    return -1;
  }
  return 0;
}

/* Splits --counts' comma-separated sizes into o->counts. Returns 0 or -1 (message printed). */
static int parse_counts(const char* text, Options* o, int print) {
  o->num_counts = 0;
  o->counts = malloc((strlen(text) / 2 + 1) * sizeof *o->counts);
  char* copy = strdup(text);
  char* saveptr = NULL;
  int status = 0;
  for (char* token = strtok_r(copy, ",", &saveptr); token != NULL && status == 0;
       token = strtok_r(NULL, ",", &saveptr)) {
    while (*token == ' ') ++token;
    uint64_t bytes = 0;
    if (parse_size(token, &bytes) != 0 || bytes > INT_MAX) {
      if (print) {
        fprintf(stderr,
                "mpi_peer: --counts: \"%s\" is not a size of at most %d bytes (e.g. 1MiB)\n", token,
                INT_MAX);
      }
      status = -1;
    }
    o->counts[o->num_counts++] = bytes;
  }
  free(copy);
  return status;
}

/* Parses a whole number in [low, high]. Returns 0 or -1 (message printed). */
static int parse_int(const char* option, const char* text, int low, int high, int* value,
                     int print) {
  errno = 0;
  char* end = NULL;
  const long number = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno == ERANGE || number < low || number > high) {
    if (print) {
      fprintf(stderr, "mpi_peer: %s \"%s\": expected a whole number in %d..%d\n", option, text, low,
              high);
    }
    return -1;
  }
  *value = (int)number;
  return 0;
}

static void print_usage(void) {
  fprintf(stderr,
          "usage: mpi_peer --collective bcast|scatter|gather|allgather|alltoall|reduce|allreduce|\n"
          "                             reduce-scatter|scan|exscan|pingpong --sizes LIST\n"
          "                [--iterations K] [--repetitions R] [--root R] [--threads N] [--check]\n"
          "       mpi_peer --collective allgatherv|alltoallv --counts LIST [...]\n");
}

/* Every rank parses the same arguments; only rank 0 prints. Returns 0 or -1. */
static int parse_arguments(int argc, char** argv, int ranks, int print, Options* o) {
  memset(o, 0, sizeof *o);
  o->collective = kBcast;
  o->repetitions = 5;
  if (parse_size_list("1KiB,1MiB", o, print) != 0) return -1;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (strcmp(arg, "--check") == 0) {
      o->check = 1;
      continue;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      if (print) print_usage();
      return -1;
    }
    if (i + 1 == argc) {
      if (print) {
        fprintf(stderr, "mpi_peer: unknown option or missing value: %s\n", arg);
        print_usage();
      }
      return -1;
    }
    const char* value = argv[++i];
    int status = 0;
    if (strcmp(arg, "--collective") == 0) {
      o->collective = kNoCollective;
      for (int c = 0; c < kNoCollective; ++c) {
        if (strcmp(value, kCollectiveNames[c]) == 0) o->collective = (Collective)c;
      }
      if (o->collective == kNoCollective) {
        if (print) {
          fprintf(stderr,
                  "mpi_peer: --collective \"%s\": choose one of bcast, scatter, gather, "
                  "allgather, alltoall, reduce, allreduce, reduce-scatter, scan, exscan, "
                  "allgatherv, alltoallv, pingpong\n",
                  value);
        }
        status = -1;
      }
    } else if (strcmp(arg, "--sizes") == 0) {
      status = parse_size_list(value, o, print);
    } else if (strcmp(arg, "--counts") == 0) {
      status = parse_counts(value, o, print);
    } else if (strcmp(arg, "--iterations") == 0) {
      status = parse_int(arg, value, 0, kMaxIterations, &o->iterations, print);
    } else if (strcmp(arg, "--repetitions") == 0) {
      status = parse_int(arg, value, 1, kMaxRepetitions, &o->repetitions, print);
    } else if (strcmp(arg, "--root") == 0) {
      status = parse_int(arg, value, 0, ranks - 1, &o->root, print);
    } else if (strcmp(arg, "--threads") == 0) {
      status = parse_int(arg, value, 1, kMaxThreads, &o->threads, print);
    } else {
      if (print) {
        fprintf(stderr, "mpi_peer: unknown option: %s\n", arg);
        print_usage();
      }
      status = -1;
    }
    if (status != 0) return -1;
  }
  if (o->collective == kPingpong && o->threads > 0) {
    if (print) fprintf(stderr, "mpi_peer: --threads works with collectives, not pingpong\n");
    return -1;
  }
  if (o->collective == kPingpong && ranks < 2) {
    if (print) fprintf(stderr, "mpi_peer: --collective pingpong needs 2 ranks or more\n");
    return -1;
  }
  if (is_v_form(o->collective)) {
    const int wanted = o->collective == kAlltoallv ? ranks * ranks : ranks;
    if (o->num_counts != wanted) {
      if (print) {
        fprintf(stderr,
                "mpi_peer: --collective %s on %d ranks needs --counts of %d sizes, got %d\n",
                kCollectiveNames[o->collective], ranks, wanted, o->num_counts);
      }
      return -1;
    }
    /* One measurement: its size is the largest block. */
    o->num_sizes = 1;
    o->sizes[0] = 0;
    for (int i = 0; i < o->num_counts; ++i) {
      if (o->counts[i] > o->sizes[0]) o->sizes[0] = o->counts[i];
    }
  }
  return 0;
}

/* ---- buffers and the check ---------------------------------------------------------------- */

/* Byte `offset` of rank `origin`'s input: differs for shifted blocks, swapped ranks, repeats. */
static unsigned char pattern_byte(int origin, uint64_t offset) {
  const uint64_t x = offset * 0x9e3779b1u + (uint64_t)origin * 0x85ebca6bu;
  return (unsigned char)((x ^ (x >> 13) ^ (offset >> 8)) & 0xff);
}

/* The v-forms' counts and displacements of `rank`, packed in rank order. */
static void lay_out_v_form(Collective c, const Options* o, int rank, int ranks, Buffers* b) {
  b->sendcounts = calloc((size_t)ranks, sizeof(int));
  b->sdispls = calloc((size_t)ranks, sizeof(int));
  b->recvcounts = calloc((size_t)ranks, sizeof(int));
  b->rdispls = calloc((size_t)ranks, sizeof(int));
  size_t sent = 0, received = 0;
  for (int j = 0; j < ranks; ++j) {
    /* An allgatherv sends its one block: sendcounts[rank]. */
    const uint64_t out =
        c == kAlltoallv ? o->counts[rank * ranks + j] : (j == rank ? o->counts[rank] : 0);
    const uint64_t in = c == kAlltoallv ? o->counts[j * ranks + rank] : o->counts[j];
    b->sendcounts[j] = (int)out;
    b->sdispls[j] = (int)sent;
    b->recvcounts[j] = (int)in;
    b->rdispls[j] = (int)received;
    sent += out;
    received += in;
  }
  if (sent > INT_MAX || received > INT_MAX) {
    fprintf(stderr, "mpi_peer: rank %d: the v-form's buffers exceed MPI's int displacements\n",
            rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  b->send_bytes = sent;
  b->recv_bytes = received;
}

/* Buffer sizes of multilane/collective.hpp (MPI semantics). */
static Buffers allocate_buffers(const Options* o, int rank, int ranks, uint64_t size) {
  const Collective c = o->collective;
  const int root = o->root;
  const size_t block = (size_t)size;
  const size_t all = block * (size_t)ranks;
  Buffers b = {NULL, NULL, 0, 0, NULL, NULL, NULL, NULL};
  switch (c) {
    case kBcast:
      b.recv_bytes = block;
      break;
    case kScatter:
      b.send_bytes = rank == root ? all : 0;
      b.recv_bytes = block;
      break;
    case kGather:
      b.send_bytes = block;
      b.recv_bytes = rank == root ? all : 0;
      break;
    case kAllgather:
      b.send_bytes = block;
      b.recv_bytes = all;
      break;
    case kAlltoall:
    case kNoCollective:
      b.send_bytes = all;
      b.recv_bytes = all;
      break;
    case kReduce:
      b.send_bytes = block;
      b.recv_bytes = rank == root ? block : 0;
      break;
    case kAllreduce:
    case kScan:
    case kExscan:
      b.send_bytes = block;
      b.recv_bytes = block;
      break;
    case kReduceScatter:
      b.send_bytes = all;
      b.recv_bytes = block;
      break;
    case kPingpong:
      b.send_bytes = rank < 2 ? block : 0;
      b.recv_bytes = rank < 2 ? block : 0;
      break;
    case kAllgatherv:
    case kAlltoallv:
      lay_out_v_form(c, o, rank, ranks, &b);
      break;
  }
  /* One byte at least, so that malloc(0) never stands for an allocation failure. */
  b.send = malloc(b.send_bytes + 1);
  b.recv = malloc(b.recv_bytes + 1);
  if (b.send == NULL || b.recv == NULL) {
    fprintf(stderr, "mpi_peer: rank %d: cannot allocate %zu + %zu bytes of buffers\n", rank,
            b.send_bytes, b.recv_bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  /* Touch every page now, outside the timing (multilane's std::vector buffers are zeroed). */
  memset(b.send, 0, b.send_bytes + 1);
  memset(b.recv, 0, b.recv_bytes + 1);
  return b;
}

static void free_buffers(Buffers* b) {
  free(b->send);
  free(b->recv);
  free(b->sendcounts);
  free(b->sdispls);
  free(b->recvcounts);
  free(b->rdispls);
}

/* Input float `i` of `rank`: small integers, so that every sum is exact in any order. */
static float reduction_input(int rank, uint64_t i) {
  return (float)((i * 7 + (uint64_t)rank * 3) % 17) - 8.0f;
}

/* Fills the input with the pattern (bcast's input is the root's receive buffer) and poisons
 * every receive buffer. */
static void fill_for_check(Collective c, int rank, int root, Buffers* b) {
  memset(b->recv, 0xa5, b->recv_bytes);
  if (is_reduction(c)) {
    for (size_t i = 0; i < b->send_bytes / sizeof(float); ++i) {
      const float v = reduction_input(rank, i);
      memcpy(b->send + i * sizeof(float), &v, sizeof v);
    }
    return;
  }
  const int bcast_root = c == kBcast && rank == root;
  unsigned char* input = bcast_root ? b->recv : b->send;
  const size_t length = bcast_root ? b->recv_bytes : b->send_bytes;
  for (size_t i = 0; i < length; ++i) input[i] = pattern_byte(rank, i);
}

/* Which rank's input, and where in it, receive byte `i` must hold. */
static void origin_of(Collective c, int rank, int root, uint64_t size, uint64_t i, int* origin,
                      uint64_t* origin_offset) {
  const int block = (int)(i / size);
  const uint64_t within = i % size;
  switch (c) {
    case kBcast:
      *origin = root;
      *origin_offset = i;
      return;
    case kPingpong:
      *origin = 1 - rank;
      *origin_offset = i;
      return;
    case kScatter:
      *origin = root;
      *origin_offset = (uint64_t)rank * size + i;
      return;
    case kGather:
    case kAllgather:
      *origin = block;
      *origin_offset = within;
      return;
    case kAlltoall:
    case kNoCollective:
    default:
      *origin = block;
      *origin_offset = (uint64_t)rank * size + within;
      return;
  }
}

/* Returns 1 when every received float is the sum over the ranks of their inputs. */
static int check_reduction(Collective c, int rank, int ranks, uint64_t size, const Buffers* b) {
  const uint64_t first = c == kReduceScatter ? (uint64_t)rank * (size / sizeof(float)) : 0;
  /* Scans combine ranks 0..rank (exscan: 0..rank-1; rank 0's result is undefined). */
  const int contributors = c == kScan ? rank + 1 : c == kExscan ? rank : ranks;
  if (contributors == 0) return 1;
  for (size_t i = 0; i < b->recv_bytes / sizeof(float); ++i) {
    float expected = 0;
    for (int r = 0; r < contributors; ++r) expected += reduction_input(r, first + i);
    float got;
    memcpy(&got, b->recv + i * sizeof(float), sizeof got);
    if (got != expected) {
      fprintf(stderr,
              "mpi_peer: check failed: %s of %llu bytes: rank %d: float %zu is %g, expected %g\n",
              kCollectiveNames[c], (unsigned long long)size, rank, i, got, expected);
      return 0;
    }
  }
  return 1;
}

/* The v-forms: receive byte `i` comes from block j's sender, at this rank's block of its
 * input (alltoallv: the sender's row packs its blocks in rank order). */
static void origin_of_v_form(Collective c, const Options* o, int rank, int ranks, const Buffers* b,
                             uint64_t i, int* origin, uint64_t* origin_offset) {
  int j = 0;
  while ((uint64_t)b->rdispls[j] + (uint64_t)b->recvcounts[j] <= i) ++j;
  *origin = j;
  uint64_t start = 0;
  if (c == kAlltoallv) {
    for (int k = 0; k < rank; ++k) start += o->counts[j * ranks + k];
  }
  *origin_offset = start + (i - (uint64_t)b->rdispls[j]);
}

/* Returns 1 when every received byte is right; otherwise prints the first wrong one. */
static int check_result(const Options* o, int rank, int ranks, uint64_t size, const Buffers* b) {
  const Collective c = o->collective;
  for (size_t i = 0; i < b->recv_bytes; ++i) {
    int origin = 0;
    uint64_t offset = 0;
    if (is_v_form(c)) {
      origin_of_v_form(c, o, rank, ranks, b, i, &origin, &offset);
    } else {
      origin_of(c, rank, o->root, size, i, &origin, &offset);
    }
    const unsigned char expected = pattern_byte(origin, offset);
    if (b->recv[i] != expected) {
      fprintf(stderr,
              "mpi_peer: check failed: %s of %llu bytes: rank %d: receive byte %zu is 0x%02x, "
              "expected 0x%02x (byte %llu of rank %d's input)\n",
              kCollectiveNames[c], (unsigned long long)size, rank, i, b->recv[i], expected,
              (unsigned long long)offset, origin);
      return 0;
    }
  }
  return 1;
}

/* ---- timing ------------------------------------------------------------------------------- */

/* One round trip between ranks 0 and 1 (the others do nothing). */
static void ping_pong(int n, Buffers* b) {
  static int rank = -1;
  if (rank < 0) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Send(b->send, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    MPI_Recv(b->recv, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(b->recv, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(b->send, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
  }
}

static void run_collective(Collective c, int root, uint64_t size, Buffers* b, MPI_Comm comm) {
  const int n = (int)size;
  const int floats = (int)(size / sizeof(float));
  switch (c) {
    case kReduce:
      MPI_Reduce(b->send, b->recv, floats, MPI_FLOAT, MPI_SUM, root, comm);
      return;
    case kAllreduce:
      MPI_Allreduce(b->send, b->recv, floats, MPI_FLOAT, MPI_SUM, comm);
      return;
    case kReduceScatter:
      MPI_Reduce_scatter_block(b->send, b->recv, floats, MPI_FLOAT, MPI_SUM, comm);
      return;
    case kScan:
      MPI_Scan(b->send, b->recv, floats, MPI_FLOAT, MPI_SUM, comm);
      return;
    case kExscan:
      MPI_Exscan(b->send, b->recv, floats, MPI_FLOAT, MPI_SUM, comm);
      return;
    case kBcast:
      MPI_Bcast(b->recv, n, MPI_BYTE, root, comm);
      return;
    case kScatter:
      MPI_Scatter(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, root, comm);
      return;
    case kGather:
      MPI_Gather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, root, comm);
      return;
    case kAllgather:
      MPI_Allgather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, comm);
      return;
    case kAlltoall:
    case kNoCollective:
      MPI_Alltoall(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, comm);
      return;
    case kAllgatherv:
      MPI_Allgatherv(b->send, (int)b->send_bytes, MPI_BYTE, b->recv, b->recvcounts, b->rdispls,
                     MPI_BYTE, comm);
      return;
    case kAlltoallv:
      MPI_Alltoallv(b->send, b->sendcounts, b->sdispls, MPI_BYTE, b->recv, b->recvcounts,
                    b->rdispls, MPI_BYTE, comm);
      return;
    case kPingpong:
      ping_pong(n, b);
      return;
  }
}

/* Calls per repetition when --iterations is 0: about 32 MiB per repetition, 1..20 calls. */
static int default_iterations(uint64_t size) {
  const uint64_t budget = 32ull << 20;
  const uint64_t k = budget / (size > 0 ? size : 1);
  return k < 1 ? 1 : k > 20 ? 20 : (int)k;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a;
  const double y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(const double* values, int n) {
  double sorted[kMaxRepetitions];
  memcpy(sorted, values, (size_t)n * sizeof *values);
  qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

typedef struct {
  int iterations;
  double times_s[kMaxRepetitions]; /* max over ranks, rank 0 only */
  double median_s;
  int check_ok; /* on every rank */
} Point;

/* The warm-up call (with --check, on patterned buffers, checked): 1 when every element is right. */
static int warm_up(const Options* o, uint64_t size, int rank, int ranks, Buffers* b,
                   MPI_Comm comm) {
  if (o->check) fill_for_check(o->collective, rank, o->root, b);
  run_collective(o->collective, o->root, size, b, comm);
  if (!o->check) return 1;
  return is_reduction(o->collective) ? check_reduction(o->collective, rank, ranks, size, b)
                                     : check_result(o, rank, ranks, size, b);
}

/* One thread's part of a measurement: its communicator and buffers, and what they share. */
typedef struct {
  const Options* o;
  uint64_t size;
  int rank;
  int ranks;
  MPI_Comm comm;
  int iterations;
  int ok;
  pthread_barrier_t* start; /* per repetition: after the ranks' barrier */
  pthread_barrier_t* end;   /* per repetition: every thread made its calls */
} Worker;

/* Warm-up (and the checked call), then per repetition K calls between the two barriers. */
static void* work(void* argument) {
  Worker* w = argument;
  const Options* o = w->o;
  Buffers b = allocate_buffers(o, w->rank, w->ranks, w->size);
  w->ok = warm_up(o, w->size, w->rank, w->ranks, &b, w->comm);
  for (int r = 0; r < o->repetitions; ++r) {
    pthread_barrier_wait(w->start);
    for (int i = 0; i < w->iterations; ++i) {
      run_collective(o->collective, o->root, w->size, &b, w->comm);
    }
    pthread_barrier_wait(w->end);
  }
  free_buffers(&b);
  return NULL;
}

static Point measure(const Options* o, uint64_t size, int rank, int ranks) {
  Point p;
  memset(&p, 0, sizeof p);
  p.iterations = o->iterations > 0 ? o->iterations : default_iterations(size);
  if (o->threads == 0) {
    /* The program's own thread on MPI_COMM_WORLD. */
    Buffers b = allocate_buffers(o, rank, ranks, size);
    const int ok = warm_up(o, size, rank, ranks, &b, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &p.check_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    double mine[kMaxRepetitions];
    for (int r = 0; r < o->repetitions; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      for (int i = 0; i < p.iterations; ++i) {
        run_collective(o->collective, o->root, size, &b, MPI_COMM_WORLD);
      }
      mine[r] = (MPI_Wtime() - start) / p.iterations;
    }
    MPI_Reduce(mine, p.times_s, o->repetitions, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) p.median_s = median(p.times_s, o->repetitions);
    free_buffers(&b);
    return p;
  }
  const int n = o->threads;
  pthread_barrier_t start, end;
  pthread_barrier_init(&start, NULL, (unsigned)n + 1);
  pthread_barrier_init(&end, NULL, (unsigned)n + 1);
  Worker workers[kMaxThreads];
  pthread_t threads[kMaxThreads];
  for (int t = 0; t < n; ++t) {
    workers[t] = (Worker){.o = o,
                          .size = size,
                          .rank = rank,
                          .ranks = ranks,
                          .comm = MPI_COMM_NULL,
                          .iterations = p.iterations,
                          .start = &start,
                          .end = &end};
    MPI_Comm_dup(MPI_COMM_WORLD, &workers[t].comm);
  }
  for (int t = 0; t < n; ++t) pthread_create(&threads[t], NULL, work, &workers[t]);
  double mine[kMaxRepetitions];
  for (int r = 0; r < o->repetitions; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double started = MPI_Wtime();
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&end);
    mine[r] = (MPI_Wtime() - started) / p.iterations;
  }
  int ok = 1;
  for (int t = 0; t < n; ++t) {
    pthread_join(threads[t], NULL);
    ok = ok && workers[t].ok;
    MPI_Comm_free(&workers[t].comm);
  }
  pthread_barrier_destroy(&start);
  pthread_barrier_destroy(&end);
  MPI_Allreduce(&ok, &p.check_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  MPI_Reduce(mine, p.times_s, o->repetitions, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) p.median_s = median(p.times_s, o->repetitions);
  return p;
}

/* ---- output ------------------------------------------------------------------------------- */

/* The first line of MPI_Get_library_version, as a JSON string body (quotes and backslashes
 * dropped, which Open MPI's text does not contain anyway). */
static void library_name(char* out, size_t capacity) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  size_t j = 0;
  for (int i = 0; i < length && version[i] != '\n' && version[i] != '\0' && j + 1 < capacity; ++i) {
    if (version[i] != '"' && version[i] != '\\' && (unsigned char)version[i] >= 0x20) {
      out[j++] = version[i];
    }
  }
  out[j] = '\0';
}

static void print_point(const Options* o, uint64_t size, const Point* p, int first) {
  printf("%s\n    {\"algorithm\": \"openmpi\", \"size\": %llu, \"iterations\": %d, \"times_s\": [",
         first ? "" : ",", (unsigned long long)size, p->iterations);
  for (int r = 0; r < o->repetitions; ++r) printf("%s%.9g", r ? ", " : "", p->times_s[r]);
  printf("], \"median_s\": %.9g, \"checked\": %s, \"check_ok\": %s}", p->median_s,
         o->check ? "true" : "false", p->check_ok ? "true" : "false");
}

int main(int argc, char** argv) {
  /* --threads N: threads call MPI at once (for N = 1 too, so that the comparison with N > 1 starts
   * MPI alike). */
  int threaded = 0;
  for (int i = 1; i < argc; ++i) threaded = threaded || strcmp(argv[i], "--threads") == 0;
  int provided = MPI_THREAD_SINGLE;
  if (threaded) {
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options o;
  if (parse_arguments(argc, argv, ranks, rank == 0, &o) != 0) {
    MPI_Finalize();
    return 2;
  }
  if (o.threads > 0 && provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0) fprintf(stderr, "mpi_peer: --threads needs MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return 2;
  }
  char library[256];
  library_name(library, sizeof library);
  if (rank == 0) {
    printf(
        "{\"kind\": \"collective\", \"collective\": \"%s\", \"ranks\": %d, \"platform\": "
        "\"mpi\", \"library\": \"%s\", \"threads\": %d, \"results\": [",
        kCollectiveNames[o.collective], ranks, library, o.threads);
  }
  int all_ok = 1;
  for (int s = 0; s < o.num_sizes; ++s) {
    uint64_t size = o.sizes[s];
    if (is_reduction(o.collective)) size = size / sizeof(float) * sizeof(float);
    const Point p = measure(&o, size, rank, ranks);
    all_ok = all_ok && p.check_ok;
    if (rank == 0) {
      print_point(&o, size, &p, s == 0);
      fflush(stdout);
    }
  }
  if (rank == 0) printf("\n]}\n");
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
