// verify/execution.hpp — runs a matched schedule under synchronous semantics.
//
// An operation is ready when all its dependencies have completed. A Copy or a Reduce completes
// as soon as it is ready (the observer's on_copy() sees both). A node's k-th group call happens
// (all its ops complete together) when every member's op is ready and the node's call k-1 has
// happened. The k-th message of an ordered pair is delivered (its Send and Recv complete together)
// when both ends are ready and message k-1 of that pair has been delivered. The executor is a
// worklist: every operation enters it once and every delivery is tried only when one of its ends
// becomes ready or the previous message goes, so a run costs O(ops + dependencies + transfers). The
// observer sees copies and deliveries in the order they happen, which is one valid order among many
// (the race check makes them equivalent).
//
// When the worklist runs dry with operations left, the schedule deadlocks; the final state is
// kept for describe_deadlock() (deadlock.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "multilane/schedule.hpp"
#include "verify/matching.hpp"

namespace multilane::verify {

class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  virtual void on_copy(std::uint32_t op) = 0;
  virtual void on_transfer(const Transfer& transfer) = 0;
  virtual void on_group_call(const GroupCall& call) = 0;
};

class Executor {
 public:
  Executor(const Schedule& schedule, const Matching& matching);

  // Runs until nothing more can happen; returns true when every operation completed.
  bool run(ExecutionObserver& observer);

  std::uint64_t ops_completed() const { return completed_ops_; }
  std::uint64_t transfers_delivered() const { return delivered_; }

  // State after run(), for explaining a deadlock.
  const Schedule& schedule() const { return schedule_; }
  const Matching& matching() const { return matching_; }
  bool done(std::uint32_t op) const { return done_[op]; }
  // Dependencies complete (a Send or Recv may still wait for its partner).
  bool ready(std::uint32_t op) const { return pending_deps_[op] == 0; }
  // The first message of `pair` that has not been delivered yet.
  std::uint32_t next_transfer(std::uint32_t pair) const { return next_transfer_[pair]; }
  // The first group call of node group `n` that has not happened yet.
  std::uint32_t next_group_call(int n) const { return next_group_call_[n]; }

 private:
  void build_dependents();
  void complete(std::uint32_t op);
  void start(std::uint32_t op, ExecutionObserver& observer);
  void deliver_ready_messages(std::uint32_t pair, ExecutionObserver& observer);
  void run_ready_group_calls(int node_group, ExecutionObserver& observer);

  const Schedule& schedule_;
  const Matching& matching_;
  std::vector<std::uint32_t> pending_deps_;      // per op: dependencies not yet complete
  std::vector<std::uint32_t> dependents_begin_;  // CSR of the reverse dependency edges
  std::vector<std::uint32_t> dependents_;
  std::vector<std::uint32_t> next_transfer_;    // per pair
  std::vector<std::uint32_t> next_group_call_;  // per node group
  std::vector<bool> done_;
  std::vector<std::uint32_t> worklist_;  // ready operations not yet started
  std::uint64_t completed_ops_ = 0;
  std::uint64_t delivered_ = 0;
};

}  // namespace multilane::verify
