// wan/mpwide_compat.cpp — MPWide's channel calls on the channels API (mpwide_compat.h).
//
// An MPWide channel is a one-stream path of one process-wide Channels object. A call over n
// channels cuts its buffer into n even parts (part i on channel i) and moves them all at once
// with one psendrecv; the dynamic-size calls receive each part up to its share of the limit
// and then close the gaps, so the merged message is contiguous.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "multilane/channels.hpp"
#include "multilane/errors.hpp"
#include "multilane/mpwide_compat.h"

namespace {

using multilane::UsageError;
using multilane::channels::Channels;
using multilane::channels::Incoming;
using multilane::channels::Outgoing;
using multilane::channels::PathId;

struct Tunables {
  std::uint64_t chunk_size = 1 << 20;
  std::uint64_t pacing_rate = 0;
  int window = 0;
  std::chrono::milliseconds timeout{60'000};
};

struct State {
  std::unique_ptr<Channels> channels;
  Tunables tunables;
  std::string last_error;
};

State& state() {
  static State s;
  return s;
}

// Runs one MPW call: its result, or -1 after reporting the failure.
template <typename Fn>
long long call(const char* name, Fn fn) {
  try {
    state().last_error.clear();
    return fn();
  } catch (const std::exception& e) {
    state().last_error = e.what();
  } catch (...) {
    state().last_error = "unknown failure";
  }
  std::fprintf(stderr, "%s: %s\n", name, state().last_error.c_str());
  return -1;
}

Channels& channels() {
  if (!state().channels) throw UsageError("MPW_Init has not been called");
  return *state().channels;
}

std::vector<PathId> channel_list(const int* list, int count) {
  if (count < 1 || list == nullptr) {
    throw UsageError(fmt::format("needs at least one channel, got {}", count));
  }
  const int size = channels().size();
  std::vector<PathId> ids;
  for (int i = 0; i < count; ++i) {
    if (list[i] < 0 || list[i] >= size) {
      throw UsageError(
          fmt::format("channel {} does not exist (channels 0..{})", list[i], size - 1));
    }
    ids.push_back(list[i]);
  }
  return ids;
}

std::uint64_t checked_size(long long size, const char* what) {
  if (size < 0) throw UsageError(fmt::format("{} must not be negative, got {}", what, size));
  return static_cast<std::uint64_t>(size);
}

// Offsets of `parts` even parts of `size` bytes (the first size % parts one byte longer);
// part i is [offsets[i], offsets[i + 1]).
std::vector<std::uint64_t> even_split(std::uint64_t size, std::size_t parts) {
  std::vector<std::uint64_t> offsets{0};
  for (std::size_t i = 0; i < parts; ++i) {
    offsets.push_back(offsets.back() + size / parts + (i < size % parts ? 1 : 0));
  }
  return offsets;
}

std::vector<Outgoing> split_out(const char* buf, std::uint64_t size,
                                const std::vector<PathId>& ids) {
  if (buf == nullptr && size > 0) throw UsageError("the send buffer is NULL");
  const auto offsets = even_split(size, ids.size());
  std::vector<Outgoing> parts;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    parts.push_back(
        {ids[i],
         {reinterpret_cast<const std::byte*>(buf) + offsets[i], offsets[i + 1] - offsets[i]}});
  }
  return parts;
}

std::vector<Incoming> split_in(char* buf, std::uint64_t size, const std::vector<PathId>& ids,
                               bool up_to) {
  if (buf == nullptr && size > 0) throw UsageError("the receive buffer is NULL");
  const auto offsets = even_split(size, ids.size());
  std::vector<Incoming> parts;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    parts.push_back({ids[i],
                     {reinterpret_cast<std::byte*>(buf) + offsets[i], offsets[i + 1] - offsets[i]},
                     up_to});
  }
  return parts;
}

// After a dynamic receive the parts sit at their limit shares; moves them together (each
// moves left, so in order) and returns the message's size.
std::uint64_t close_gaps(char* buf, const std::vector<Incoming>& parts) {
  std::uint64_t end = 0;
  for (const Incoming& part : parts) {
    const auto* from = reinterpret_cast<const char*>(part.buffer.data());
    if (from != buf + end) std::memmove(buf + end, from, part.received);
    end += part.received;
  }
  return end;
}

