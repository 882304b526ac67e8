/* multilane/multilane.h — the C API of the runtime (C and Fortran via ISO_C_BINDING).
 *
 * The same operations and semantics as multilane/communicator.hpp. Every call returns
 * ML_OK (0) or an error code that says what kind of failure it was (multilane/errors.hpp);
 * ml_last_error() then gives the message of this thread's last failing call ("bcast #3
 * (binomial, root 0, 1048576 bytes): timed out after 60 s waiting for rank 3 ...") and
 * ml_error_name() the kind ("timeout"). After a failure of the job (any code but ML_ERR_USAGE
 * and ML_ERR_PLATFORM) the communicator is broken: later calls fail too.
 *
 *   ml_comm* comm;
 *   if (ml_init(&comm) != ML_OK) { fprintf(stderr, "%s\n", ml_last_error()); return 1; }
 *   ml_bcast(comm, buffer, bytes, 0, NULL);       -- NULL algorithm: "auto"
 *   ml_finalize(comm);
 */
#ifndef MULTILANE_MULTILANE_H
#define MULTILANE_MULTILANE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  ML_OK = 0,
  ML_ERR_USAGE = 1,          /* a bad argument: the message names it and the allowed range */
  ML_ERR_PLATFORM = 3,       /* the platform file is malformed (FILE:LINE: key: reason) */
  ML_ERR_TIMEOUT = 4,        /* no progress for the timeout (MULTILANE_TIMEOUT): a peer hung */
  ML_ERR_PEER_GONE = 5,      /* a peer closed or reset its connection, or never accepted one */
  ML_ERR_AUTHENTICATION = 6, /* a peer failed the handshake (wrong secret, other version) */
  ML_ERR_MISMATCH = 7,       /* ranks called different collectives, sizes or roots */
  ML_ERR_PROTOCOL = 8,       /* a peer sent bytes that are not multilane's protocol */
  ML_ERR_RESOURCE = 9,       /* the system refused memory, a port, a segment or a process */
  ML_ERR_INTERNAL = 10       /* a failure multilane did not expect (please report it) */
};

typedef struct ml_comm ml_comm;
typedef struct ml_request ml_request;

/* Joins the job the environment describes (docs/launching.md). */
int ml_init(ml_comm** comm);
/* Leaves the job and frees the communicator (NULL is allowed). */
int ml_finalize(ml_comm* comm);
int ml_rank(const ml_comm* comm);
int ml_size(const ml_comm* comm);
const char* ml_last_error(void);
/* The kind an error code stands for: "usage", "timeout", "peer gone", ...; "ok" for ML_OK and
 * "unknown" for a number that is no code. */
const char* ml_error_name(int code);

int ml_send(ml_comm* comm, const void* data, size_t bytes, int peer);
int ml_recv(ml_comm* comm, void* data, size_t bytes, int peer);
int ml_isend(ml_comm* comm, const void* data, size_t bytes, int peer, ml_request** request);
int ml_irecv(ml_comm* comm, void* data, size_t bytes, int peer, ml_request** request);
/* Both free the request once it completed (also when it failed). */
int ml_wait(ml_request* request);
int ml_test(ml_request* request, int* done);

/* `algorithm`: a name from `multilane algorithms`, or NULL / "auto" for the model's choice. */
int ml_barrier(ml_comm* comm);
int ml_bcast(ml_comm* comm, void* buffer, size_t bytes, int root, const char* algorithm);
int ml_scatter(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank, int root,
               const char* algorithm);
int ml_gather(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank, int root,
              const char* algorithm);
int ml_allgather(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank,
                 const char* algorithm);
int ml_alltoall(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank,
                const char* algorithm);

/* Non-blocking collectives: start the call; finish it with ml_wait / ml_test. The buffers stay
 * in use until then. Every rank starts its collectives in the same order. */
int ml_ibcast(ml_comm* comm, void* buffer, size_t bytes, int root, const char* algorithm,
              ml_request** request);
int ml_iscatter(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank, int root,
                const char* algorithm, ml_request** request);
int ml_igather(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank, int root,
               const char* algorithm, ml_request** request);
int ml_iallgather(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank,
                  const char* algorithm, ml_request** request);
int ml_ialltoall(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank,
                 const char* algorithm, ml_request** request);

/* The v-forms: `counts` are the bytes of each block, the same on every rank: p of them (block
 * i belongs to rank i), p*p for alltoallv (counts[i*p + j]: from rank i to rank j). Blocks are
 * packed in rank order: the gatherv root's `recv`, the scatterv root's `send`, every
 * allgatherv `recv`, and each alltoallv rank's row in `send` and column in `recv`. */
