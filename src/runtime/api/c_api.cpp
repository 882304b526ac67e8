// runtime/api/c_api.cpp — multilane/multilane.h on top of the Communicator.
#include "multilane/multilane.h"

#include <array>
#include <map>
#include <mutex>
#include <string>

#include "multilane/collective.hpp"
#include "multilane/communicator.hpp"
#include "multilane/shared_buffer.hpp"

struct ml_comm {
  multilane::Communicator comm;
};

struct ml_request {
  multilane::Request request;
};

namespace {

thread_local std::string last_error;

// The ML_ERR_* code of each kind, in ErrorKind's order.
constexpr std::array<int, 9> kCodeOfKind = {
    ML_ERR_USAGE,    ML_ERR_PLATFORM, ML_ERR_TIMEOUT,  ML_ERR_PEER_GONE, ML_ERR_AUTHENTICATION,
    ML_ERR_MISMATCH, ML_ERR_PROTOCOL, ML_ERR_RESOURCE, ML_ERR_INTERNAL};
static_assert(kCodeOfKind.size() == static_cast<std::size_t>(multilane::ErrorKind::internal) + 1);

// Runs `f`, mapping an exception's kind to its code and keeping its message.
template <typename F>
int guarded(F&& f) {
  try {
    f();
    return ML_OK;
  } catch (const std::exception& e) {
    last_error = e.what();
    return kCodeOfKind[static_cast<std::size_t>(multilane::kind_of(e))];
  }
}

int null_argument(const char* name) {
  last_error = std::string(name) + " must not be NULL";
  return ML_ERR_USAGE;
}

multilane::CollectiveOptions options(const char* algorithm) {
  multilane::CollectiveOptions o;
  if (algorithm) o.algorithm = algorithm;
  return o;
}

std::span<const std::byte> in(const void* data, size_t bytes) {
  return {static_cast<const std::byte*>(data), data ? bytes : 0};
}
std::span<std::byte> out(void* data, size_t bytes) {
  return {static_cast<std::byte*>(data), data ? bytes : 0};
}

// A collective call; with `request` non-NULL it is started and *request gets its handle.
int collective(ml_comm* comm, multilane::Collective c, const void* send, void* recv, size_t bytes,
               int root, const char* algorithm, ml_request** request = nullptr,
               const multilane::Reduction& reduction = {}) {
  if (!comm) return null_argument("comm");
  return guarded([&] {
    using multilane::Buffer;
    const int p = comm->comm.size();
    const int r = comm->comm.rank();
    const auto send_data = in(send, multilane::buffer_size(c, Buffer::Send, r, p, root, bytes));
    const auto recv_data = out(recv, multilane::buffer_size(c, Buffer::Recv, r, p, root, bytes));
    if (request) {
      *request = new ml_request{
          comm->comm.irun(c, send_data, recv_data, root, bytes, options(algorithm), reduction)};
    } else {
      comm->comm.run(c, send_data, recv_data, root, bytes, options(algorithm), reduction);
    }
  });
}

// A v-form: the counts (p or p*p of them, NULL refused) are read at the call, in bytes or, for
// reduce-scatterv, in elements of `reduction.type`.
int uneven(ml_comm* comm, multilane::Collective c, const void* send, void* recv,
           const size_t* counts, int root, const char* algorithm, ml_request** request,
           const multilane::Reduction& reduction = {}) {
  if (!comm) return null_argument("comm");
  if (!counts) return null_argument("counts");
  return guarded([&] {
    using multilane::Buffer;
    const int p = comm->comm.size();
    const int r = comm->comm.rank();
    const auto n = static_cast<std::size_t>(p) * (c == multilane::Collective::Alltoallv ? p : 1);
    const std::uint64_t unit =
        multilane::is_reduction(c) ? multilane::element_size(reduction.type) : 1;
    std::vector<std::uint64_t> bytes(counts, counts + n);
    for (std::uint64_t& count : bytes) count *= unit;
    const std::uint64_t largest = multilane::largest_count(bytes);
    const auto send_data =
        in(send, multilane::buffer_size(c, Buffer::Send, r, p, root, largest, bytes));
    const auto recv_data =
        out(recv, multilane::buffer_size(c, Buffer::Recv, r, p, root, largest, bytes));
    if (request) {
      *request = new ml_request{
          comm->comm.irunv(c, send_data, recv_data, root, bytes, options(algorithm), reduction)};
    } else {
      comm->comm.runv(c, send_data, recv_data, root, bytes, options(algorithm), reduction);
    }
  });
}

static_assert(ML_SHORT_INT + 1 == multilane::kNumElementTypes &&
                  ML_MAXLOC + 1 == multilane::kNumReduceOps,
              "ml_type and ml_op follow ElementType and ReduceOp");

// The Reduction of a C type and operation; false, with last_error naming the argument, when
// either is out of range.
bool to_reduction(ml_type type, ml_op op, multilane::Reduction& reduction) {
  if (type < 0 || type >= multilane::kNumElementTypes) {
    last_error = "type is not an ml_type (ML_INT8 .. ML_SHORT_INT)";
    return false;
  }
  if (op < 0 || op >= multilane::kNumReduceOps) {
    last_error = "op is not an ml_op (ML_SUM .. ML_MAXLOC)";
    return false;
  }
  reduction = {static_cast<multilane::ElementType>(type), static_cast<multilane::ReduceOp>(op)};
  return true;
}

// A reduction of `count` elements.
int reduction(ml_comm* comm, multilane::Collective c, const void* send, void* recv, size_t count,
              ml_type type, ml_op op, int root, const char* algorithm, ml_request** request) {
  multilane::Reduction r;
  if (!to_reduction(type, op, r)) return ML_ERR_USAGE;
  return collective(comm, c, send, recv, count * multilane::element_size(r.type), root, algorithm,
                    request, r);
}

// MPI_Reduce_scatter's form: a count of elements per rank.
int reduction_v(ml_comm* comm, const void* send, void* recv, const size_t* counts, ml_type type,
                ml_op op, const char* algorithm, ml_request** request) {
  multilane::Reduction r;
  if (!to_reduction(type, op, r)) return ML_ERR_USAGE;
  return uneven(comm, multilane::Collective::ReduceScatterv, send, recv, counts, 0, algorithm,
                request, r);
}

// ml_alloc_shared's buffers, by address, until ml_free_shared.
struct SharedAllocations {
  std::mutex mutex;
  std::map<void*, multilane::SharedBuffer> buffers;
};
SharedAllocations& shared_allocations() {
  static SharedAllocations* instance = new SharedAllocations;  // outlives every static
  return *instance;
}

int started_collective(ml_comm* comm, multilane::Collective c, const void* send, void* recv,
                       size_t bytes, int root, const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return collective(comm, c, send, recv, bytes, root, algorithm, request);
}

}  // namespace

