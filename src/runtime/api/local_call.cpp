// runtime/api/local_call.cpp — see local_call.hpp.
#include "runtime/api/local_call.hpp"

#include <algorithm>
#include <cstring>

#include "runtime/exec/group_job.hpp"

namespace multilane::runtime {

namespace {

void run_program(const Schedule& schedule, std::span<const int> members, int rank,
                 CallMemory& memory, const Reduction& reduction, shm::ShmGroup* group,
                 const shm::TuningTable* tuning) {
  for (const Op& op : schedule.program(rank)) {
    if (op.kind == OpKind::Copy) {
      const auto to = memory.bytes(op.range);
      std::memmove(to.data(), memory.bytes(op.source).data(), to.size());
    } else if (op.kind == OpKind::Reduce) {
      const auto to = memory.bytes(op.range);
      reduce_elements(reduction, to.data(), memory.bytes(op.source).data(),
                      to.size() / element_size(reduction.type));
    } else {
      run_group_op(op, rank, members, memory, *tuning, *group);
    }
  }
}

// Whether `rank`'s program can run here: no sends or receives, dependencies pointing back.
bool is_local_program(const Schedule& schedule, int rank) {
  const auto program = schedule.program(rank);
  for (std::size_t i = 0; i < program.size(); ++i) {
    const Op& op = program[i];
    if (op.kind != OpKind::Copy && op.kind != OpKind::Reduce && !is_group_op(op.kind)) {
      return false;
    }
    const auto deps = schedule.deps_of(op);
    if (std::any_of(deps.begin(), deps.end(), [i](OpIndex d) { return d >= i; })) return false;
  }
  return true;
}

}  // namespace

bool run_local_call(const Schedule& schedule, const RankPlan& plan, int rank, CallBuffers buffers,
                    const CallIdentity& identity, shm::GroupRunner* groups,
                    std::vector<std::byte>& scratch, Outcome& outcome) {
  if (!is_local_program(schedule, rank)) return false;
  CallMemory memory(schedule, rank, buffers, scratch);
  if (group_op_count(schedule, rank) == 0) {
    run_program(schedule, plan.node_members, rank, memory, identity.reduction, nullptr, nullptr);
    outcome.reset();
    return true;
  }
  if (!groups) {
    outcome = Failure{ErrorKind::usage,
                      describe_call(schedule, identity.sequence) + ": " + kNoGroupError};
    return true;
  }
  // One pointer captured: the job fits std::function's own storage (no allocation).
  struct Run {
    const Schedule& schedule;
    const RankPlan& plan;
    int rank;
    CallMemory& memory;
    const CallIdentity& identity;
    shm::GroupRunner& groups;
  } run{schedule, plan, rank, memory, identity, *groups};
  const bool ran = groups->run_here(
      [&run](shm::ShmGroup& group) {
        run_program(run.schedule, run.plan.node_members, run.rank, run.memory,
                    run.identity.reduction, &group, &run.groups.config().tuning);
      },
      outcome);
  if (ran && outcome) {
    outcome->text =
        describe_call(schedule, identity.sequence) + ": shared memory: " + outcome->text;
  }
  return ran;
}

}  // namespace multilane::runtime
