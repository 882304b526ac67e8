// multilane/schedule.hpp — one collective call as data.
//
// A Schedule holds, for every rank, an ordered program of operations on byte ranges of that
// rank's buffers: send a range to a peer, receive a range from a peer, copy a range locally.
// Each operation lists the earlier operations of the same rank it depends on; an operation may
// start as soon as all of its dependencies have completed (it need not wait for operations
// that merely come before it in the program). Pipelining is explicit: a message cut into
// segments is several operations, and "forward segment k" depends on "receive segment k".
//
// Matching rule (the contract between builders and every consumer):
//   the k-th Send of rank a to rank b matches the k-th Recv of rank b from rank a,
// counted in program order, and the two must have the same length. Messages from a to b are
// delivered in that order (one FIFO channel per ordered pair); a transfer completes when
// both its Send and its Recv have started. A schedule that is correct under these synchronous
// semantics is correct under any amount of buffering.
//
// Buffers: Send and Recv are the user's buffers of the collective (sizes fixed by the
// collective, see collective.hpp); Scratch is a per-rank temporary the schedule asks for.
// Ranges refer to these buffers directly, so an executor can run the schedule zero-copy.
//
// Group operations (the SMP paper's shared-memory collectives): the ranks of one node (one
// Platform node, local rank = position in increasing rank order) run one collective together
// through shared memory. Every group op reads `source` (what this rank contributes) and writes
// `range` (what it gets); `peer` is the group's root (a global rank on the same node). With L
// ranks on the node and a block of s bytes (bcast: the whole message m):
//   GroupBcast      root: source m bytes, range empty;  others: range m bytes
//   GroupScatter    root: source L*s (blocks in local-rank order), range s;  others: range s
//   GroupGather     everyone: source s;  root: range L*s
//   GroupAllgather  everyone: source s, range L*s
//   GroupAlltoall   everyone: source L*s, range L*s (block j goes to local rank j)
// Matching rule: the k-th group op of every rank of a node form the node's k-th group call;
// they must agree on kind, root and s, and the call completes when all of them have started.
//
// Reductions (reduce, allreduce, reduce-scatter, scan, exscan) combine elements instead of moving
// them. The schedule knows only the element size (Schedule::element_size); the element type and the
// operation (reduction.hpp) are the call's, so one schedule serves every type of that size.
//   RecvReduce  receives range.length bytes from `peer` and combines them into `range`:
//               range = range (+) incoming, element by element. It matches a Send exactly as a
//               Recv does (the k-th Send a->b meets the k-th Recv or RecvReduce of b from a),
//               so an executor may combine each chunk as it arrives, straight from the socket's
//               buffer or the shared segment, with no staging copy of the whole message.
//   Reduce      range = range (+) source, locally (like a Copy that combines).
// The destination is the left operand: for an operation that is not commutative, the bytes
// already in `range` come first in rank order. Both read `range` before writing it, so the
// bytes there must have been written (a Copy of the rank's own input usually starts an
// accumulator). Every range of a reduction op is a whole number of elements.
//
// Lanes: a Send or Recv may name the lane (NIC index) it should use; both ends of a transfer
// name the same lane, since lane i of every node is on the same network. kAnyLane means the
// transfer is striped evenly over every lane index that both nodes have (the papers' "link
// aggregation": one transfer at the full node bandwidth). Trees whose nodes send to several
// children at once name explicit lanes, so that each concurrent edge has a NIC of its own.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace multilane {

// The v-forms (MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv, MPI_Alltoallv, and MPI_Reduce_scatter
// as reduce-scatterv) are their plain collective with a block size per rank (per pair of ranks
// for alltoallv): Schedule::counts.
enum class Collective : std::uint8_t {
  Bcast,
  Scatter,
  Gather,
  Allgather,
  Alltoall,
  Reduce,
  Allreduce,
  ReduceScatter,
  Scan,
  Exscan,
  Gatherv,
  Scatterv,
  Allgatherv,
  Alltoallv,
  ReduceScatterv,
};
inline constexpr Collective kAllCollectives[] = {
    Collective::Bcast,      Collective::Scatter,       Collective::Gather,
    Collective::Allgather,  Collective::Alltoall,      Collective::Reduce,
    Collective::Allreduce,  Collective::ReduceScatter, Collective::Scan,
    Collective::Exscan,     Collective::Gatherv,       Collective::Scatterv,
    Collective::Allgatherv, Collective::Alltoallv,     Collective::ReduceScatterv};
// The collectives that move bytes without combining them; each has a group op kind.
inline constexpr Collective kGroupCollectives[] = {Collective::Bcast, Collective::Scatter,
                                                   Collective::Gather, Collective::Allgather,
                                                   Collective::Alltoall};
