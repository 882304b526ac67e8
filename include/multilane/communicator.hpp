// multilane/communicator.hpp — the C++ API of the runtime: one job of ranks exchanging messages
// and running collectives over TCP.
//
//   auto comm = multilane::Communicator::from_environment();   // started by `multilane launch`
//   std::vector<std::byte> data(1 << 20);
//   comm.bcast(data, /*root=*/0);                              // algorithm chosen by the model
//   comm.bcast(data, 0, {.algorithm = "multilane"});           // or named
//
// Semantics (MPI's, with one tag):
//   * Point-to-point messages from rank a to rank b match in order: the k-th send of a to b
//     fills the k-th receive of b from a, whose buffer must have exactly the sent length.
//   * Collectives must be called by every rank in the same order with matching arguments
//     (collective.hpp gives the buffer sizes). Ranks that disagree (another collective,
//     size, root or algorithm at the same call) get a CommunicationError saying so.
//   * Every operation either completes or throws: a peer that died or made no progress for
//     the timeout (60 s, MULTILANE_TIMEOUT) fails it with a message naming the rank and
//     what was awaited. After a failed operation the communicator is broken and every later
//     call throws again (like MPI's default error handler, but catchable).
//   * A Communicator is used from one thread at a time.
//
// Errors (errors.hpp): UsageError for bad arguments (wrong buffer size, root out of range,
// unknown algorithm), CommunicationError for failures of the job, whose kind() says which
// (timeout, peer_gone, authentication, mismatch, protocol, resource). attempt() turns either into
// a Status for code that prefers return values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "multilane/errors.hpp"
#include "multilane/platform.hpp"
#include "multilane/reduction.hpp"
#include "multilane/schedule.hpp"

namespace multilane {

// Per-call choices; the defaults let the cost model decide.
struct CollectiveOptions {
  std::string algorithm = "auto";  // a name from `multilane algorithms`, or "auto"
  std::uint64_t segment = 0;       // pipelining unit in bytes; 0: the model's best
  int wan_pairs = 0;               // multilane scatter/gather node pairs; 0: P_opt
};

inline constexpr int kAutomaticSocketBuffer = -1;

// Transport settings of a job. from_environment() reads overrides from MULTILANE_* variables
// (docs/runtime.md lists them).
struct CommunicatorOptions {
  std::chrono::milliseconds timeout{60'000};
  int lan_streams = 1;  // TCP connections per peer and lane inside a site
  int wan_streams = 4;  // ... and between sites (long fat pipes need several)
  std::uint64_t stripe_threshold = 32 * 1024;  // shorter messages use one stream
  std::uint64_t max_chunk = 1024 * 1024;       // bytes per chunk of a striped message
  // SO_SNDBUF/SO_RCVBUF in bytes, 0: the system's autotuning. kAutomaticSocketBuffer: 1 MiB
  // where the system allows a socket that much (net.core.wmem_max and rmem_max), else 0.
  int lan_socket_buffer = kAutomaticSocketBuffer;
  int wan_socket_buffer = 0;
  std::uint64_t wan_pacing_bps = 0;                // SO_MAX_PACING_RATE for WAN streams, 0: none
  std::uint64_t unexpected_budget = 256ull << 20;  // early-arriving bytes kept in memory
  // A stalled WAN stream's share of a split message goes out again on the other streams once
  // every piece is handed out, instead of waiting for its retransmission (docs/runtime.md).
  bool resend_stalled = true;
  bool explain = false;  // rank 0 prints each algorithm choice and why
  // The ports this rank listens on, one per lane: each lane's listener takes the first free
  // port of [listen_port_low, listen_port_high], for a firewall that opens a range between
  // sites (MULTILANE_PORTS=LOW-HIGH). Both 0: a port the system picks.
  std::uint16_t listen_port_low = 0;
  std::uint16_t listen_port_high = 0;
  // Called about every millisecond while a blocking call waits on this thread with nothing
  // arriving: a host library's progress (the MPI library's own requests, which a peer may need
  // to reach this collective). Empty: none.
  std::function<void()> while_waiting;
};

struct Status {
  bool ok = true;
  ErrorKind kind = ErrorKind::internal;  // meaningful when !ok
  std::string message;                   // empty when ok
  explicit operator bool() const { return ok; }
};

// Runs `f`, turning a multilane Error into a Status.
template <typename F>
Status attempt(F&& f) {
  try {
    f();
    return {};
  } catch (const Error& e) {
    return {.ok = false, .kind = e.kind(), .message = e.what()};
  }
}

class RequestState;

// A non-blocking send or receive in flight.
class Request {
 public:
  Request() = default;
  explicit Request(std::shared_ptr<RequestState> state);
  bool valid() const { return state_ != nullptr; }
  // True once complete; throws CommunicationError if it failed.
  bool test();
  // Waits until complete (bounded by the communicator's timeout); throws if it failed.
  void wait();

