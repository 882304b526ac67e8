// runtime/exec/schedule_run.cpp — see schedule_run.hpp.
#include "runtime/exec/schedule_run.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <optional>
#include <vector>

#include "multilane/algorithms.hpp"
#include "runtime/exec/chunk_combiner.hpp"
#include "runtime/exec/group_job.hpp"
#include "runtime/transport/call_space.hpp"

namespace multilane::runtime {

std::shared_ptr<const RankPlan> plan_rank(const Schedule& schedule, const Platform& platform,
                                          int rank, std::span<const int> job_ranks) {
  auto plan = std::make_shared<RankPlan>();
  const std::span<const Op> program = schedule.program(rank);
  std::vector<std::uint64_t> sends(schedule.num_ranks(), 0);
  std::vector<std::uint64_t> recvs(schedule.num_ranks(), 0);
  plan->message.resize(program.size(), 0);
  plan->waits_for.resize(program.size(), 0);
  plan->dependents.resize(program.size());
  for (std::uint32_t i = 0; i < program.size(); ++i) {
    const Op& op = program[i];
    if (is_group_op(op.kind)) {
      plan->message[i] = plan->group_order.size();
      plan->group_order.push_back(i);
    }
    if (op.kind == OpKind::Send) plan->message[i] = sends[op.peer]++;
    if (is_receive(op.kind)) plan->message[i] = recvs[op.peer]++;
    for (OpIndex dep : schedule.deps_of(op)) {
      plan->dependents[dep].push_back(i);
      ++plan->waits_for[i];
    }
  }
  plan->node_members = node_members(platform, rank);
  plan->job_ranks.assign(job_ranks.begin(), job_ranks.end());
  return plan;
}

namespace {

// Keeps the memory of one freed object of each type for the next one of that type: a loop of
// small calls then allocates nothing for its runs. A run is made on the caller's thread and
// may be freed on another (the progress thread's), so the kept block changes hands atomically.
template <typename T>
struct RecyclingAllocator {
  using value_type = T;
  RecyclingAllocator() = default;
  template <typename U>
  explicit RecyclingAllocator(const RecyclingAllocator<U>&) {}

  T* allocate(std::size_t n) {
    if (n == 1) {
      if (void* kept = kept_.exchange(nullptr)) return static_cast<T*>(kept);
    }
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) {
    void* none = nullptr;
    if (n == 1 && kept_.compare_exchange_strong(none, p)) return;
    std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const RecyclingAllocator<U>&) const {
    return true;
  }

 private:
  static inline std::atomic<void*> kept_{nullptr};
};

// A run's dataflow state: per op, how many of its dependencies are not done yet, and the ops
// ready to launch (a stack: each op enters it once, the last one in first). A program of up to
// kInlineOps ops (a small call's, on a few dozen ranks) keeps both in the run itself, without
// an allocation; a longer one in one vector.
class Dataflow {
 public:
  explicit Dataflow(std::span<const std::uint32_t> waits_for)
      : counts_(storage(2 * waits_for.size())) {
    std::copy(waits_for.begin(), waits_for.end(), counts_.begin());
    for (std::uint32_t i = 0; i < waits_for.size(); ++i) {
      if (waits_for[i] == 0) push_ready(i);
    }
  }
  Dataflow(const Dataflow&) = delete;  // counts_ may point into the object itself
  Dataflow& operator=(const Dataflow&) = delete;
  // One dependency of op `i` is done: it is ready when that was the last.
  void dependency_done(std::uint32_t i) {
    if (--counts_[i] == 0) push_ready(i);
  }
  bool has_ready() const { return ready_ > 0; }
  std::uint32_t pop_ready() { return counts_[ops() + --ready_]; }

 private:
  static constexpr std::size_t kInlineOps = 32;
  std::span<std::uint32_t> storage(std::size_t entries) {
    if (entries <= inline_.size()) return std::span(inline_).first(entries);
    heap_.resize(entries);
    return heap_;
  }
  void push_ready(std::uint32_t i) { counts_[ops() + ready_++] = i; }
  std::size_t ops() const { return counts_.size() / 2; }

  std::array<std::uint32_t, 2 * kInlineOps> inline_;  // not zero-filled: written before read
  std::vector<std::uint32_t> heap_;
  std::span<std::uint32_t> counts_;  // [0, ops()): dependencies left; then the ready stack
  std::size_t ready_ = 0;
};

// One flag per group op, in the run itself for up to 64 (no allocation), else in a vector.
class ReadyFlags {
 public:
  void set(std::size_t k) {
    if (k < 64) {
      inline_ |= std::uint64_t{1} << k;
      return;
    }
    if (more_.size() <= k - 64) more_.resize(k - 63, false);
    more_[k - 64] = true;
  }
  bool test(std::size_t k) const {
    if (k < 64) return ((inline_ >> k) & 1U) != 0;
    return k - 64 < more_.size() && more_[k - 64];
  }