inline bool is_reduction(Collective c) {
  return (c >= Collective::Reduce && c <= Collective::Exscan) || c == Collective::ReduceScatterv;
}
// The prefix reductions: rank i gets the reduction over ranks 0..i (scan) or 0..i-1 (exscan).
inline bool is_scan(Collective c) {
  return c == Collective::Scan || c == Collective::Exscan;
}
// Whether the collective has a block size per rank (Schedule::counts).
inline bool is_uneven(Collective c) {
  return c >= Collective::Gatherv;
}
// Whether the collective has a root; the others' schedules do not depend on BuildParams::root.
inline bool has_root(Collective c) {
  return c == Collective::Bcast || c == Collective::Scatter || c == Collective::Gather ||
         c == Collective::Reduce || c == Collective::Gatherv || c == Collective::Scatterv;
}
// The v-forms whose counts no rank holds in full in MPI: a gatherv's and a scatterv's are the
// root's, and an alltoallv rank holds its own row. An algorithm that reads every rank's counts
// has them exchanged first (Communicator::irunv_sharing_counts).
inline bool counts_held_apart(Collective c) {
  return c == Collective::Gatherv || c == Collective::Scatterv || c == Collective::Alltoallv;
}
// The collective with one block size that the v-form generalises (itself for the others).
Collective even_form(Collective c);
// The v-form of an even collective (itself for the others and for those without one).
Collective uneven_form(Collective c);
std::string_view to_string(Collective c);
std::optional<Collective> parse_collective(std::string_view name);
// "bcast, scatter, ..., reduce-scatter, gatherv, scatterv, allgatherv or alltoallv".
std::string collective_names();

enum class Buffer : std::uint8_t { Send, Recv, Scratch };
std::string_view to_string(Buffer b);

struct Range {
  Buffer buffer = Buffer::Recv;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t end() const { return offset + length; }
  friend bool operator==(const Range&, const Range&) = default;
};

enum class OpKind : std::uint8_t {
  Send,
  Recv,
  Copy,
  GroupBcast,
  GroupScatter,
  GroupGather,
  GroupAllgather,
  GroupAlltoall,
  RecvReduce,
  Reduce,
};
inline constexpr int kNumOpKinds = 10;
std::string_view to_string(OpKind k);
inline bool is_group_op(OpKind k) {
  return k >= OpKind::GroupBcast && k <= OpKind::GroupAlltoall;
}
// A Recv or a RecvReduce: the receiving end of a transfer.
inline bool is_receive(OpKind k) {
  return k == OpKind::Recv || k == OpKind::RecvReduce;
}
// Send, Recv or RecvReduce: an end of a transfer between two ranks.
inline bool is_transfer(OpKind k) {
  return k == OpKind::Send || is_receive(k);
}
// RecvReduce or Reduce: reads its destination range and combines into it.
inline bool is_combining(OpKind k) {
  return k == OpKind::RecvReduce || k == OpKind::Reduce;
}
// The collective a group op runs on its node, and back.
Collective group_collective(OpKind group_kind);
OpKind group_op_kind(Collective collective);

inline constexpr int kAnyLane = -1;

// Index of an operation within its rank's program.
using OpIndex = std::uint32_t;
inline constexpr OpIndex kNoOp = 0xffffffffu;

struct Op {
  OpKind kind = OpKind::Send;
  std::int8_t lane = kAnyLane;  // Send/Recv: NIC to use
  std::int32_t peer = -1;       // Send/Recv: the other rank; group ops: the group's root
  Range range;   // Send: bytes read; Recv, Copy and group ops: bytes written; RecvReduce and
                 // Reduce: bytes read and written (the accumulator)
  Range source;  // Copy, Reduce and group ops: bytes read
  std::uint32_t deps_begin = 0;  // into Schedule::deps
  std::uint32_t deps_count = 0;
};

// A whole collective call. Plain data: consumers read it, tests may mutate it.
struct Schedule {
  Collective collective = Collective::Bcast;
  std::string algorithm;
  int root = 0;
  std::uint64_t size = 0;          // bytes: the whole message (bcast) or per rank (others)
  std::uint64_t segment = 0;       // pipelining unit used by the builder (0: not pipelined)
  std::uint32_t element_size = 1;  // reductions: bytes per element (no range splits one)
  // The v-forms: the bytes of each block (collective.hpp says which); empty for the others.
  // `size` is then the largest of them.
  std::vector<std::uint64_t> counts;

  std::vector<Op> ops;  // every rank's program, rank after rank
  std::vector<std::uint32_t>
      rank_begin;             // size num_ranks()+1: rank r owns ops[rank_begin[r], rank_begin[r+1])
  std::vector<OpIndex> deps;  // dependency lists, indices local to the rank
  std::vector<std::uint64_t> scratch_bytes;  // per rank