 private:
  std::shared_ptr<RequestState> state_;
};

class CommunicatorImpl;
namespace runtime {
class JobSharing;
}

class Communicator {
 public:
  // Joins the job the environment describes (docs/launching.md): rank, size, rendezvous,
  // job secret, platform file. Without those variables: a lone rank 0 of 1.
  static Communicator from_environment(CommunicatorOptions options = {});
  explicit Communicator(std::unique_ptr<CommunicatorImpl> impl);
  Communicator(Communicator&&) noexcept;
  Communicator& operator=(Communicator&&) noexcept;
  ~Communicator();

  int rank() const;
  int size() const;
  // The platform the job runs on (from MULTILANE_PLATFORM, or one site of one node per rank).
  const Platform& platform() const;
  const CommunicatorOptions& options() const;

  void send(std::span<const std::byte> data, int peer);
  void recv(std::span<std::byte> data, int peer);
  Request isend(std::span<const std::byte> data, int peer);
  Request irecv(std::span<std::byte> data, int peer);

  void barrier();
  // bcast: `buffer` holds the root's data on the root and receives it elsewhere.
  void bcast(std::span<std::byte> buffer, int root, const CollectiveOptions& options = {});
  // scatter: the root's `send` holds size() blocks of recv.size() bytes; block i goes to rank i.
  void scatter(std::span<const std::byte> send, std::span<std::byte> recv, int root,
               const CollectiveOptions& options = {});
  // gather: every rank's `send` becomes block i of the root's `recv` (size() blocks).
  void gather(std::span<const std::byte> send, std::span<std::byte> recv, int root,
              const CollectiveOptions& options = {});
  void allgather(std::span<const std::byte> send, std::span<std::byte> recv,
                 const CollectiveOptions& options = {});
  // alltoall: block j of rank i's `send` goes to block i of rank j's `recv`.
  void alltoall(std::span<const std::byte> send, std::span<std::byte> recv,
                const CollectiveOptions& options = {});
  // Reductions combine the same element of every rank's `send` with reduction.op
  // (reduction.hpp); buffers hold whole elements of reduction.type.
  // reduce: the root's `recv` (as long as `send`) gets the combination; others' is unused.
  void reduce(std::span<const std::byte> send, std::span<std::byte> recv,
              const Reduction& reduction, int root, const CollectiveOptions& options = {});
  // allreduce: every rank's `recv` (as long as `send`) gets the combination.
  void allreduce(std::span<const std::byte> send, std::span<std::byte> recv,
                 const Reduction& reduction, const CollectiveOptions& options = {});
  // reduce_scatter (MPI_Reduce_scatter_block): `send` holds size() blocks of recv.size()
  // bytes; rank i's `recv` gets block i combined over every rank.
  void reduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv,
                      const Reduction& reduction, const CollectiveOptions& options = {});
  // scan (MPI_Scan): rank i's `recv` (as long as `send`) gets the combination of the `send`s of
  // ranks 0..i, in rank order. exscan (MPI_Exscan): of ranks 0..i-1; rank 0's `recv` is left
  // untouched (it may be empty).
  void scan(std::span<const std::byte> send, std::span<std::byte> recv, const Reduction& reduction,
            const CollectiveOptions& options = {});
  void exscan(std::span<const std::byte> send, std::span<std::byte> recv,
              const Reduction& reduction, const CollectiveOptions& options = {});
  // The same with typed spans: comm.allreduce<float>(mine, sums, ReduceOp::Sum).
  template <typename T>
  void reduce(std::span<const T> send, std::span<T> recv, ReduceOp op, int root,
              const CollectiveOptions& options = {}) {
    reduce(std::as_bytes(send), std::as_writable_bytes(recv), {element_type_of<T>(), op}, root,
           options);
  }
  template <typename T>
  void allreduce(std::span<const T> send, std::span<T> recv, ReduceOp op,
                 const CollectiveOptions& options = {}) {
    allreduce(std::as_bytes(send), std::as_writable_bytes(recv), {element_type_of<T>(), op},
              options);
  }
  template <typename T>
  void reduce_scatter(std::span<const T> send, std::span<T> recv, ReduceOp op,
                      const CollectiveOptions& options = {}) {
    reduce_scatter(std::as_bytes(send), std::as_writable_bytes(recv), {element_type_of<T>(), op},
                   options);
  }
  template <typename T>
  void scan(std::span<const T> send, std::span<T> recv, ReduceOp op,
            const CollectiveOptions& options = {}) {
    scan(std::as_bytes(send), std::as_writable_bytes(recv), {element_type_of<T>(), op}, options);
  }
  template <typename T>
  void exscan(std::span<const T> send, std::span<T> recv, ReduceOp op,
              const CollectiveOptions& options = {}) {
    exscan(std::as_bytes(send), std::as_writable_bytes(recv), {element_type_of<T>(), op}, options);
  }
  // Any collective by value; `size` as in collective.hpp (bytes per rank, or the whole
  // message for bcast, which works in `recv`, and reduce and allreduce); `reduction` is read
  // by reductions only.
  void run(Collective collective, std::span<const std::byte> send, std::span<std::byte> recv,
           int root, std::uint64_t size, const CollectiveOptions& options = {},
           const Reduction& reduction = {});