long long dynamic_cycle(const char* send_buf, long long send_size, char* recv_buf,
                        long long max_recv_size, const int* send_channels, int num_send,
                        const int* recv_channels, int num_recv) {
  const auto out = split_out(send_buf, checked_size(send_size, "the send size"),
                             channel_list(send_channels, num_send));
  auto in = split_in(recv_buf, checked_size(max_recv_size, "the receive limit"),
                     channel_list(recv_channels, num_recv), true);
  channels().psendrecv(out, in);
  return static_cast<long long>(close_gaps(recv_buf, in));
}

std::vector<Outgoing> parts_out(char* const* bufs, const long long* sizes,
                                const std::vector<PathId>& ids) {
  if (bufs == nullptr || sizes == nullptr) throw UsageError("the buffer or size list is NULL");
  std::vector<Outgoing> parts;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto size = checked_size(sizes[i], "a part's size");
    if (bufs[i] == nullptr && size > 0) throw UsageError(fmt::format("buffer {} is NULL", i));
    parts.push_back({ids[i], {reinterpret_cast<const std::byte*>(bufs[i]), size}});
  }
  return parts;
}

std::vector<Incoming> parts_in(char* const* bufs, const long long* sizes,
                               const std::vector<PathId>& ids) {
  std::vector<Incoming> parts;
  for (const Outgoing& o : parts_out(bufs, sizes, ids)) {
    parts.push_back({o.path, {const_cast<std::byte*>(o.data.data()), o.data.size()}});
  }
  return parts;
}

}  // namespace

