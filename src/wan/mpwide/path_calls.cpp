// wan/mpwide/path_calls.cpp — MPWide's path calls: creating, connecting, destroying a path and
// exchanging messages on it.
#include <fmt/format.h>

#include <optional>
#include <span>
#include <string>

#include "multilane/errors.hpp"
#include "multilane/mpwide/MPWide.h"
#include "runtime/tcp/transport_error.hpp"
#include "wan/mpwide/paths.hpp"
#include "wan/mpwide/reach.hpp"
#include "wan/mpwide/registry.hpp"
#include "wan/path_options.hpp"

namespace multilane::wan::mpwide {

namespace {

constexpr int kMaxStreams = 1024;

std::shared_ptr<DuplexPath> open_link(const Path& path, bool server_wait) {
  const channels::Credentials job = credentials();
  const Tunables tunables = [] {
    std::lock_guard lock(state().mutex);
    return state().tunables;
  }();
  const channels::PathOptions options{
      .streams = path.streams,
      .send_buffer = path.window,
      .receive_buffer = path.window,
      .pacing_rate = static_cast<std::uint64_t>(tunables.pacing_rate),
      .timeout = timeout_of(tunables),
      // MPWide's autotuning fits its streams to the path; here that is the stream governor.
      // Without it every stream takes pieces, as the program's stream count says (needed
      // behind a forwarder other than `multilane relay`, where this end sees only the short hop
      // to it; `multilane relay` says so in its handshake, and the path then keeps every stream).
      .adapt_streams = tunables.autotuning};
  check_path_options(options);
  const auto stream = stream_options(options, job, runtime::JobSecret::from_text(job.secret));
  try {
    if (const auto peer = peer_to_connect(path.host, path.port, server_wait)) {
      return DuplexPath::connect({*peer, std::nullopt}, stream);
    }
    runtime::StreamListener listener(listening_endpoint(path.port), stream);
    return DuplexPath::accept(listener, stream);
  } catch (const runtime::TransportError& e) {
    throw channels::ChannelError(e.kind(), e.what());
  } catch (const std::system_error& e) {
    throw channels::ChannelError(runtime::kind_of(e.code()),
                                 fmt::format("port {}: {}", path.port, e.what()));
  }
}

std::optional<std::span<const std::byte>> outgoing(const char* buf, long long size, bool always) {
  if (size < 0) throw UsageError(fmt::format("the send size must not be negative, got {}", size));
  if (buf == nullptr && size > 0) throw UsageError("the send buffer is NULL");
  if (size == 0 && !always) return std::nullopt;
  return std::span(reinterpret_cast<const std::byte*>(buf), static_cast<std::size_t>(size));
}

std::optional<std::span<std::byte>> incoming(char* buf, long long size, bool always) {
  if (size < 0) {
    throw UsageError(fmt::format("the receive size must not be negative, got {}", size));
  }
  if (buf == nullptr && size > 0) throw UsageError("the receive buffer is NULL");
  if (size == 0 && !always) return std::nullopt;
  return std::span(reinterpret_cast<std::byte*>(buf), static_cast<std::size_t>(size));
}

}  // namespace

int create_path(const std::string& host, int base_port, int streams) {
  if (streams < 1 || streams > kMaxStreams) {
    throw UsageError(fmt::format("a path has 1..{} streams, got {}", kMaxStreams, streams));
  }
  if (base_port < 1 || base_port > 65535) {
    throw UsageError(fmt::format("port {} is not 1..65535", base_port));
  }
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto path = std::make_shared<Path>();
  path->host = host;
  path->port = base_port;
  path->streams = streams;
  path->first_channel = reserve_slots(s, streams);
  int id = 0;
  while (id < static_cast<int>(s.paths.size()) && s.paths[static_cast<std::size_t>(id)]) ++id;
  if (id == static_cast<int>(s.paths.size())) s.paths.emplace_back();
  for (int i = 0; i < streams; ++i) {
    s.slots[static_cast<std::size_t>(path->first_channel + i)] = {.kind = SlotKind::PathStream,
                                                                  .index = id,
                                                                  .group = nullptr,
                                                                  .host = host,
                                                                  .port = base_port};
  }
  s.paths[static_cast<std::size_t>(id)] = std::move(path);
  return id;
}

void connect_path(int path_id, bool server_wait) {
  const auto path = path_of(path_id);
  std::lock_guard connecting(path->connecting);
  {
    std::lock_guard lock(state().mutex);
    if (path->link) throw UsageError(fmt::format("path {} is already connected", path_id));
  }
  auto link = open_link(*path, server_wait);
  std::lock_guard lock(state().mutex);
  path->link = std::move(link);
}

void destroy_path(int path_id) {
  State& s = state();
  std::shared_ptr<Path> path;  // released after the lock: closing may wait for the peer
  {
    std::lock_guard lock(s.mutex);
    if (path_id < 0 || path_id >= static_cast<int>(s.paths.size()) ||
        !s.paths[static_cast<std::size_t>(path_id)]) {
      throw UsageError(fmt::format("path {} does not exist", path_id));
    }
    path = std::move(s.paths[static_cast<std::size_t>(path_id)]);
    free_slots(s, path->first_channel, path->streams);
    while (!s.paths.empty() && !s.paths.back()) s.paths.pop_back();
  }
  std::shared_ptr<DuplexPath> link;
  {
    std::lock_guard lock(s.mutex);
    link = std::move(path->link);
  }
}

std::uint64_t path_exchange(int path_id, char* sendbuf, long long sendsize, char* recvbuf,
                            long long recvsize, bool dynamic) {
  const auto out = outgoing(sendbuf, sendsize, dynamic);
  const auto in = incoming(recvbuf, recvsize, dynamic);
  const auto path = path_of(path_id);
  const auto link = link_of(*path, path_id);
  try {
    return link->exchange(out, in,
                          dynamic ? runtime::ReceiveSize::UpTo : runtime::ReceiveSize::Exact);
  } catch (const runtime::TransportError& e) {
    throw channels::ChannelError(e.kind(), fmt::format("path {}: {}", path_id, e.what()));
  }
}

}  // namespace multilane::wan::mpwide