  int num_ranks() const { return rank_begin.empty() ? 0 : static_cast<int>(rank_begin.size()) - 1; }
  std::span<const Op> program(int rank) const {
    return {ops.data() + rank_begin[rank], ops.data() + rank_begin[rank + 1]};
  }
  std::span<const OpIndex> deps_of(const Op& op) const {
    return {deps.data() + op.deps_begin, op.deps_count};
  }
  std::size_t num_ops() const { return ops.size(); }
};

// Builds a Schedule rank by rank. Zero-length sends, receives and copies are dropped (their
// index is kNoOp); kNoOp and repeated dependencies are ignored, so builders handle empty messages
// and empty segments without special cases.
class ScheduleBuilder {
 public:
  ScheduleBuilder(Collective collective, std::string algorithm, int num_ranks, int root,
                  std::uint64_t size, std::uint64_t segment);

  // Starts the program of `rank`; ranks must be started in increasing order, each once.
  void start_rank(int rank);
  OpIndex send(int peer, Range range, int lane = kAnyLane, std::span<const OpIndex> deps = {});
  OpIndex recv(int peer, Range range, int lane = kAnyLane, std::span<const OpIndex> deps = {});
  OpIndex copy(Range to, Range from, std::span<const OpIndex> deps = {});
  OpIndex recv_reduce(int peer, Range range, int lane = kAnyLane,
                      std::span<const OpIndex> deps = {});
  OpIndex reduce(Range to, Range from, std::span<const OpIndex> deps = {});
  OpIndex send(int peer, Range range, int lane, std::initializer_list<OpIndex> deps) {
    return send(peer, range, lane, std::span<const OpIndex>(deps.begin(), deps.size()));
  }
  OpIndex recv(int peer, Range range, int lane, std::initializer_list<OpIndex> deps) {
    return recv(peer, range, lane, std::span<const OpIndex>(deps.begin(), deps.size()));
  }
  OpIndex copy(Range to, Range from, std::initializer_list<OpIndex> deps) {
    return copy(to, from, std::span<const OpIndex>(deps.begin(), deps.size()));
  }
  OpIndex recv_reduce(int peer, Range range, int lane, std::initializer_list<OpIndex> deps) {
    return recv_reduce(peer, range, lane, std::span<const OpIndex>(deps.begin(), deps.size()));
  }
  OpIndex reduce(Range to, Range from, std::initializer_list<OpIndex> deps) {
    return reduce(to, from, std::span<const OpIndex>(deps.begin(), deps.size()));
  }
  // A group op (see above); never dropped, even with empty ranges: every rank of the node must
  // take part in the group call.
  OpIndex group(OpKind kind, int group_root, Range to, Range from,
                std::span<const OpIndex> deps = {});
  OpIndex group(OpKind kind, int group_root, Range to, Range from,
                std::initializer_list<OpIndex> deps) {
    return group(kind, group_root, to, from, std::span<const OpIndex>(deps.begin(), deps.size()));
  }
  // The current rank needs at least `bytes` of scratch.
  void need_scratch(std::uint64_t bytes);
  int current_rank() const { return current_; }
  // Operations the current rank has so far (the next one's index).
  OpIndex ops_of_current_rank() const {
    return static_cast<OpIndex>(schedule_.ops.size() - schedule_.rank_begin[current_]);
  }
  void set_element_size(std::uint32_t bytes) { schedule_.element_size = bytes; }
  // The v-forms: the block sizes, which the schedule carries for its consumers.
  void set_counts(std::vector<std::uint64_t> counts) { schedule_.counts = std::move(counts); }

  // Closes the last rank (ranks never started get empty programs) and returns the schedule.
  Schedule finish();

 private:
  OpIndex append(Op op, std::span<const OpIndex> deps);
  // Send, Recv, RecvReduce; Copy, Reduce (dropped when empty).
  OpIndex transfer(OpKind kind, int peer, Range range, int lane, std::span<const OpIndex> deps);
  OpIndex local(OpKind kind, Range to, Range from, std::span<const OpIndex> deps);
  Schedule schedule_;
  int current_ = -1;
};

// The same collective with every arrow reversed: sends become receives and vice versa, copies
// swap source and destination (a schedule with reduction ops has no reverse: throws
// std::logic_error), dependencies point the other way, and the Send and Recv
// buffers swap roles. Turns a scatter into a gather (the papers' "gather is scatter with
// every arrow reversed") and is an involution.
Schedule reverse_schedule(const Schedule& schedule, Collective reversed_collective,
                          std::string algorithm);

// Human-readable listing: one line per operation, grouped by rank.
std::string schedule_to_text(const Schedule& schedule, int max_ranks = -1);
// JSON: {"collective":..., "algorithm":..., "ranks":[{"rank":0,"scratch":0,"ops":[...]}]}
std::string schedule_to_json(const Schedule& schedule, int indent = -1);

}  // namespace multilane