int ml_gatherv(ml_comm* comm, const void* send, void* recv, const size_t* counts, int root,
               const char* algorithm);
int ml_scatterv(ml_comm* comm, const void* send, void* recv, const size_t* counts, int root,
                const char* algorithm);
int ml_allgatherv(ml_comm* comm, const void* send, void* recv, const size_t* counts,
                  const char* algorithm);
int ml_alltoallv(ml_comm* comm, const void* send, void* recv, const size_t* counts,
                 const char* algorithm);
int ml_igatherv(ml_comm* comm, const void* send, void* recv, const size_t* counts, int root,
                const char* algorithm, ml_request** request);
int ml_iscatterv(ml_comm* comm, const void* send, void* recv, const size_t* counts, int root,
                 const char* algorithm, ml_request** request);
int ml_iallgatherv(ml_comm* comm, const void* send, void* recv, const size_t* counts,
                   const char* algorithm, ml_request** request);
int ml_ialltoallv(ml_comm* comm, const void* send, void* recv, const size_t* counts,
                  const char* algorithm, ml_request** request);

/* Reductions (multilane/reduction.hpp): counts are in elements of `type`. */
typedef enum {
  ML_INT8,
  ML_INT16,
  ML_INT32,
  ML_INT64,
  ML_UINT8,
  ML_UINT16,
  ML_UINT32,
  ML_UINT64,
  ML_FLOAT16,
  ML_BFLOAT16,
  ML_FLOAT,
  ML_DOUBLE,
  ML_FLOAT_INT, /* value-index pairs with the layout of MPI_FLOAT_INT, ... */
  ML_DOUBLE_INT,
  ML_LONG_INT,
  ML_2INT,
  ML_SHORT_INT
} ml_type;

typedef enum {
  ML_SUM,
  ML_PROD,
  ML_MIN,
  ML_MAX,
  ML_LAND,
  ML_LOR,
  ML_LXOR,
  ML_BAND,
  ML_BOR,
  ML_BXOR,
  ML_MINLOC,
  ML_MAXLOC
} ml_op;

/* The root's recv gets every rank's send combined element by element (recv unused elsewhere). */
int ml_reduce(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
              int root, const char* algorithm);
int ml_allreduce(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
                 const char* algorithm);
/* send: size() blocks of recv_count elements; rank i's recv gets block i combined (like
 * MPI_Reduce_scatter_block). */
int ml_reduce_scatter_block(ml_comm* comm, const void* send, void* recv, size_t recv_count,
                            ml_type type, ml_op op, const char* algorithm);
/* send: the blocks of every rank packed in rank order, recv_counts[i] elements each (size()
 * counts, the same on every rank); rank i's recv gets block i combined (like
 * MPI_Reduce_scatter). */
int ml_reduce_scatter(ml_comm* comm, const void* send, void* recv, const size_t* recv_counts,
                      ml_type type, ml_op op, const char* algorithm);
int ml_ireduce_scatter(ml_comm* comm, const void* send, void* recv, const size_t* recv_counts,
                       ml_type type, ml_op op, const char* algorithm, ml_request** request);
/* Rank i's recv gets the combination of the sends of ranks 0..i, in rank order (like MPI_Scan);
 * ml_exscan: of ranks 0..i-1, rank 0's recv untouched (like MPI_Exscan). */
int ml_scan(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
            const char* algorithm);
int ml_exscan(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
              const char* algorithm);
int ml_ireduce(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
               int root, const char* algorithm, ml_request** request);
int ml_iallreduce(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
                  const char* algorithm, ml_request** request);
int ml_ireduce_scatter_block(ml_comm* comm, const void* send, void* recv, size_t recv_count,
                             ml_type type, ml_op op, const char* algorithm, ml_request** request);
int ml_iscan(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
             const char* algorithm, ml_request** request);
int ml_iexscan(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
               const char* algorithm, ml_request** request);

/* Memory the other ranks of this node copy from and to directly (multilane/shared_buffer.hpp),
 * like MPI_Alloc_mem: any call takes it, and the shared-memory layer's single copies from or to
 * it are a memcpy instead of a system call. Zero-filled; free it with ml_free_shared (NULL: no-op).
 * bytes == 0 gives *memory == NULL. */
int ml_alloc_shared(size_t bytes, void** memory);
int ml_free_shared(void* memory);

#ifdef __cplusplus
}
#endif

#endif /* MULTILANE_MULTILANE_H */
