// wan/mpwide/channel_calls.cpp — MPWide's calls on lists of channels: MPW_Init and the
// exchanges, the relay and the barrier.
//
// A list is either channels of one MPW_Init call (one-stream paths of that call's Channels) or
// exactly the streams of one path (registry.hpp). A buffer goes out over n channels in n even
// parts, part i on channel i, as MPWide splits it; over a path it goes whole (the path
// stripes it itself). A call whose send and receive lists are different targets (a cycle
// from one path to another) runs its send on a helper thread while the caller receives.
#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <future>
#include <span>
#include <string>
#include <vector>

#include "multilane/errors.hpp"
#include "multilane/mpwide/MPWide.h"
#include "wan/mpwide/paths.hpp"
#include "wan/mpwide/reach.hpp"
#include "wan/mpwide/registry.hpp"

namespace multilane::wan::mpwide {

namespace {

using channels::Incoming;
using channels::Outgoing;

// The relay holds each direction's message whole; larger ones fail it with a clear error.
constexpr std::uint64_t kRelayMaxMessage = std::uint64_t{256} << 20;

std::uint64_t checked_size(long long size, const char* what) {
  if (size < 0) throw UsageError(fmt::format("{} must not be negative, got {}", what, size));
  return static_cast<std::uint64_t>(size);
}

// Offsets of `parts` even parts of `size` bytes (the first size % parts one byte longer).
std::vector<std::uint64_t> even_split(std::uint64_t size, std::size_t parts) {
  std::vector<std::uint64_t> offsets{0};
  for (std::size_t i = 0; i < parts; ++i) {
    offsets.push_back(offsets.back() + size / parts + (i < size % parts ? 1 : 0));
  }
  return offsets;
}

// One direction of a call.
struct Side {
  Target target;
  char* buf = nullptr;
  std::uint64_t size = 0;
};

// Moves `out` and `in` (either may be null) when they are both MPW_Init channels.
std::uint64_t channel_exchange(const Side* out, const Side* in, bool dynamic) {
  std::vector<Outgoing> sends;
  if (out != nullptr) {
    const auto& ids = out->target.channel_paths;
    const auto offsets = even_split(out->size, ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::uint64_t length = offsets[i + 1] - offsets[i];
      if (length == 0 && !dynamic) continue;
      sends.push_back(
          {ids[i], {reinterpret_cast<const std::byte*>(out->buf) + offsets[i], length}});
    }
  }
  std::vector<Incoming> receives;
  if (in != nullptr) {
    const auto& ids = in->target.channel_paths;
    const auto offsets = even_split(in->size, ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::uint64_t length = offsets[i + 1] - offsets[i];
      if (length == 0 && !dynamic) continue;
      receives.push_back(
          {ids[i], {reinterpret_cast<std::byte*>(in->buf) + offsets[i], length}, dynamic});
    }
  }
  {
    ChannelGroup& group = *(out != nullptr ? out->target : in->target).group;
    std::lock_guard lock(group.calls);
    group.channels->psendrecv(sends, receives);
  }
  // A dynamic receive leaves each part at its share of the limit: close the gaps.
  std::uint64_t end = 0;
  for (const Incoming& part : receives) {
    const auto* from = reinterpret_cast<const char*>(part.buffer.data());
    if (from != in->buf + end) std::memmove(in->buf + end, from, part.received);
    end += part.received;
  }
  return end;
}

std::uint64_t side_exchange(const Side* out, const Side* in, bool dynamic) {
  const Target& t = out != nullptr ? out->target : in->target;
  if (t.path) {
    return path_exchange(t.path_id, out ? out->buf : nullptr,
                         out ? static_cast<long long>(out->size) : 0, in ? in->buf : nullptr,
                         in ? static_cast<long long>(in->size) : 0, dynamic);
  }
  return channel_exchange(out, in, dynamic);
}

bool same_target(const Target& a, const Target& b) {
  return a.path ? a.path == b.path : a.group == b.group;
}

// Sends `out` and receives `in` at once; returns the received size.
std::uint64_t exchange(char* sendbuf, long long sendsize, const int* ch_send, int n_send,
                       char* recvbuf, long long recvsize, const int* ch_recv, int n_recv,
                       bool dynamic) {
  Side out{target_of(ch_send, n_send), sendbuf, checked_size(sendsize, "the send size")};
  Side in{target_of(ch_recv, n_recv), recvbuf, checked_size(recvsize, "the receive size")};
  if (sendbuf == nullptr && out.size > 0) throw UsageError("the send buffer is NULL");
  if (recvbuf == nullptr && in.size > 0) throw UsageError("the receive buffer is NULL");
  if (same_target(out.target, in.target)) return side_exchange(&out, &in, dynamic);
  auto sending = std::async(std::launch::async, [&] { side_exchange(&out, nullptr, dynamic); });
  std::exception_ptr failure;
  std::uint64_t received = 0;
  try {
    received = side_exchange(nullptr, &in, dynamic);
  } catch (...) {
    failure = std::current_exception();
  }
  try {
    sending.get();
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  if (failure) std::rethrow_exception(failure);
  return received;
}

void init_channels_at(std::string* url, int* ports, int* client_ports, int count) {
  if (count < 1 || url == nullptr || ports == nullptr) {
    throw UsageError(fmt::format("needs at least one host and port, got {}", count));
  }
  for (int i = 0; client_ports != nullptr && i < count; ++i) {
    if (client_ports[i] > 0) {
      throw UsageError(fmt::format(
          "client_side_ports[{}] = {}: binding the connecting end to a port is not offered "
          "(pass -1; multilane connects from any port)",
          i, client_ports[i]));
    }
  }
  const channels::Credentials job = credentials();
  State& s = state();
  Tunables tunables;
  int first = 0;
  {
    std::lock_guard lock(s.mutex);
    tunables = s.tunables;
    first = reserve_slots(s, count);
    for (int i = 0; i < count; ++i) {
      s.slots[static_cast<std::size_t>(first + i)] = {.kind = SlotKind::Channel,
                                                      .index = i,
                                                      .group = nullptr,
                                                      .host = url[i],
                                                      .port = ports[i]};
    }
  }
  auto group = std::make_shared<ChannelGroup>();
  try {
    group->channels = std::make_unique<channels::Channels>(job);
    for (int i = 0; i < count; ++i) {
      const auto peer = peer_to_connect(url[i], ports[i], true);
      channels::PathSpec spec{
          .host = peer ? peer->address().to_string() : "",
          .port = static_cast<std::uint16_t>(ports[i]),
          .relay = "",
          .bind_address = peer ? "" : listening_endpoint(ports[i]).address().to_string(),
          .options = {.pacing_rate = static_cast<std::uint64_t>(tunables.pacing_rate),
                      .timeout = timeout_of(tunables)}};
      group->channels->add_path(spec);
    }
    group->channels->establish();
  } catch (...) {
    std::lock_guard lock(s.mutex);
    free_slots(s, first, count);
    throw;
  }
  std::lock_guard lock(s.mutex);
  for (int i = 0; i < count; ++i) s.slots[static_cast<std::size_t>(first + i)].group = group;
}

}  // namespace

}  // namespace multilane::wan::mpwide

using multilane::wan::mpwide::reported;
namespace mpw = multilane::wan::mpwide;

int MPW_Init(std::string* url, int* server_side_ports, int* client_side_ports, int num_channels) {
  return reported(
      "MPW_Init",
      [&] {
        mpw::init_channels_at(url, server_side_ports, client_side_ports, num_channels);
        return 0;
      },
      -1);
}

int MPW_Init(std::string* url, int* server_side_ports, int num_channels) {
  return MPW_Init(url, server_side_ports, nullptr, num_channels);
}

int MPW_Init(std::string url, int port) {
  return MPW_Init(&url, &port, nullptr, 1);
}

int MPW_SendRecv(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                 int* channel, int num_channels) {
  return reported(
      "MPW_SendRecv",
      [&] {
        mpw::exchange(sendbuf, sendsize, channel, num_channels, recvbuf, recvsize, channel,
                      num_channels, false);
        return 0;
      },
      -1);
}

long long int MPW_DSendRecv(char* sendbuf, long long int sendsize, char* recvbuf,
                            long long int maxrecvsize, int* channel, int num_channels) {
  return reported(
      "MPW_DSendRecv",
      [&] {
        return static_cast<long long>(mpw::exchange(sendbuf, sendsize, channel, num_channels,
                                                    recvbuf, maxrecvsize, channel, num_channels,
                                                    true));
      },
      -1LL);
}

void MPW_Send(char* buf, long long int size, int* channels, int num_channels) {
  mpw::or_exit("MPW_Send", [&] {
    mpw::exchange(buf, size, channels, num_channels, nullptr, 0, channels, num_channels, false);
  });
}

void MPW_Recv(char* buf, long long int size, int* channels, int num_channels) {
  mpw::or_exit("MPW_Recv", [&] {
    mpw::exchange(nullptr, 0, channels, num_channels, buf, size, channels, num_channels, false);
  });
}

long long int MPW_DCycle(char* sendbuf, long long int sendsize, char* recvbuf,
                         long long int recvsize, int* ch_send, int num_ch_send, int* ch_recv,
                         int num_ch_recv) {
  return reported(
      "MPW_DCycle",
      [&] {
        return static_cast<long long>(mpw::exchange(sendbuf, sendsize, ch_send, num_ch_send,
                                                    recvbuf, recvsize, ch_recv, num_ch_recv, true));
      },
      -1LL);
}

void MPW_Cycle(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
               int* ch_send, int num_ch_send, int* ch_recv, int num_ch_recv) {
  mpw::or_exit("MPW_Cycle", [&] {
    mpw::exchange(sendbuf, sendsize, ch_send, num_ch_send, recvbuf, recvsize, ch_recv, num_ch_recv,
                  false);
  });
}

int MPW_PSendRecv(char** sendbuf, long long int* sendsize, char** recvbuf, long long int* recvsize,
                  int* channel, int num_channels) {
  return reported(
      "MPW_PSendRecv",
      [&] {
        if (sendbuf == nullptr || sendsize == nullptr || recvbuf == nullptr ||
            recvsize == nullptr) {
          throw multilane::UsageError("a buffer or size list is NULL");
        }
        const mpw::Target target = mpw::target_of(channel, num_channels);
        if (target.path) {
          // Part i of each end is message i on the path.
          for (int i = 0; i < num_channels; ++i) {
            mpw::path_exchange(target.path_id, sendbuf[i], sendsize[i], recvbuf[i], recvsize[i],
                               false);
          }
          return 0;
        }
        std::vector<multilane::channels::Outgoing> sends;
        std::vector<multilane::channels::Incoming> receives;
        for (int i = 0; i < num_channels; ++i) {
          const auto id = target.channel_paths[static_cast<std::size_t>(i)];
          const auto out = mpw::checked_size(sendsize[i], "a send size");
          const auto in = mpw::checked_size(recvsize[i], "a receive size");
          if ((sendbuf[i] == nullptr && out > 0) || (recvbuf[i] == nullptr && in > 0)) {
            throw multilane::UsageError(fmt::format("buffer {} is NULL", i));
          }
          if (out > 0) sends.push_back({id, {reinterpret_cast<const std::byte*>(sendbuf[i]), out}});
          if (in > 0) receives.push_back({id, {reinterpret_cast<std::byte*>(recvbuf[i]), in}});
        }
        std::lock_guard lock(target.group->calls);
        target.group->channels->psendrecv(sends, receives);
        return 0;
      },
      -1);
}

void MPW_Relay(int* channels, int* channels2, int num_channels) {
  mpw::or_exit("MPW_Relay", [&] {
    const mpw::Target a = mpw::target_of(channels, num_channels);
    const mpw::Target b = mpw::target_of(channels2, num_channels);
    if (a.path || b.path) {
      throw multilane::UsageError(
          "MPW_Relay forwards MPW_Init channels; the streams of a path are not offered (relay "
          "the path with `multilane relay` instead)");
    }
    if (a.group != b.group) {
      throw multilane::UsageError(
          "MPW_Relay forwards between channels of one MPW_Init call (multilane drives them "
          "together)");
    }
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < num_channels; ++i) {
      pairs.emplace_back(a.channel_paths[static_cast<std::size_t>(i)],
                         b.channel_paths[static_cast<std::size_t>(i)]);
    }
    std::lock_guard lock(a.group->calls);
    a.group->channels->relay(pairs, mpw::kRelayMaxMessage);
  });
}

void MPW_Barrier(int channel) {
  mpw::or_exit("MPW_Barrier", [&] {
    const mpw::Target target = mpw::owner_of(channel);
    if (target.path) {
      char none = 0;
      mpw::path_exchange(target.path_id, &none, 0, &none, 0, true);
      return;
    }
    std::lock_guard lock(target.group->calls);
    target.group->channels->barrier(target.channel_paths.front());
  });
}

void MPW_CloseChannels(int* channels, int num_channels) {
  mpw::or_exit("MPW_CloseChannels", [&] {
    if (channels == nullptr && num_channels > 0) {
      throw multilane::UsageError("the channel list is NULL");
    }
    for (int i = 0; i < num_channels; ++i) {
      const mpw::Target target = mpw::owner_of(channels[i]);
      if (target.path) {
        std::shared_ptr<multilane::wan::DuplexPath> closing;  // closed outside the lock
        std::lock_guard lock(mpw::state().mutex);
        closing = std::move(target.path->link);
        continue;
      }
      std::lock_guard lock(target.group->calls);
      target.group->channels->close(target.channel_paths.front());
    }
  });
}