  // The v-forms (gatherv, scatterv, allgatherv, alltoallv, reduce-scatterv) by value: `counts`
  // are the bytes of each block, the same on every rank (p of them, p² for alltoallv: row =
  // sender), the blocks packed in rank order (collective.hpp). Throws UsageError for an even
  // collective or counts of the wrong number. `reduction` is read by reduce-scatterv only.
  void runv(Collective collective, std::span<const std::byte> send, std::span<std::byte> recv,
            int root, std::span<const std::uint64_t> counts, const CollectiveOptions& options = {},
            const Reduction& reduction = {});
  // reduce_scatter with a block per rank (MPI_Reduce_scatter): `counts[i]` bytes of `send`
  // (packed in rank order, whole elements) go to rank i, combined over every rank; `recv` holds
  // counts[rank()] bytes.
  void reduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv,
                      std::span<const std::uint64_t> counts, const Reduction& reduction,
                      const CollectiveOptions& options = {});

  // Non-blocking collectives: start the call and return at once; the buffers must stay valid
  // until the Request completed. Every rank starts its collectives in the same order (that order
  // numbers the calls, as in MPI); several may be in flight and complete in any order.
  Request ibcast(std::span<std::byte> buffer, int root, const CollectiveOptions& options = {});
  Request iscatter(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                   const CollectiveOptions& options = {});
  Request igather(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                  const CollectiveOptions& options = {});
  Request iallgather(std::span<const std::byte> send, std::span<std::byte> recv,
                     const CollectiveOptions& options = {});
  Request ialltoall(std::span<const std::byte> send, std::span<std::byte> recv,
                    const CollectiveOptions& options = {});
  Request ireduce(std::span<const std::byte> send, std::span<std::byte> recv,
                  const Reduction& reduction, int root, const CollectiveOptions& options = {});
  Request iallreduce(std::span<const std::byte> send, std::span<std::byte> recv,
                     const Reduction& reduction, const CollectiveOptions& options = {});
  Request ireduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv,
                          const Reduction& reduction, const CollectiveOptions& options = {});
  Request iscan(std::span<const std::byte> send, std::span<std::byte> recv,
                const Reduction& reduction, const CollectiveOptions& options = {});
  Request iexscan(std::span<const std::byte> send, std::span<std::byte> recv,
                  const Reduction& reduction, const CollectiveOptions& options = {});
  Request irun(Collective collective, std::span<const std::byte> send, std::span<std::byte> recv,
               int root, std::uint64_t size, const CollectiveOptions& options = {},
               const Reduction& reduction = {});
  Request irunv(Collective collective, std::span<const std::byte> send, std::span<std::byte> recv,
                int root, std::span<const std::uint64_t> counts,
                const CollectiveOptions& options = {}, const Reduction& reduction = {});
  // A v-form whose counts not every rank knows: a gatherv's or scatterv's (the root's), an
  // alltoallv's (each rank its own row). `counts`: p (p x p for alltoallv) block sizes in
  // bytes, those this rank knows filled in, the others anything. They travel first, on the
  // engine (a bcast from the root, an allgather of the rows), and the call starts as soon as
  // they are here, without another call of the caller's: its data moves while the caller is
  // busy elsewhere. Its algorithm (options.algorithm, "auto" among them) must run no
  // shared-memory steps; the request fails otherwise. `chosen`, if given, is called on the
  // engine's thread with the algorithm the call runs, once its counts are here.
  Request irunv_sharing_counts(Collective collective, std::span<const std::byte> send,
                               std::span<std::byte> recv, int root,
                               std::vector<std::uint64_t> counts,
                               const CollectiveOptions& options = {},
                               std::function<void(std::string_view algorithm)> chosen = {});

  // Work handed to another thread so far: operations started on the engine's progress thread
  // (non-blocking ones, and blocking ones that found another thread driving) and shared-memory
  // group ops queued for the group's thread (those of a call that also uses TCP). A blocking
  // call whose part here runs on the caller's thread adds none.
  std::uint64_t handed_off() const;

  // The algorithm "auto" picks for this call, and the modelled time of every candidate
  // (`element_size`: bytes per element of a reduction).
  std::string explain(Collective collective, std::uint64_t size, int root = 0,
                      std::uint32_t element_size = 1) const;
  // The algorithm name "auto" resolves to (or `options.algorithm` when it names one); the
  // v-forms' with their counts.
  std::string resolve_algorithm(Collective collective, std::uint64_t size, int root,
                                const CollectiveOptions& options = {},
                                std::uint32_t element_size = 1,
                                std::span<const std::uint64_t> counts = {}) const;

 private:
  friend class runtime::JobSharing;  // communicators of one group share a job (the PMPI library)
  std::uint64_t alltoall_block(std::size_t send_bytes) const;  // bytes per rank, checked

  std::unique_ptr<CommunicatorImpl> impl_;
};

}  // namespace multilane