 private:
  std::uint64_t inline_ = 0;
  std::vector<bool> more_;
};

// The combiners of a run's RecvReduce ops in flight, by op: the first kInline in the run itself
// (a small reduction then allocates nothing), more on the heap.
class Combiners {
 public:
  ChunkCombiner& make(std::uint32_t op, std::span<std::byte> destination,
                      const Reduction& reduction) {
    for (Slot& slot : inline_) {
      if (slot.combiner) continue;
      slot.op = op;
      return slot.combiner.emplace(destination, reduction);
    }
    more_.emplace_back(op, std::make_unique<ChunkCombiner>(destination, reduction));
    return *more_.back().second;
  }
  // Frees op's combiner, if it has one (its staging memory).
  void drop(std::uint32_t op) {
    for (Slot& slot : inline_) {
      if (slot.combiner && slot.op == op) return slot.combiner.reset();
    }
    std::erase_if(more_, [op](const auto& entry) { return entry.first == op; });
  }

 private:
  static constexpr std::size_t kInline = 4;
  struct Slot {
    std::uint32_t op = 0;
    std::optional<ChunkCombiner> combiner;
  };
  std::array<Slot, kInline> inline_;
  std::vector<std::pair<std::uint32_t, std::unique_ptr<ChunkCombiner>>> more_;
};

class ScheduleRun : public std::enable_shared_from_this<ScheduleRun> {
 public:
  ScheduleRun(Engine& engine, std::shared_ptr<const Schedule> schedule,
              std::shared_ptr<const RankPlan> plan, const Platform& platform, int rank,
              CallBuffers buffers, CallIdentity identity, Completion done, shm::GroupRunner* groups,
              std::atomic<int>* in_flight, std::vector<std::byte>* scratch)
      : engine_(engine),
        schedule_(std::move(schedule)),
        plan_(std::move(plan)),
        platform_(platform),
        rank_(rank),
        identity_(std::move(identity)),
        done_(std::move(done)),
        program_(schedule_->program(rank)),
        memory_(scratch ? CallMemory(*schedule_, rank, buffers, *scratch)
                        : CallMemory(*schedule_, rank, buffers)),
        dataflow_(plan_->waits_for),
        groups_(groups),
        in_flight_(in_flight) {}

  void start() {
    // The engine owns the run until end_call(), so its callbacks hold a plain `this` (small
    // enough for std::function to keep without allocating); it drops or calls them by then,
    // and finish() calls end_call() before the run reports. Each callback that can end the
    // call holds the run alive until it returns.
    const Outcome mismatch = engine_.begin_call(
        identity_.sequence, identity_.signature,
        [this](const Outcome& error) {
          const auto keep = shared_from_this();
          finish(error);
        },
        shared_from_this());
    // Before any operation starts: a receive would take the mismatched frame's bytes at once.
    if (mismatch) return finish(mismatch);
    if (!plan_->group_order.empty() && !groups_) {
      return finish(Failure{ErrorKind::usage, kNoGroupError});
    }
    if (program_.empty()) return finish(kSucceeded);
    drain();
  }

 private:
  void drain() {
    if (draining_) return;  // an operation that completed at once: the outer loop goes on
    draining_ = true;
    do {
      while (dataflow_.has_ready() && !over_) launch(dataflow_.pop_ready());
    } while (!over_ && start_ready_group_ops());
    draining_ = false;
  }

  LaneRange lanes_to(const Op& op) const {
    if (op.lane != kAnyLane) return {.first = op.lane, .count = 1};
    return {.first = 0, .count = std::min(platform_.lanes_of(rank_), platform_.lanes_of(op.peer))};
  }

