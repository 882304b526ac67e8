#include "sim/reduction_lowering.hpp"

#include <algorithm>
#include <vector>

namespace multilane::sim {

bool has_recv_reduce(const Schedule& schedule) {
  return std::any_of(schedule.ops.begin(), schedule.ops.end(),
                     [](const Op& op) { return op.kind == OpKind::RecvReduce; });
}

Schedule lower_recv_reduce(const Schedule& s) {
  ScheduleBuilder b(s.collective, s.algorithm, s.num_ranks(), s.root, s.size, s.segment);
  b.set_element_size(s.element_size);
  std::vector<OpIndex> lowered;  // per op of the rank: the op its dependents wait for
  std::vector<OpIndex> deps;
  for (int r = 0; r < s.num_ranks(); ++r) {
    b.start_rank(r);
    b.need_scratch(s.scratch_bytes[r]);
    lowered.clear();
    for (const Op& op : s.program(r)) {
      deps.clear();
      for (const OpIndex d : s.deps_of(op)) deps.push_back(lowered[d]);
      OpIndex at = kNoOp;
      switch (op.kind) {
        case OpKind::Send:
          at = b.send(op.peer, op.range, op.lane, deps);
          break;
        case OpKind::Recv:
          at = b.recv(op.peer, op.range, op.lane, deps);
          break;
        case OpKind::RecvReduce: {
          const OpIndex received = b.recv(op.peer, op.range, op.lane, deps);
          at = b.reduce(op.range, op.range, {received});
          break;
        }
        case OpKind::Copy:
          at = b.copy(op.range, op.source, deps);
          break;
        case OpKind::Reduce:
          at = b.reduce(op.range, op.source, deps);
          break;
        default:
          at = b.group(op.kind, op.peer, op.range, op.source, deps);
          break;
      }
      lowered.push_back(at);
    }
  }
  return b.finish();
}

}  // namespace multilane::sim
