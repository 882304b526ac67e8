#include "verify/execution.hpp"

namespace multilane::verify {

Executor::Executor(const Schedule& schedule, const Matching& matching)
    : schedule_(schedule), matching_(matching) {
  pending_deps_.resize(schedule.ops.size());
  for (std::size_t g = 0; g < schedule.ops.size(); ++g) {
    pending_deps_[g] = schedule.ops[g].deps_count;
  }
  build_dependents();
  next_transfer_.assign(matching.pair_begin.begin(), matching.pair_begin.end() - 1);
  done_.assign(schedule.ops.size(), false);
  if (!matching.node_call_begin.empty()) {
    next_group_call_.assign(matching.node_call_begin.begin(), matching.node_call_begin.end() - 1);
  }
}

void Executor::build_dependents() {
  const Schedule& s = schedule_;
  dependents_begin_.assign(s.ops.size() + 1, 0);
  for (int r = 0; r < s.num_ranks(); ++r) {
    const std::uint32_t base = s.rank_begin[r];
    for (std::uint32_t g = base; g < s.rank_begin[r + 1]; ++g) {
      for (const OpIndex d : s.deps_of(s.ops[g])) ++dependents_begin_[base + d + 1];
    }
  }
  for (std::size_t g = 0; g < s.ops.size(); ++g) dependents_begin_[g + 1] += dependents_begin_[g];
  dependents_.resize(dependents_begin_.back());
  std::vector<std::uint32_t> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
  for (int r = 0; r < s.num_ranks(); ++r) {
    const std::uint32_t base = s.rank_begin[r];
    for (std::uint32_t g = base; g < s.rank_begin[r + 1]; ++g) {
      for (const OpIndex d : s.deps_of(s.ops[g])) dependents_[fill[base + d]++] = g;
    }
  }
}

bool Executor::run(ExecutionObserver& observer) {
  for (std::uint32_t g = 0; g < schedule_.ops.size(); ++g) {
    if (pending_deps_[g] == 0) worklist_.push_back(g);
  }
  while (!worklist_.empty()) {
    const std::uint32_t g = worklist_.back();
    worklist_.pop_back();
    start(g, observer);
  }
  return completed_ops_ == schedule_.ops.size();
}

void Executor::start(std::uint32_t op, ExecutionObserver& observer) {
  if (schedule_.ops[op].kind == OpKind::Copy || schedule_.ops[op].kind == OpKind::Reduce) {
    observer.on_copy(op);
    complete(op);
    return;
  }
  if (is_group_op(schedule_.ops[op].kind)) {
    run_ready_group_calls(matching_.group_calls[matching_.group_call_of_op[op]].node_group,
                          observer);
    return;
  }
  const std::uint32_t t = matching_.transfer_of_op[op];
  deliver_ready_messages(matching_.pair_of_transfer[t], observer);
}

void Executor::deliver_ready_messages(std::uint32_t pair, ExecutionObserver& observer) {
  std::uint32_t& next = next_transfer_[pair];
  while (next < matching_.pair_begin[pair + 1]) {
    const Transfer& t = matching_.transfers[next];
    if (pending_deps_[t.send] != 0 || pending_deps_[t.recv] != 0) return;
    observer.on_transfer(t);
    ++next;
    ++delivered_;
    complete(t.send);
    complete(t.recv);
  }
}

void Executor::run_ready_group_calls(int node_group, ExecutionObserver& observer) {
  std::uint32_t& next = next_group_call_[node_group];
  while (next < matching_.node_call_begin[node_group + 1]) {
    const GroupCall& call = matching_.group_calls[next];
    for (const std::uint32_t g : call.ops) {
      if (pending_deps_[g] != 0) return;
    }
    observer.on_group_call(call);
    ++next;
    for (const std::uint32_t g : call.ops) complete(g);
  }
}

void Executor::complete(std::uint32_t op) {
  done_[op] = true;
  ++completed_ops_;
  for (std::uint32_t i = dependents_begin_[op]; i < dependents_begin_[op + 1]; ++i) {
    const std::uint32_t d = dependents_[i];
    if (--pending_deps_[d] == 0) worklist_.push_back(d);
  }
}

}  // namespace multilane::verify
