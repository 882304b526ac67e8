// runtime/tcp/stall_watch.cpp — stalled-stream detection (see stall_watch.hpp).
#include "runtime/tcp/stall_watch.hpp"

#include <algorithm>

namespace multilane::runtime {

StallWatch::StallWatch(int streams) : last_(static_cast<std::size_t>(std::max(streams, 0))) {}

bool StallWatch::stalled(int stream, const StreamProgress& progress, Clock::time_point now,
                         const StallPatience& patience) {
  Last& last = last_.at(static_cast<std::size_t>(stream));
  const bool busy = progress.unacknowledged > 0;
  if (!busy || !last.busy || progress.acknowledged != last.acknowledged) {
    last = {progress.acknowledged, now, busy};
    return false;
  }
  return now - last.since >=
         patience.wait(std::max(progress.round_trip, progress.segment_pair_time));
}

}  // namespace multilane::runtime
