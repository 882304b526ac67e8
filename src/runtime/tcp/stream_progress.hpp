// runtime/tcp/stream_progress.hpp — how far the network has carried what was written to a
// stream.
//
// A sender that re-sends a stalled stream's share (docs/runtime.md) needs two facts per TCP
// stream, both from the kernel: a counter that advances whenever the peer acknowledges data
// (it stops during a retransmission timeout or a closed window), and how many written bytes the
// peer has not acknowledged yet (all of them are in doubt; acknowledged bytes are at the peer
// and will be read without the network's help). Plus the smoothed round-trip time and the
// pace of its segments, to tell a stall from an ordinary wait for acknowledgements.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace multilane::runtime {

struct StreamProgress {
  std::uint64_t acknowledged = 0;    // bytes acknowledged so far (grows while the path moves)
  std::uint64_t unacknowledged = 0;  // written bytes the peer has not acknowledged yet
  std::chrono::microseconds round_trip{0};        // smoothed RTT, 0 if unknown
  std::chrono::microseconds least_round_trip{0};  // the shortest seen: the path's own, 0 if unknown
  // How long the stream takes to send two full segments at its pacing rate, 0 if unknown: a
  // receiver acknowledges every second segment, so a slow (paced) stream that moves is
  // acknowledged about this often, however short the round trip.
  std::chrono::microseconds segment_pair_time{0};
  // The receive window the peer offers last, bytes, 0 if unknown: a stream moves at most this
  // much per round trip (stream_governor.hpp).
  std::uint64_t send_window = 0;
};

// Reads the kernel's figures (TCP_INFO and SIOCOUTQ) of a connected TCP socket; all zero when
// it cannot say. (A file descriptor, not an asio socket: asio's headers bring glibc's older
// tcp_info, which lacks the acknowledged-bytes counter.)
StreamProgress tcp_progress(int socket_fd);

// Sends the acknowledgement of everything received on a TCP socket now, instead of after the
// kernel's delayed-acknowledgement timer (TCP_QUICKACK); ignored when the socket cannot.
void acknowledge_now(int socket_fd);

// Sets how many received bytes a TCP socket must hold before the kernel reports it readable
// and wakes its waiters (SO_RCVLOWAT; the kernel caps it at half the receive buffer). A
// non-blocking recv() still returns whatever is there. False when the socket refused.
bool set_receive_low_water(int socket_fd, int bytes);

// What a stream set asks about each of its streams; tcp_progress unless a test or an unusual
// path (one whose acknowledgements do not mean delivery) supplies its own.
using StreamProgressProbe = std::function<StreamProgress(int socket_fd)>;

}  // namespace multilane::runtime