extern "C" {

int MPW_Init(const char* const* hosts, const int* ports, int num_channels) {
  return static_cast<int>(call("MPW_Init", [&]() -> long long {
    if (state().channels) throw UsageError("MPW_Init was already called (MPW_Finalize first)");
    if (num_channels < 1 || hosts == nullptr || ports == nullptr) {
      throw UsageError(fmt::format("needs at least one host and port, got {}", num_channels));
    }
    auto opened = std::make_unique<Channels>(multilane::channels::Credentials::from_environment());
    const char* bind = std::getenv("MULTILANE_BIND");
    const Tunables& t = state().tunables;
    for (int i = 0; i < num_channels; ++i) {
      if (ports[i] < 0 || ports[i] > 65535) {
        throw UsageError(fmt::format("port {} of channel {} is not 0..65535", ports[i], i));
      }
      multilane::channels::PathSpec spec;
      spec.host = hosts[i] ? hosts[i] : "";
      spec.port = static_cast<std::uint16_t>(ports[i]);
      spec.bind_address = bind ? bind : "";
      spec.options.chunk_size = t.chunk_size;
      spec.options.pacing_rate = t.pacing_rate;
      spec.options.send_buffer = t.window;
      spec.options.receive_buffer = t.window;
      spec.options.timeout = t.timeout;
      opened->add_path(spec);
    }
    opened->establish();
    state().channels = std::move(opened);
    return 0;
  }));
}

int MPW_Finalize(void) {
  state().channels.reset();
  return 0;
}

int MPW_NumChannels(void) {
  return state().channels ? state().channels->size() : 0;
}

int MPW_Send(const char* buf, long long size, const int* channels_list, int num_channels) {
  return static_cast<int>(call("MPW_Send", [&]() -> long long {
    channels().psend(
        split_out(buf, checked_size(size, "the size"), channel_list(channels_list, num_channels)));
    return 0;
  }));
}

int MPW_Recv(char* buf, long long size, const int* channels_list, int num_channels) {
  return static_cast<int>(call("MPW_Recv", [&]() -> long long {
    auto in = split_in(buf, checked_size(size, "the size"),
                       channel_list(channels_list, num_channels), false);
    channels().precv(in);
    return 0;
  }));
}

int MPW_SendRecv(const char* send_buf, long long send_size, char* recv_buf, long long recv_size,
                 const int* channels_list, int num_channels) {
  return MPW_Cycle(send_buf, send_size, recv_buf, recv_size, channels_list, num_channels,
                   channels_list, num_channels);
}

int MPW_Cycle(const char* send_buf, long long send_size, char* recv_buf, long long recv_size,
              const int* send_channels, int num_send, const int* recv_channels, int num_recv) {
  return static_cast<int>(call("MPW_Cycle", [&]() -> long long {
    const auto out = split_out(send_buf, checked_size(send_size, "the send size"),
                               channel_list(send_channels, num_send));
    auto in = split_in(recv_buf, checked_size(recv_size, "the receive size"),
                       channel_list(recv_channels, num_recv), false);
    channels().psendrecv(out, in);
    return 0;
  }));
}

long long MPW_DSendRecv(const char* send_buf, long long send_size, char* recv_buf,
                        long long max_recv_size, const int* channels_list, int num_channels) {
  return call("MPW_DSendRecv", [&] {
    return dynamic_cycle(send_buf, send_size, recv_buf, max_recv_size, channels_list, num_channels,
                         channels_list, num_channels);
  });
}

long long MPW_DCycle(const char* send_buf, long long send_size, char* recv_buf,
                     long long max_recv_size, const int* send_channels, int num_send,
                     const int* recv_channels, int num_recv) {
  return call("MPW_DCycle", [&] {
    return dynamic_cycle(send_buf, send_size, recv_buf, max_recv_size, send_channels, num_send,
                         recv_channels, num_recv);
  });
}

int MPW_PSend(char* const* bufs, const long long* sizes, const int* channels_list,
              int num_channels) {
  return static_cast<int>(call("MPW_PSend", [&]() -> long long {
    channels().psend(parts_out(bufs, sizes, channel_list(channels_list, num_channels)));
    return 0;
  }));
}

int MPW_PRecv(char* const* bufs, const long long* sizes, const int* channels_list,
              int num_channels) {
  return static_cast<int>(call("MPW_PRecv", [&]() -> long long {
    auto in = parts_in(bufs, sizes, channel_list(channels_list, num_channels));
    channels().precv(in);
    return 0;
  }));
}

int MPW_PSendRecv(char* const* send_bufs, const long long* send_sizes, char* const* recv_bufs,
                  const long long* recv_sizes, const int* channels_list, int num_channels) {
  return static_cast<int>(call("MPW_PSendRecv", [&]() -> long long {
    const auto ids = channel_list(channels_list, num_channels);
    const auto out = parts_out(send_bufs, send_sizes, ids);
    auto in = parts_in(recv_bufs, recv_sizes, ids);
    channels().psendrecv(out, in);
    return 0;
  }));
}

int MPW_Relay(const int* channels_a, int num_a, const int* channels_b, int num_b) {
  return static_cast<int>(call("MPW_Relay", [&]() -> long long {
    const auto a = channel_list(channels_a, num_a);
    const auto b = channel_list(channels_b, num_b);
    if (a.size() != b.size()) {
      throw UsageError(fmt::format(
          "needs as many channels on each side (channel i of one side pairs with channel i of "
          "the other), got {} and {}",
          a.size(), b.size()));
    }
    std::vector<std::pair<PathId, PathId>> pairs;
    for (std::size_t i = 0; i < a.size(); ++i) pairs.emplace_back(a[i], b[i]);
    channels().relay(pairs);
    return 0;
  }));
}

int MPW_Barrier(int channel) {
  return static_cast<int>(call("MPW_Barrier", [&]() -> long long {
    channels().barrier(channel_list(&channel, 1).front());
    return 0;
  }));
}

int MPW_setChunkSize(long long bytes) {
  return static_cast<int>(call("MPW_setChunkSize", [&]() -> long long {
    if (bytes < 1) throw UsageError(fmt::format("the chunk size must be >= 1, got {}", bytes));
    state().tunables.chunk_size = static_cast<std::uint64_t>(bytes);
    return 0;
  }));
}

int MPW_setPacingRate(double bytes_per_second) {
  return static_cast<int>(call("MPW_setPacingRate", [&]() -> long long {
    if (!(bytes_per_second >= 0)) {
      throw UsageError(fmt::format("the pacing rate must be >= 0, got {}", bytes_per_second));
    }
    state().tunables.pacing_rate = static_cast<std::uint64_t>(bytes_per_second);
    return 0;
  }));
}

int MPW_setWin(int bytes) {
  return static_cast<int>(call("MPW_setWin", [&]() -> long long {
    if (bytes < 0) throw UsageError(fmt::format("the window must be >= 0, got {}", bytes));
    state().tunables.window = bytes;
    return 0;
  }));
}

int MPW_setTimeout(double seconds) {
  return static_cast<int>(call("MPW_setTimeout", [&]() -> long long {
    if (!(seconds > 0)) throw UsageError(fmt::format("the timeout must be > 0 s, got {}", seconds));
    state().tunables.timeout =
        std::max(std::chrono::milliseconds{1},
                 std::chrono::milliseconds{static_cast<long long>(seconds * 1000)});
    return 0;
  }));
}

const char* MPW_LastError(void) {
  return state().last_error.c_str();
}

}  // extern "C"