  void launch(std::uint32_t i) {
    const Op& op = program_[i];
    auto on_done = [this, i](const Outcome& error) {
      const auto keep = shared_from_this();
      op_done(i, error);
    };
    const MessageKey key{identity_.sequence, plan_->message[i]};
    if (op.kind == OpKind::Send) ++sends_in_flight_;
    if (is_receive(op.kind)) receiving_ += op.range.length;
    switch (op.kind) {
      case OpKind::Send: {
        const LinkClass link = platform_.site_of(rank_) == platform_.site_of(op.peer)
                                   ? LinkClass::Lan
                                   : LinkClass::Wan;
        engine_.send(SendRequest{plan_->engine_peer(op.peer), lanes_to(op), link, key,
                                 identity_.signature, memory_.bytes(op.range)},
                     on_done);
        break;
      }
      case OpKind::Recv:
        engine_.recv(RecvRequest{.peer = plan_->engine_peer(op.peer),
                                 .key = key,
                                 .signature = identity_.signature,
                                 .bytes = memory_.bytes(op.range),
                                 .landed = {}},
                     on_done);
        break;
      case OpKind::RecvReduce: {
        ChunkCombiner* combiner = &combiners_.make(i, memory_.bytes(op.range), identity_.reduction);
        engine_.recv(
            RecvRequest{plan_->engine_peer(op.peer), key, identity_.signature, combiner->staging(),
                        [combiner](std::uint64_t offset, std::uint64_t length) {
                          combiner->landed(offset, length);
                        }},
            on_done);
        break;
      }
      case OpKind::Copy: {
        const auto to = memory_.bytes(op.range);
        const auto from = memory_.bytes(op.source);
        std::memmove(to.data(), from.data(), to.size());
        op_done(i, kSucceeded);
        break;
      }
      case OpKind::Reduce: {
        const auto to = memory_.bytes(op.range);
        const auto from = memory_.bytes(op.source);
        reduce_elements(identity_.reduction, to.data(), from.data(),
                        to.size() / element_size(identity_.reduction.type));
        op_done(i, kSucceeded);
        break;
      }
      default:
        group_ready_.set(plan_->message[i]);
        break;
    }
  }

  // Starts the ready group ops in program order (every rank of the node must run its k-th
  // group call as the node's k-th). When this rank has nothing else to do but wait for small
  // receives and a blocking caller drives the engine alone, the next one runs here, on the
  // caller's thread: nothing can then be held up by it, so it may block the engine. Otherwise
  // the ops go to the runner's thread, and the engine keeps moving the call's messages
  // meanwhile. Returns true when it ran one here (its dependents may be ready now).
  bool start_ready_group_ops() {
    while (next_group_ < plan_->group_order.size() && group_ready_.test(next_group_)) {
      const std::size_t k = next_group_++;
      const std::uint32_t i = plan_->group_order[k];
      if (run_group_op_here(k, i)) return true;
      ++groups_in_flight_;
      auto self = shared_from_this();
      groups_->submit(identity_.sequence, k,
                      make_group_job(program_[i], rank_, plan_->node_members, memory_,
                                     groups_->config().tuning),
                      [self, i](const Outcome& error) {
                        self->engine_.post([self, i, error] { self->group_done(i, error); });
                      });
    }
    return false;
  }

  // A receive in flight may wait meanwhile if it is small: its sender's bytes go to this
  // rank's socket buffers whether or not anybody reads them, so nobody waits on this rank.
  static constexpr std::uint64_t kReceivableWhileBlocked = 16 * 1024;

  bool run_group_op_here(std::size_t k, std::uint32_t i) {
    if (sends_in_flight_ > 0 || receiving_ > kReceivableWhileBlocked || groups_in_flight_ > 0 ||
        dataflow_.has_ready() || !engine_.blocking_call_drives_alone()) {
      return false;
    }
    const shm::GroupRunner::Job job = [this, i](shm::ShmGroup& group) {
      run_group_op(program_[i], rank_, plan_->node_members, memory_, groups_->config().tuning,
                   group);
    };
    Outcome outcome;
    if (!groups_->run_here(identity_.sequence, k, job, outcome)) return false;
    op_done(i, in_shared_memory(outcome));
    return true;
  }

  void group_done(std::uint32_t i, const Outcome& outcome) {
    --groups_in_flight_;
    if (over_) {
      if (groups_in_flight_ == 0 && deferred_) report(*deferred_);
      return;
    }
    op_done(i, in_shared_memory(outcome));
  }

  static Outcome in_shared_memory(const Outcome& outcome) {
    if (!outcome) return outcome;
    return Failure{outcome->kind, "shared memory: " + outcome->text};
  }

  void op_done(std::uint32_t i, const Outcome& error) {
    const Op& op = program_[i];
    if (op.kind == OpKind::Send) --sends_in_flight_;
    if (is_receive(op.kind)) receiving_ -= op.range.length;
    if (over_) return;
    if (error) return finish(error);
    if (op.kind == OpKind::RecvReduce) combiners_.drop(i);
    ++completed_;
    for (std::uint32_t next : plan_->dependents[i]) dataflow_.dependency_done(next);
    if (completed_ == program_.size()) return finish(kSucceeded);
    drain();
  }

