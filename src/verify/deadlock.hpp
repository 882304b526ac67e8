// verify/deadlock.hpp — explains why an execution got stuck, as one wait-for cycle.
//
// Every operation that never completed waits for another one that never completed:
//   its dependency      (the first unfinished one it lists),
//   its match           (the other end of its message is not ready),
//   an earlier message  (both ends are ready but an earlier message of the same ordered pair
//                        has not been delivered; FIFO).
// Following these edges from any stuck operation must revisit one, which closes a cycle. The
// cycle is printed starting from its lowest (rank, op), so the text is deterministic.
#pragma once

#include <string>

#include "verify/execution.hpp"

namespace multilane::verify {

// Requires executor.run() to have returned false.
std::string describe_deadlock(const Executor& executor);

}  // namespace multilane::verify
