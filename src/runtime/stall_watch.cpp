// runtime/stall_watch.cpp — stalled-stream detection (see stall_watch.hpp).
#include "runtime/stall_watch.hpp"

#include <algorithm>

namespace multilane::runtime {

StallWatch::StallWatch(int streams, std::chrono::milliseconds floor)
    : last_(static_cast<std::size_t>(std::max(streams, 0))), floor_(floor) {}

bool StallWatch::stalled(int stream, const StreamProgress& progress, Clock::time_point now) {
  Last& last = last_.at(static_cast<std::size_t>(stream));
  const bool busy = progress.unacknowledged > 0;
  if (!busy || !last.busy || progress.acknowledged != last.acknowledged) {
    last = {progress.acknowledged, now, busy};
    return false;
  }
  const auto patience = std::max<Clock::duration>(floor_, 4 * progress.round_trip);
  return now - last.since >= patience;
}

}  // namespace multilane::runtime
