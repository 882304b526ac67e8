// runtime/tcp/stream_progress.cpp — TCP_INFO and SIOCOUTQ of a stream (see
// stream_progress.hpp).
#include "runtime/tcp/stream_progress.hpp"

#include <linux/in.h>  // IPPROTO_TCP, without glibc's netinet headers
#include <linux/sockios.h>
#include <linux/tcp.h>  // glibc's tcp_info lacks tcpi_bytes_acked
#include <sys/ioctl.h>
#include <sys/socket.h>

namespace multilane::runtime {

StreamProgress tcp_progress(int fd) {
  StreamProgress progress;
  if (fd < 0) return progress;
  tcp_info info{};
  socklen_t length = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) == 0) {
    progress.acknowledged = info.tcpi_bytes_acked;
    progress.round_trip = std::chrono::microseconds(info.tcpi_rtt);
    progress.least_round_trip = std::chrono::microseconds(info.tcpi_min_rtt);
    progress.send_window = info.tcpi_snd_wnd;
    const std::uint64_t rate = info.tcpi_pacing_rate;  // bytes/s, ~0 when unlimited
    if (rate > 0 && rate != ~std::uint64_t{0} && info.tcpi_snd_mss > 0) {
      progress.segment_pair_time =
          std::chrono::microseconds(2'000'000 * std::uint64_t{info.tcpi_snd_mss} / rate);
    }
  }
  int queued = 0;  // written, not yet acknowledged (sent or not)
  if (::ioctl(fd, SIOCOUTQ, &queued) == 0 && queued > 0) {
    progress.unacknowledged = static_cast<std::uint64_t>(queued);
  }
  return progress;
}

void acknowledge_now(int fd) {
  const int on = 1;
  if (fd >= 0) ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
}

bool set_receive_low_water(int fd, int bytes) {
  return fd >= 0 && ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes) == 0;
}

}  // namespace multilane::runtime