using multilane::wan::mpwide::reported;
namespace mpw = multilane::wan::mpwide;

int MPW_CreatePathWithoutConnect(std::string host, int server_side_base_port, int streams_in_path) {
  return reported(
      "MPW_CreatePathWithoutConnect",
      [&] { return mpw::create_path(host, server_side_base_port, streams_in_path); }, -1);
}

int MPW_ConnectPath(int path_id, bool server_wait) {
  return reported(
      "MPW_ConnectPath",
      [&] {
        mpw::connect_path(path_id, server_wait);
        return 0;
      },
      -1);
}

int MPW_CreatePath(std::string host, int server_side_base_port, int num_streams) {
  return reported(
      "MPW_CreatePath",
      [&] {
        const int id = mpw::create_path(host, server_side_base_port, num_streams);
        try {
          mpw::connect_path(id, true);
        } catch (...) {
          mpw::destroy_path(id);
          throw;
        }
        return id;
      },
      -1);
}

int MPW_DestroyPath(int path) {
  return reported(
      "MPW_DestroyPath",
      [&] {
        mpw::destroy_path(path);
        return 0;
      },
      -1);
}

extern "C" {

int MPW_Send(char* sendbuf, long long int sendsize, int path) {
  return reported(
      "MPW_Send",
      [&] {
        mpw::path_exchange(path, sendbuf, sendsize, nullptr, 0, false);
        return 0;
      },
      -1);
}

int MPW_Recv(char* recvbuf, long long int recvsize, int path) {
  return reported(
      "MPW_Recv",
      [&] {
        mpw::path_exchange(path, nullptr, 0, recvbuf, recvsize, false);
        return 0;
      },
      -1);
}

int MPW_SendRecv(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                 int path) {
  return reported(
      "MPW_SendRecv",
      [&] {
        mpw::path_exchange(path, sendbuf, sendsize, recvbuf, recvsize, false);
        return 0;
      },
      -1);
}

int MPW_DSendRecv(char* sendbuf, long long int sendsize, char* recvbuf, long long int maxrecvsize,
                  int path) {
  return reported(
      "MPW_DSendRecv",
      [&] {
        const std::uint64_t size =
            mpw::path_exchange(path, sendbuf, sendsize, recvbuf, maxrecvsize, true);
        if (size > static_cast<std::uint64_t>(INT32_MAX)) {
          throw multilane::UsageError(fmt::format(
              "received {} bytes, more than this call's int result can say (use the channel "
              "form, which returns long long)",
              size));
        }
        return static_cast<int>(size);
      },
      -1);
}

}  // extern "C"
