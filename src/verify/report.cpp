#include "verify/report.hpp"

#include <fmt/format.h>

namespace multilane::verify {

void ErrorSink::add(std::string message) {
  if (!full()) errors_.push_back(std::move(message));
}

std::string describe_action(const Op& op) {
  switch (op.kind) {
    case OpKind::Send:
      return fmt::format("send to rank {}", op.peer);
    case OpKind::Recv:
      return fmt::format("recv from rank {}", op.peer);
    case OpKind::Copy:
      return "copy";
    case OpKind::RecvReduce:
      return fmt::format("recv-reduce from rank {}", op.peer);
    case OpKind::Reduce:
      return "reduce";
    case OpKind::GroupBcast:
    case OpKind::GroupScatter:
    case OpKind::GroupGather:
    case OpKind::GroupAllgather:
    case OpKind::GroupAlltoall:
      return fmt::format("{}, root rank {}", to_string(op.kind), op.peer);
  }
  return fmt::format("operation of unknown kind {}", static_cast<int>(op.kind));
}

std::string describe_op(int rank, OpIndex index, const Op& op) {
  return fmt::format("rank {} op #{} ({})", rank, index, describe_action(op));
}

std::string describe_local_op(OpIndex index, const Op& op) {
  return fmt::format("op #{} ({})", index, describe_action(op));
}

std::string describe_range(Buffer buffer, std::uint64_t begin, std::uint64_t end) {
  return fmt::format("{}[{},{})", to_string(buffer), begin, end);
}

}  // namespace multilane::verify
