#include "emu/delay_line/wan_shaper.hpp"

#include <algorithm>
#include <cmath>

namespace multilane::emu {

WanShaper::WanShaper(double bps, std::int64_t latency_ns, std::uint64_t queue_bytes)
    : ns_per_byte_(bps > 0 ? 1e9 / bps : 0), latency_ns_(latency_ns), queue_bytes_(queue_bytes) {}

std::optional<std::int64_t> WanShaper::admit(std::size_t bytes, std::int64_t now_ns) {
  if (ns_per_byte_ == 0) return now_ns + latency_ns_;
  const double now = static_cast<double>(now_ns);
  const double start = std::max(now, busy_until_ns_);
  const double backlog = (start - now) / ns_per_byte_;
  if (backlog + static_cast<double>(bytes) > static_cast<double>(queue_bytes_)) {
    return std::nullopt;
  }
  busy_until_ns_ = start + static_cast<double>(bytes) * ns_per_byte_;
  return std::llround(busy_until_ns_) + latency_ns_;
}

std::uint64_t WanShaper::backlog_bytes(std::int64_t now_ns) const {
  if (ns_per_byte_ == 0) return 0;
  const double ahead = busy_until_ns_ - static_cast<double>(now_ns);
  return ahead > 0 ? static_cast<std::uint64_t>(ahead / ns_per_byte_) : 0;
}

}  // namespace multilane::emu
