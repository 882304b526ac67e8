// runtime/tcp/stream_governor.cpp — streams in use, adapted to stalls (see
// stream_governor.hpp).
#include "runtime/tcp/stream_governor.hpp"

#include <algorithm>
#include <cmath>

namespace multilane::runtime {

namespace {
// Streams kept beyond those the delivered rate needs: the rate measured since a send began
// includes its slow start, and a window-capped stream rarely runs at its cap.
constexpr double kNeededMargin = 2.0;
}  // namespace

void PathSample::include(const StreamProgress& progress) {
  round_trip = std::max(round_trip, progress.least_round_trip);
  send_window = std::max(send_window, progress.send_window);
}

double MessagePace::acknowledged_rate(Clock::time_point now, std::uint64_t acknowledged) const {
  const double seconds = std::chrono::duration<double>(now - started).count();
  const std::uint64_t delivered = acknowledged - std::min(acknowledged, acknowledged_at_start);
  return seconds > 0 ? static_cast<double>(delivered) / seconds : 0;
}

double MessagePace::message_rate(Clock::time_point now, std::uint64_t bytes) const {
  const double seconds = std::chrono::duration<double>(now - started).count();
  return seconds > 0 ? static_cast<double>(bytes) / seconds : 0;
}

StreamGovernor::StreamGovernor(const StreamGovernorOptions& options)
    : streams_(std::max(options.streams, 1)),
      adapts_(options.adapts),
      in_use_(options.adapts ? std::min(streams_, kCrowdLimit) : streams_) {}

int StreamGovernor::streams_needed(const PathSample& sample) {
  if (sample.send_window == 0) return 1;
  const double seconds = std::chrono::duration<double>(sample.round_trip).count();
  const double per_stream = static_cast<double>(sample.send_window);
  const double needed = kNeededMargin * sample.delivered_rate * seconds / per_stream;
  return static_cast<int>(std::clamp(std::ceil(needed), 1.0, 1e9));
}

void StreamGovernor::stalled(Clock::time_point now, Clock::duration hold,
                             const PathSample& sample) {
  if (!adapts_ || in_use_ == 1) return;
  if (last_decrease_ != Clock::time_point{} && now - last_decrease_ < hold) return;
  const int floor = std::min(streams_needed(sample), streams_);
  const int halved = std::max(in_use_ / 2, floor);
  if (halved >= in_use_) return;
  in_use_ = halved;
  last_decrease_ = now;
}

void StreamGovernor::message_done(bool stalled, const PathSample& sample) {
  if (!adapts_) return;
  const int needed = std::min(streams_needed(sample), streams_);
  const int limit = std::min(std::max(kCrowdLimit, needed), streams_);
  if (!stalled) in_use_ = std::max(in_use_ + 1, needed);
  in_use_ = std::min(in_use_, limit);
}

}  // namespace multilane::runtime
