// runtime/exec/schedule_run.cpp — see schedule_run.hpp.
#include "runtime/exec/schedule_run.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "runtime/exec/chunk_combiner.hpp"
#include "runtime/exec/group_job.hpp"

namespace multilane::runtime {

namespace {

class ScheduleRun : public std::enable_shared_from_this<ScheduleRun> {
 public:
  ScheduleRun(Engine& engine, std::shared_ptr<const Schedule> schedule, const Platform& platform,
              int rank, CallBuffers buffers, CallIdentity identity,
              std::function<void(const std::string&)> done, shm::GroupRunner* groups)
      : engine_(engine),
        schedule_(std::move(schedule)),
        platform_(platform),
        rank_(rank),
        identity_(std::move(identity)),
        done_(std::move(done)),
        program_(schedule_->program(rank)),
        memory_(*schedule_, rank, buffers),
        groups_(groups),
        node_members_(node_members(platform, rank)) {}

  void start() {
    index_messages();
    link_dependencies();
    auto self = shared_from_this();
    const std::string mismatch =
        engine_.begin_call(identity_.sequence, identity_.signature,
                           [self](const std::string& error) { self->fail(error); });
    // Before any operation starts: a receive would take the mismatched frame's bytes at once.
    if (!mismatch.empty()) return finish(mismatch);
    group_ready_.assign(group_order_.size(), false);
    if (!group_order_.empty() && !groups_) {
      return finish(kNoGroupError);
    }
    if (program_.empty()) return finish("");
    for (std::uint32_t i = 0; i < program_.size(); ++i) {
      if (remaining_[i] == 0) ready_.push_back(i);
    }
    drain();
  }

 private:
  // Message k of the call on each ordered pair, counted separately for sends and receives.
  void index_messages() {
    std::vector<std::uint64_t> sends(schedule_->num_ranks(), 0);
    std::vector<std::uint64_t> recvs(schedule_->num_ranks(), 0);
    message_.resize(program_.size(), 0);
    for (std::size_t i = 0; i < program_.size(); ++i) {
      const Op& op = program_[i];
      if (is_group_op(op.kind)) {
        message_[i] = group_order_.size();  // its place among the rank's group ops
        group_order_.push_back(static_cast<std::uint32_t>(i));
      }
      if (op.kind == OpKind::Send) message_[i] = sends[op.peer]++;
      if (is_receive(op.kind)) message_[i] = recvs[op.peer]++;
    }
  }

  void link_dependencies() {
    remaining_.resize(program_.size(), 0);
    dependents_.resize(program_.size());
    for (std::uint32_t i = 0; i < program_.size(); ++i) {
      for (OpIndex dep : schedule_->deps_of(program_[i])) {
        dependents_[dep].push_back(i);
        ++remaining_[i];
      }
    }
  }

  void drain() {
    if (draining_) return;  // an operation that completed at once: the outer loop goes on
    draining_ = true;
    while (!ready_.empty() && !over_) {
      const std::uint32_t i = ready_.back();
      ready_.pop_back();
      launch(i);
    }
    draining_ = false;
  }

  std::vector<int> lanes_to(const Op& op) const {
    if (op.lane != kAnyLane) return {op.lane};
    const int common = std::min(platform_.lanes_of(rank_), platform_.lanes_of(op.peer));
    std::vector<int> lanes(common);
    for (int l = 0; l < common; ++l) lanes[l] = l;
    return lanes;
  }

  void launch(std::uint32_t i) {
    const Op& op = program_[i];
    auto self = shared_from_this();
    auto on_done = [self, i](const std::string& error) { self->op_done(i, error); };
    const MessageKey key{identity_.sequence, message_[i]};
    switch (op.kind) {
      case OpKind::Send: {
        const LinkClass link = platform_.site_of(rank_) == platform_.site_of(op.peer)
                                   ? LinkClass::Lan
                                   : LinkClass::Wan;
        engine_.send(SendRequest{op.peer, lanes_to(op), link, key, identity_.signature,
                                 memory_.bytes(op.range)},
                     on_done);
        break;
      }
      case OpKind::Recv:
        engine_.recv(RecvRequest{.peer = op.peer,
                                 .key = key,
                                 .signature = identity_.signature,
                                 .bytes = memory_.bytes(op.range),
                                 .landed = {}},
                     on_done);
        break;
      case OpKind::RecvReduce: {
        combiners_.resize(program_.size());
        combiners_[i] =
            std::make_unique<ChunkCombiner>(memory_.bytes(op.range), identity_.reduction);
        ChunkCombiner* combiner = combiners_[i].get();
        engine_.recv(RecvRequest{op.peer, key, identity_.signature, combiner->staging(),
                                 [self, combiner](std::uint64_t offset, std::uint64_t length) {
                                   combiner->landed(offset, length);
                                 }},
                     on_done);
        break;
      }
      case OpKind::Copy: {
        const auto to = memory_.bytes(op.range);
        const auto from = memory_.bytes(op.source);
        std::memmove(to.data(), from.data(), to.size());
        op_done(i, "");
        break;
      }
      case OpKind::Reduce: {
        const auto to = memory_.bytes(op.range);
        const auto from = memory_.bytes(op.source);
        reduce_elements(identity_.reduction, to.data(), from.data(),
                        to.size() / element_size(identity_.reduction.type));
        op_done(i, "");
        break;
      }
      default:
        group_ready_[message_[i]] = true;
        submit_ready_group_ops();
        break;
    }
  }