  void finish(const Outcome& error) {
    if (over_) return;
    over_ = true;
    engine_.end_call(identity_.sequence);  // abandons whatever is still pending
    Outcome message;
    if (error) {
      message =
          Failure{error->kind, describe_call(*schedule_, identity_.sequence) + ": " + error->text};
      if (groups_ && !plan_->group_order.empty()) {
        groups_->cancel(identity_.sequence, {error->kind, "cancelled: " + error->text});
      }
    }
    if (groups_in_flight_ > 0) {
      // The group op in flight may still touch the user's buffers: stop it and report once it
      // has returned.
      if (message) groups_->interrupt(*message);
      deferred_ = message;
      return;
    }
    report(message);
  }

  void report(const Outcome& message) {
    deferred_.reset();
    if (in_flight_) in_flight_->fetch_sub(1);
    done_(message);
  }

  Engine& engine_;
  std::shared_ptr<const Schedule> schedule_;
  std::shared_ptr<const RankPlan> plan_;
  const Platform& platform_;
  int rank_;
  CallIdentity identity_;
  Completion done_;
  std::span<const Op> program_;
  CallMemory memory_;
  Dataflow dataflow_;
  Combiners combiners_;  // of the RecvReduce ops in flight
  std::size_t completed_ = 0;
  bool draining_ = false;
  bool over_ = false;
  shm::GroupRunner* groups_;
  ReadyFlags group_ready_;       // per group op: its dependencies are done
  int sends_in_flight_ = 0;      // launched and not completed
  std::uint64_t receiving_ = 0;  // bytes of the receives launched and not completed
  std::size_t next_group_ = 0;   // the next group op to hand to the runner
  int groups_in_flight_ = 0;
  std::optional<Outcome> deferred_;  // the outcome to report once no group op is in flight
  std::atomic<int>* in_flight_;
};

}  // namespace

std::string describe_call(const Schedule& schedule, std::uint64_t sequence) {
  std::string text = fmt::format("{} {} ({}", to_string(schedule.collective), call_label(sequence),
                                 schedule.algorithm);
  if (schedule.collective == Collective::Bcast || schedule.collective == Collective::Scatter ||
      schedule.collective == Collective::Gather || schedule.collective == Collective::Reduce) {
    text += fmt::format(", root {}", schedule.root);
  }
  return text + fmt::format(", {} bytes)", schedule.size);
}

void start_schedule_run(Engine& engine, std::shared_ptr<const Schedule> schedule,
                        std::shared_ptr<const RankPlan> plan, const Platform& platform, int rank,
                        CallBuffers buffers, CallIdentity identity, Completion done,
                        shm::GroupRunner* groups, std::atomic<int>* in_flight,
                        std::vector<std::byte>* scratch) {
  std::allocate_shared<ScheduleRun>(RecyclingAllocator<ScheduleRun>(), engine, std::move(schedule),
                                    std::move(plan), platform, rank, buffers, std::move(identity),
                                    std::move(done), groups, in_flight, scratch)
      ->start();
}

std::size_t group_op_count(const Schedule& schedule, int rank) {
  const auto program = schedule.program(rank);
  return static_cast<std::size_t>(std::count_if(program.begin(), program.end(),
                                                [](const Op& op) { return is_group_op(op.kind); }));
}

std::uint64_t call_signature(const Schedule& schedule, const BuildParams& params,
                             const Reduction& reduction) {
  const AlgorithmInfo* info = find_algorithm(schedule.collective, schedule.algorithm);
  const bool own_counts = !schedule.counts.empty() && info && info->own_counts_only;
  // `size` is the largest count: with own counts, the largest this rank knows.
  std::string text = fmt::format("{}|{}|{}|{}|{}|{}|{}", to_string(schedule.collective),
                                 schedule.algorithm, schedule.root, own_counts ? 0 : schedule.size,
                                 schedule.segment, params.wan_pairs, schedule.num_ranks());
  if (is_reduction(schedule.collective)) {
    text += fmt::format("|{}|{}", to_string(reduction.type), to_string(reduction.op));
  }
  std::uint64_t hash = XXH3_64bits(text.data(), text.size());
  if (!schedule.counts.empty() && !own_counts) {  // ranks that disagree must not match
    hash ^= XXH3_64bits(schedule.counts.data(), schedule.counts.size() * sizeof(std::uint64_t));
  }
  return hash == 0 ? 1 : hash;  // 0 means point-to-point on the wire
}

}  // namespace multilane::runtime
