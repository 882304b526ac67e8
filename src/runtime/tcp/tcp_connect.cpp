// runtime/tcp/tcp_connect.cpp — see tcp_connect.hpp.
#include "runtime/tcp/tcp_connect.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

namespace {

long long read_number(const char* path) {
  std::ifstream file(path);
  long long value = 0;
  return file >> value ? value : 0;
}

}  // namespace

int largest_socket_buffer() {
  const long long send = read_number("/proc/sys/net/core/wmem_max");
  const long long receive = read_number("/proc/sys/net/core/rmem_max");
  return static_cast<int>(std::clamp(std::min(send, receive), 0LL, 1LL << 30));
}

int buffer_within_limit(int wanted, int largest) {
  return wanted <= largest ? wanted : 0;
}

void apply_connected_options(asio::ip::tcp::socket& socket, const SocketTuning& tuning) {
  socket.set_option(asio::ip::tcp::no_delay(true));
#ifdef SO_MAX_PACING_RATE
  if (tuning.pacing_bps > 0) {
    // The kernel takes the rate in bytes per second as an unsigned 32- or 64-bit value.
    const std::uint64_t rate = tuning.pacing_bps;
    if (::setsockopt(socket.native_handle(), SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate) !=
        0) {
      throw TransportError(ErrorKind::resource,
                           fmt::format("setting a pacing rate of {} bytes/s failed: {}",
                                       tuning.pacing_bps, std::strerror(errno)));
    }
  }
#endif
  if (tuning.unsent_limit > 0) {
    const int limit = tuning.unsent_limit;
    if (::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_NOTSENT_LOWAT, &limit,
                     sizeof limit) != 0) {
      throw TransportError(ErrorKind::resource,
                           fmt::format("setting an unsent limit of {} bytes failed: {}", limit,
                                       std::strerror(errno)));
    }
  }
}

namespace {

enum class Attempt { Connected, Refused };

Attempt try_connect(asio::io_context& io, asio::ip::tcp::socket& socket,
                    const asio::ip::tcp::endpoint& remote,
                    const std::optional<asio::ip::address>& local, Clock::time_point deadline,
                    const SocketTuning& tuning) {
  socket.open(remote.protocol());
  apply_buffer_sizes(socket, tuning);
  if (local) socket.bind(asio::ip::tcp::endpoint(*local, 0));
  bool finished = false;
  asio::error_code error;
  socket.async_connect(remote, [&](const asio::error_code& ec) {
    error = ec;
    finished = true;
  });
  if (!run_until(io, deadline, [&] { return finished; })) {
    asio::error_code ignored;
    socket.close(ignored);
    drain(io, [&] { return finished; });
    error = asio::error::timed_out;
  }
  if (!error) return Attempt::Connected;
  asio::error_code ignored;
  socket.close(ignored);
  if (error == asio::error::connection_refused && Clock::now() < deadline) return Attempt::Refused;
  throw TransportError(
      kind_of(error), fmt::format("connecting to {} failed: {}", endpoint_text(remote),
                                  error == asio::error::timed_out ? "timed out" : error.message()));
}

}  // namespace

void connect_with_retry(asio::io_context& io, asio::ip::tcp::socket& socket,
                        const asio::ip::tcp::endpoint& remote,
                        const std::optional<asio::ip::address>& local, Clock::time_point deadline,
                        const SocketTuning& tuning) {
  while (try_connect(io, socket, remote, local, deadline, tuning) == Attempt::Refused) {
    const auto pause =
        std::min<Clock::duration>(std::chrono::milliseconds{20}, deadline - Clock::now());
    std::this_thread::sleep_for(pause);
  }
  apply_connected_options(socket, tuning);
}

asio::ip::tcp::endpoint parse_endpoint(const std::string& text, const std::string& what) {
  const auto colon = text.rfind(':');
  auto fail = [&] {
    return UsageError(fmt::format("{} '{}' is not an address of the form host:port", what, text));
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) throw fail();
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") host = "127.0.0.1";
  asio::error_code error;
  const auto address = asio::ip::make_address(host, error);
  if (error) throw fail();
  unsigned long port = 0;
  try {
    std::size_t used = 0;
    port = std::stoul(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || port > 65535) throw fail();
  } catch (const std::logic_error&) {
    throw fail();
  }
  return {address, static_cast<std::uint16_t>(port)};
}

std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint) {
  if (endpoint.address().is_v6()) {
    return fmt::format("[{}]:{}", endpoint.address().to_string(), endpoint.port());
  }
  return fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
}

}  // namespace multilane::runtime