  // Hands the ready group ops to the runner in program order (every rank of the node must run
  // its k-th group call as the node's k-th).
  void submit_ready_group_ops() {
    while (next_group_ < group_order_.size() && group_ready_[next_group_]) {
      const std::uint32_t i = group_order_[next_group_++];
      ++groups_in_flight_;
      auto self = shared_from_this();
      groups_->submit(
          identity_.sequence, next_group_ - 1,
          make_group_job(program_[i], rank_, node_members_, memory_, groups_->config().tuning),
          [self, i](const std::string& error) {
            self->engine_.post([self, i, error] { self->group_done(i, error); });
          });
    }
  }

  void group_done(std::uint32_t i, const std::string& error) {
    --groups_in_flight_;
    if (over_) {
      if (groups_in_flight_ == 0 && deferred_) report(*deferred_);
      return;
    }
    op_done(i, error.empty() ? error : "shared memory: " + error);
  }

  void op_done(std::uint32_t i, const std::string& error) {
    if (over_) return;
    if (!error.empty()) return fail(error);
    if (i < combiners_.size()) combiners_[i].reset();  // its staging memory
    ++completed_;
    for (std::uint32_t next : dependents_[i]) {
      if (--remaining_[next] == 0) ready_.push_back(next);
    }
    if (completed_ == program_.size()) return finish("");
    drain();
  }

  void fail(const std::string& error) { finish(error); }

  void finish(const std::string& error) {
    if (over_) return;
    over_ = true;
    engine_.end_call(identity_.sequence);  // abandons whatever is still pending
    const std::string message = error.empty() ? error : identity_.description + ": " + error;
    if (!error.empty() && groups_ && !group_order_.empty()) {
      groups_->cancel(identity_.sequence, "cancelled: " + error);
    }
    if (groups_in_flight_ > 0) {
      // The group op in flight may still touch the user's buffers: stop it and report once it
      // has returned.
      groups_->interrupt(message);
      deferred_ = message;
      return;
    }
    report(message);
  }

  void report(const std::string& message) {
    deferred_.reset();
    done_(message);
  }

  Engine& engine_;
  std::shared_ptr<const Schedule> schedule_;
  const Platform& platform_;
  int rank_;
  CallIdentity identity_;
  std::function<void(const std::string&)> done_;
  std::span<const Op> program_;
  CallMemory memory_;
  std::vector<std::uint64_t> message_;
  std::vector<std::uint32_t> remaining_;
  std::vector<std::vector<std::uint32_t>> dependents_;
  std::vector<std::uint32_t> ready_;
  std::vector<std::unique_ptr<ChunkCombiner>> combiners_;  // per RecvReduce in flight
  std::size_t completed_ = 0;
  bool draining_ = false;
  bool over_ = false;
  shm::GroupRunner* groups_;
  std::vector<int> node_members_;           // the ranks of this rank's node: its group
  std::vector<std::uint32_t> group_order_;  // the group ops, in program order
  std::vector<bool> group_ready_;           // per group op: its dependencies are done
  std::size_t next_group_ = 0;              // the next group op to hand to the runner
  int groups_in_flight_ = 0;
  std::optional<std::string> deferred_;  // the error to report once no group op is in flight
};

}  // namespace

void start_schedule_run(Engine& engine, std::shared_ptr<const Schedule> schedule,
                        const Platform& platform, int rank, CallBuffers buffers,
                        CallIdentity identity, std::function<void(const std::string&)> done,
                        shm::GroupRunner* groups) {
  std::make_shared<ScheduleRun>(engine, std::move(schedule), platform, rank, buffers,
                                std::move(identity), std::move(done), groups)
      ->start();
}

std::size_t group_op_count(const Schedule& schedule, int rank) {
  const auto program = schedule.program(rank);
  return static_cast<std::size_t>(std::count_if(program.begin(), program.end(),
                                                [](const Op& op) { return is_group_op(op.kind); }));
}

std::uint64_t call_signature(const Schedule& schedule, const BuildParams& params,
                             const Reduction& reduction) {
  std::string text = fmt::format("{}|{}|{}|{}|{}|{}|{}", to_string(schedule.collective),
                                 schedule.algorithm, schedule.root, schedule.size, schedule.segment,
                                 params.wan_pairs, schedule.num_ranks());
  if (is_reduction(schedule.collective)) {
    text += fmt::format("|{}|{}", to_string(reduction.type), to_string(reduction.op));
  }
  const std::uint64_t hash = XXH3_64bits(text.data(), text.size());
  return hash == 0 ? 1 : hash;  // 0 means point-to-point on the wire
}

}  // namespace multilane::runtime
