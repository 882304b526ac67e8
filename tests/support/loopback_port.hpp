// tests/support/loopback_port.hpp — a port on 127.0.0.1 for a program under test to bind, or
// for a client to find nothing at, shared by the test binaries that start such programs.
//
// The port lies below the kernel's ephemeral range (ip_local_port_range). A port the kernel
// hands out for port 0 lies in that range, and so is just as free for the next outgoing
// connection of a test running beside this one (ctest -j), which may take it before the
// program binds it ("Address already in use"), or for a client connecting to it while nothing
// listens yet, which may then connect to itself. Processes start at different places of the
// range (their pid) and go on in turn, so concurrent tests do not pick the same port either.
#pragma once

#include <unistd.h>

#include <asio.hpp>
#include <cstdint>
#include <fstream>
#include <stdexcept>

namespace multilane::testing {

inline std::uint32_t first_ephemeral_port() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  std::uint32_t low = 0;
  return (range >> low) && low > 2048 ? low : 32768;
}

inline bool can_bind_loopback(std::uint16_t port) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io);
  asio::error_code ec;
  acceptor.open(asio::ip::tcp::v4(), ec);
  if (!ec) acceptor.bind({asio::ip::make_address_v4("127.0.0.1"), port}, ec);
  return !ec;
}

// A port nothing was bound to a moment ago, below the ephemeral range.
inline std::uint16_t loopback_port() {
  static std::uint32_t next = 0;
  const std::uint32_t end = first_ephemeral_port();
  const std::uint32_t begin = end > 11024 ? end - 10000 : 1024;
  const std::uint32_t span = end - begin;
  for (std::uint32_t attempt = 0; attempt < span; ++attempt) {
    const std::uint32_t offset = static_cast<std::uint32_t>(::getpid()) * 7919u + next++;
    const auto port = static_cast<std::uint16_t>(begin + offset % span);
    if (can_bind_loopback(port)) return port;
  }
  throw std::runtime_error("loopback_port: no free port on 127.0.0.1 below the ephemeral range");
}

}  // namespace multilane::testing