extern "C" {

int ml_init(ml_comm** comm) {
  if (!comm) return null_argument("comm");
  return guarded([&] { *comm = new ml_comm{multilane::Communicator::from_environment()}; });
}

int ml_finalize(ml_comm* comm) {
  delete comm;
  return ML_OK;
}

int ml_rank(const ml_comm* comm) {
  return comm ? comm->comm.rank() : -1;
}
int ml_size(const ml_comm* comm) {
  return comm ? comm->comm.size() : -1;
}
const char* ml_last_error(void) {
  return last_error.c_str();
}

const char* ml_error_name(int code) {
  if (code == ML_OK) return "ok";
  for (std::size_t kind = 0; kind < kCodeOfKind.size(); ++kind) {
    // kind_name() views string literals, so data() ends in a NUL.
    if (kCodeOfKind[kind] == code) return kind_name(static_cast<multilane::ErrorKind>(kind)).data();
  }
  return "unknown";
}

int ml_send(ml_comm* comm, const void* data, size_t bytes, int peer) {
  if (!comm) return null_argument("comm");
  return guarded([&] { comm->comm.send(in(data, bytes), peer); });
}

int ml_recv(ml_comm* comm, void* data, size_t bytes, int peer) {
  if (!comm) return null_argument("comm");
  return guarded([&] { comm->comm.recv(out(data, bytes), peer); });
}

int ml_isend(ml_comm* comm, const void* data, size_t bytes, int peer, ml_request** request) {
  if (!comm) return null_argument("comm");
  if (!request) return null_argument("request");
  return guarded([&] { *request = new ml_request{comm->comm.isend(in(data, bytes), peer)}; });
}

int ml_irecv(ml_comm* comm, void* data, size_t bytes, int peer, ml_request** request) {
  if (!comm) return null_argument("comm");
  if (!request) return null_argument("request");
  return guarded([&] { *request = new ml_request{comm->comm.irecv(out(data, bytes), peer)}; });
}

int ml_wait(ml_request* request) {
  if (!request) return null_argument("request");
  const int status = guarded([&] { request->request.wait(); });
  delete request;
  return status;
}

int ml_test(ml_request* request, int* done) {
  if (!request) return null_argument("request");
  if (!done) return null_argument("done");
  *done = 0;
  const int status = guarded([&] { *done = request->request.test() ? 1 : 0; });
  if (*done || status != ML_OK) delete request;
  return status;
}

int ml_barrier(ml_comm* comm) {
  if (!comm) return null_argument("comm");
  return guarded([&] { comm->comm.barrier(); });
}

int ml_bcast(ml_comm* comm, void* buffer, size_t bytes, int root, const char* algorithm) {
  return collective(comm, multilane::Collective::Bcast, nullptr, buffer, bytes, root, algorithm);
}

int ml_scatter(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank, int root,
               const char* algorithm) {
  return collective(comm, multilane::Collective::Scatter, send, recv, bytes_per_rank, root,
                    algorithm);
}

int ml_gather(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank, int root,
              const char* algorithm) {
  return collective(comm, multilane::Collective::Gather, send, recv, bytes_per_rank, root,
                    algorithm);
}

int ml_allgather(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank,
                 const char* algorithm) {
  return collective(comm, multilane::Collective::Allgather, send, recv, bytes_per_rank, 0,
                    algorithm);
}

int ml_alltoall(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank,
                const char* algorithm) {
  return collective(comm, multilane::Collective::Alltoall, send, recv, bytes_per_rank, 0,
                    algorithm);
}

int ml_ibcast(ml_comm* comm, void* buffer, size_t bytes, int root, const char* algorithm,
              ml_request** request) {
  return started_collective(comm, multilane::Collective::Bcast, nullptr, buffer, bytes, root,
                            algorithm, request);
}

int ml_iscatter(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank, int root,
                const char* algorithm, ml_request** request) {
  return started_collective(comm, multilane::Collective::Scatter, send, recv, bytes_per_rank, root,
                            algorithm, request);
}

int ml_igather(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank, int root,
               const char* algorithm, ml_request** request) {
  return started_collective(comm, multilane::Collective::Gather, send, recv, bytes_per_rank, root,
                            algorithm, request);
}

int ml_iallgather(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank,
                  const char* algorithm, ml_request** request) {
  return started_collective(comm, multilane::Collective::Allgather, send, recv, bytes_per_rank, 0,
                            algorithm, request);
}

int ml_ialltoall(ml_comm* comm, const void* send, void* recv, size_t bytes_per_rank,
                 const char* algorithm, ml_request** request) {
  return started_collective(comm, multilane::Collective::Alltoall, send, recv, bytes_per_rank, 0,
                            algorithm, request);
}

int ml_gatherv(ml_comm* comm, const void* send, void* recv, const size_t* counts, int root,
               const char* algorithm) {
  return uneven(comm, multilane::Collective::Gatherv, send, recv, counts, root, algorithm, nullptr);
}

int ml_scatterv(ml_comm* comm, const void* send, void* recv, const size_t* counts, int root,
                const char* algorithm) {
  return uneven(comm, multilane::Collective::Scatterv, send, recv, counts, root, algorithm,
                nullptr);
}

int ml_allgatherv(ml_comm* comm, const void* send, void* recv, const size_t* counts,
                  const char* algorithm) {
  return uneven(comm, multilane::Collective::Allgatherv, send, recv, counts, 0, algorithm, nullptr);
}

int ml_alltoallv(ml_comm* comm, const void* send, void* recv, const size_t* counts,
                 const char* algorithm) {
  return uneven(comm, multilane::Collective::Alltoallv, send, recv, counts, 0, algorithm, nullptr);
}

int ml_igatherv(ml_comm* comm, const void* send, void* recv, const size_t* counts, int root,
                const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return uneven(comm, multilane::Collective::Gatherv, send, recv, counts, root, algorithm, request);
}

int ml_iscatterv(ml_comm* comm, const void* send, void* recv, const size_t* counts, int root,
                 const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return uneven(comm, multilane::Collective::Scatterv, send, recv, counts, root, algorithm,
                request);
}

int ml_iallgatherv(ml_comm* comm, const void* send, void* recv, const size_t* counts,
                   const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return uneven(comm, multilane::Collective::Allgatherv, send, recv, counts, 0, algorithm, request);
}

int ml_ialltoallv(ml_comm* comm, const void* send, void* recv, const size_t* counts,
                  const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return uneven(comm, multilane::Collective::Alltoallv, send, recv, counts, 0, algorithm, request);
}

int ml_reduce(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
              int root, const char* algorithm) {
  return reduction(comm, multilane::Collective::Reduce, send, recv, count, type, op, root,
                   algorithm, nullptr);
}

int ml_allreduce(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
                 const char* algorithm) {
  return reduction(comm, multilane::Collective::Allreduce, send, recv, count, type, op, 0,
                   algorithm, nullptr);
}

int ml_reduce_scatter_block(ml_comm* comm, const void* send, void* recv, size_t recv_count,
                            ml_type type, ml_op op, const char* algorithm) {
  return reduction(comm, multilane::Collective::ReduceScatter, send, recv, recv_count, type, op, 0,
                   algorithm, nullptr);
}

int ml_reduce_scatter(ml_comm* comm, const void* send, void* recv, const size_t* recv_counts,
                      ml_type type, ml_op op, const char* algorithm) {
  return reduction_v(comm, send, recv, recv_counts, type, op, algorithm, nullptr);
}

int ml_ireduce_scatter(ml_comm* comm, const void* send, void* recv, const size_t* recv_counts,
                       ml_type type, ml_op op, const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return reduction_v(comm, send, recv, recv_counts, type, op, algorithm, request);
}

int ml_scan(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
            const char* algorithm) {
  return reduction(comm, multilane::Collective::Scan, send, recv, count, type, op, 0, algorithm,
                   nullptr);
}

int ml_exscan(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
              const char* algorithm) {
  return reduction(comm, multilane::Collective::Exscan, send, recv, count, type, op, 0, algorithm,
                   nullptr);
}

int ml_ireduce(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
               int root, const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return reduction(comm, multilane::Collective::Reduce, send, recv, count, type, op, root,
                   algorithm, request);
}

int ml_iallreduce(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
                  const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return reduction(comm, multilane::Collective::Allreduce, send, recv, count, type, op, 0,
                   algorithm, request);
}

int ml_ireduce_scatter_block(ml_comm* comm, const void* send, void* recv, size_t recv_count,
                             ml_type type, ml_op op, const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return reduction(comm, multilane::Collective::ReduceScatter, send, recv, recv_count, type, op, 0,
                   algorithm, request);
}

int ml_iscan(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
             const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return reduction(comm, multilane::Collective::Scan, send, recv, count, type, op, 0, algorithm,
                   request);
}

int ml_iexscan(ml_comm* comm, const void* send, void* recv, size_t count, ml_type type, ml_op op,
               const char* algorithm, ml_request** request) {
  if (!request) return null_argument("request");
  return reduction(comm, multilane::Collective::Exscan, send, recv, count, type, op, 0, algorithm,
                   request);
}

int ml_alloc_shared(size_t bytes, void** memory) {
  if (!memory) return null_argument("memory");
  *memory = nullptr;
  if (bytes == 0) return ML_OK;
  return guarded([&] {
    multilane::SharedBuffer buffer(bytes);
    void* const address = buffer.data();
    SharedAllocations& all = shared_allocations();
    const std::lock_guard lock(all.mutex);
    all.buffers.emplace(address, std::move(buffer));
    *memory = address;
  });
}

int ml_free_shared(void* memory) {
  if (!memory) return ML_OK;
  SharedAllocations& all = shared_allocations();
  const std::lock_guard lock(all.mutex);
  if (all.buffers.erase(memory) == 0) {
    last_error = "ml_free_shared: the memory did not come from ml_alloc_shared (or was freed)";
    return ML_ERR_USAGE;
  }
  return ML_OK;
}

}  // extern "C"
