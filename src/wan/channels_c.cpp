// wan/channels_c.cpp — the C binding of the channels API (include/multilane/channels.h).
//
// Each function catches every exception, keeps its text in the handle and returns -1, so no
// C++ exception crosses into C code.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "multilane/channels.h"
#include "multilane/channels.hpp"
#include "multilane/errors.hpp"

using multilane::channels::Channels;
using multilane::channels::Credentials;
using multilane::channels::Incoming;
using multilane::channels::Outgoing;

struct ml_channels {
  Channels channels;
  std::string error;
};

namespace {

// Runs `fn` on the handle: 0 (or fn's result) on success, -1 with the error kept on failure.
template <typename Fn>
int guarded(ml_channels* handle, Fn fn) {
  if (handle == nullptr) return -1;
  try {
    handle->error.clear();
    return fn();
  } catch (const std::exception& e) {
    handle->error = e.what();
  } catch (...) {
    handle->error = "unknown failure";
  }
  return -1;
}

std::span<const std::byte> bytes(const void* data, size_t size) {
  return {static_cast<const std::byte*>(data), size};
}
std::span<std::byte> bytes(void* data, size_t size) {
  return {static_cast<std::byte*>(data), size};
}

multilane::channels::PathSpec to_spec(const ml_path_spec& c) {
  multilane::channels::PathSpec spec;
  spec.host = c.host ? c.host : "";
  if (c.port < 0 || c.port > 65535) {
    throw multilane::UsageError(fmt::format("port must be 0..65535, got {}", c.port));
  }
  spec.port = static_cast<std::uint16_t>(c.port);
  spec.relay = c.relay ? c.relay : "";
  spec.bind_address = c.bind_address ? c.bind_address : "";
  auto& o = spec.options;
  if (c.streams != 0) o.streams = c.streams;
  o.send_buffer = c.send_buffer;
  o.receive_buffer = c.receive_buffer;
  if (c.pacing_rate < 0) throw multilane::UsageError("pacing_rate must not be negative");
  o.pacing_rate = static_cast<std::uint64_t>(c.pacing_rate);
  if (c.chunk_size != 0) o.chunk_size = c.chunk_size;
  if (c.timeout < 0) throw multilane::UsageError("timeout must not be negative");
  if (c.timeout > 0) {
    o.timeout = std::max(std::chrono::milliseconds{1},
                         std::chrono::milliseconds{static_cast<long long>(c.timeout * 1000.0)});
  }
  return spec;
}

std::vector<Outgoing> outgoing(const ml_part* parts, int count) {
  if (count < 0 || (count > 0 && parts == nullptr)) throw multilane::UsageError("bad part list");
  std::vector<Outgoing> out;
  for (int i = 0; i < count; ++i)
    out.push_back({parts[i].path, bytes(parts[i].buffer, parts[i].size)});
  return out;
}

std::vector<Incoming> incoming(const ml_part* parts, int count) {
  if (count < 0 || (count > 0 && parts == nullptr)) throw multilane::UsageError("bad part list");
  std::vector<Incoming> in;
  for (int i = 0; i < count; ++i) {
    in.push_back({parts[i].path, bytes(parts[i].buffer, parts[i].size), parts[i].up_to != 0});
  }
  return in;
}

}  // namespace

extern "C" {

ml_channels* ml_channels_create(uint64_t job_id, const char* secret) {
  try {
    Credentials credentials =
        secret ? Credentials{job_id, secret} : Credentials::from_environment();
    return new ml_channels{Channels(std::move(credentials)), {}};
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ml_channels_create: %s\n", e.what());
    return nullptr;
  }
}

void ml_channels_destroy(ml_channels* channels) {
  delete channels;
}

const char* ml_channels_error(const ml_channels* channels) {
  return channels ? channels->error.c_str() : "no channels handle";
}

int ml_channels_add_path(ml_channels* channels, const ml_path_spec* spec) {
  return guarded(channels, [&] {
    if (spec == nullptr) throw multilane::UsageError("no path spec");
    return channels->channels.add_path(to_spec(*spec));
  });
}

int ml_channels_establish(ml_channels* channels) {
  return guarded(channels, [&] {
    channels->channels.establish();
    return 0;
  });
}

int ml_channels_close(ml_channels* channels, int path) {
  return guarded(channels, [&] {
    channels->channels.close(path);
    return 0;
  });
}

int ml_channels_local_port(const ml_channels* channels, int path) {
  if (channels == nullptr || path < 0 || path >= channels->channels.size()) return -1;
  return channels->channels.local_port(path);
}

int ml_channels_send(ml_channels* channels, int path, const void* data, size_t size) {
  return guarded(channels, [&] {
    channels->channels.send(path, bytes(data, size));
    return 0;
  });
}

int ml_channels_recv(ml_channels* channels, int path, void* buffer, size_t size) {
  return guarded(channels, [&] {
    channels->channels.recv(path, bytes(buffer, size));
    return 0;
  });
}

int ml_channels_sendrecv(ml_channels* channels, int path, const void* data, size_t size,
                         void* buffer, size_t buffer_size) {
  return guarded(channels, [&] {
    channels->channels.sendrecv(path, bytes(data, size), bytes(buffer, buffer_size));
    return 0;
  });
}

int ml_channels_cycle(ml_channels* channels, int to, const void* data, size_t size, int from,
                      void* buffer, size_t buffer_size) {
  return guarded(channels, [&] {
    channels->channels.cycle(to, bytes(data, size), from, bytes(buffer, buffer_size));
    return 0;
  });
}

int ml_channels_dsendrecv(ml_channels* channels, int path, const void* data, size_t size,
                          void* buffer, size_t limit, size_t* received) {
  return guarded(channels, [&] {
    const auto got = channels->channels.dsendrecv(path, bytes(data, size), bytes(buffer, limit));
    if (received) *received = static_cast<size_t>(got);
    return 0;
  });
}

int ml_channels_barrier(ml_channels* channels, int path) {
  return guarded(channels, [&] {
    channels->channels.barrier(path);
    return 0;
  });
}

int ml_channels_psend(ml_channels* channels, const ml_part* parts, int count) {
  return ml_channels_psendrecv(channels, parts, count, nullptr, 0);
}

int ml_channels_precv(ml_channels* channels, ml_part* parts, int count) {
  return ml_channels_psendrecv(channels, nullptr, 0, parts, count);
}

int ml_channels_psendrecv(ml_channels* channels, const ml_part* out, int out_count, ml_part* in,
                          int in_count) {
  return guarded(channels, [&] {
    const auto sends = outgoing(out, out_count);
    auto receives = incoming(in, in_count);
    channels->channels.psendrecv(sends, receives);
    for (int i = 0; i < in_count; ++i) in[i].received = static_cast<size_t>(receives[i].received);
    return 0;
  });
}

int ml_channels_relay(ml_channels* channels, const int* paths, int pair_count, size_t max_message) {
  return guarded(channels, [&] {
    if (pair_count < 1 || paths == nullptr)
      throw multilane::UsageError("relay needs at least one pair");
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < pair_count; ++i) pairs.emplace_back(paths[2 * i], paths[2 * i + 1]);
    channels->channels.relay(pairs, max_message ? max_message : 64u << 20);
    return 0;
  });
}

}  // extern "C"
