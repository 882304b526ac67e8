// verify/report.hpp — how the verifier's checks word and collect their findings.
//
// Every check writes complete sentences into one ErrorSink, which keeps the first
// `max_errors`; checks ask full() to stop early once nothing more would be kept. The describe_*
// helpers give all messages the same vocabulary:
//   rank 3 op #5 (send to rank 4)      recv[4096,8192)      rank 0 input[0,4096)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane::verify {

class ErrorSink {
 public:
  explicit ErrorSink(int max_errors) : max_errors_(max_errors < 1 ? 1 : max_errors) {}

  void add(std::string message);
  bool full() const { return static_cast<int>(errors_.size()) >= max_errors_; }
  bool empty() const { return errors_.empty(); }
  std::vector<std::string> take() { return std::move(errors_); }

 private:
  int max_errors_;
  std::vector<std::string> errors_;
};

// "send to rank 4", "recv from rank 1", "copy"
std::string describe_action(const Op& op);
// "rank 3 op #5 (send to rank 4)"
std::string describe_op(int rank, OpIndex index, const Op& op);
// "op #5 (send to rank 4)", for a second operation of the same rank
std::string describe_local_op(OpIndex index, const Op& op);
// "recv[4096,8192)"
std::string describe_range(Buffer buffer, std::uint64_t begin, std::uint64_t end);
inline std::string describe_range(const Range& r) {
  return describe_range(r.buffer, r.offset, r.end());
}

}  // namespace multilane::verify
