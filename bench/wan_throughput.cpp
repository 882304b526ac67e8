// bench/wan_throughput.cpp — throughput of one channels path versus its number of streams.
//
//   wan_throughput [--streams 1,2,4,...] [--size 64MiB] [--count 8 | --seconds S] [--chunk 1MiB]
//                  [--host 127.0.0.1] [--pacing RATE] [--resend on|off]
//                  [--shares pulled|equal] [--adapt on|off]
//   wan_throughput --listen ADDR:PORT  --streams K [--size ...]          (receiving end)
//   wan_throughput --connect HOST:PORT --streams K [--size ...] [--count N | --seconds S]
//
// Without --listen / --connect both ends run in this process on two threads (each drives its
// own Channels object, as two processes would). With them, each end is a process of its own
// (on two nodes of an emulated grid: bench/wan-emu-streams.sh); the receiving end prints
// "listening on ADDR:PORT" once it accepts, and both ends must be given the same --streams K
// and --size. The sender sends one untimed message that opens the TCP windows, then --count
// messages of --size bytes (with --seconds: as many as the untimed message's rate says fill
// about S seconds, at most 100000) and waits for the receiver's acknowledgement of the last;
// bytes / time to that acknowledgement is the throughput. The sender prints one line per
// stream count: "streams K: X Gbit/s (N bytes in S s; re-sent R% in M stalls; U in use)", where R
// is how many bytes went out a second time because a stream stalled. --resend off turns off
// re-sending a stalled stream's share (PathOptions::resend_stalled; only the sending end);
// --shares equal cuts every message into one equal share per stream up front, as MPWide does
// and channels did before pieces were pulled (PathOptions::equal_shares); --adapt off hands
// pieces to all K streams instead of only as many as the path carries without stalls
// (PathOptions::adapt_streams). The line ends with the streams in use at the end.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "multilane/channels.hpp"
#include "multilane/errors.hpp"
#include "multilane/units.hpp"

namespace {

using multilane::channels::Channels;
using multilane::channels::PathId;
using multilane::channels::PathSpec;
using Clock = std::chrono::steady_clock;

struct Args {
  std::vector<std::uint64_t> streams{1, 2, 4, 8, 16, 32, 64};
  std::uint64_t size = 64 << 20;
  int count = 8;
  double seconds = 0;  // > 0: choose the count from the untimed message's rate
  std::uint64_t chunk = 1 << 20;
  std::string host = "127.0.0.1";
  std::uint64_t pacing = 0;
  bool resend = true;
  bool equal_shares = false;
  bool adapt = true;
  std::string listen;   // receiving end only: ADDR:PORT
  std::string connect;  // sending end only: HOST:PORT
};

// True for `yes`, false for `no`; anything else names the option and both values.
bool one_of(const std::string& key, const std::string& value, const char* yes, const char* no) {
  if (value != yes && value != no) {
    throw multilane::UsageError(fmt::format("{} must be {} or {}, got {:?}", key, yes, no, value));
  }
  return value == yes;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw multilane::UsageError(key + " needs a value");
    const std::string value = argv[i + 1];
    if (key == "--streams")
      a.streams = multilane::parse_size_list(value);
    else if (key == "--size")
      a.size = multilane::parse_size(value);
    else if (key == "--count")
      a.count = std::stoi(value);
    else if (key == "--seconds")
      a.seconds = std::stod(value);
    else if (key == "--chunk")
      a.chunk = multilane::parse_size(value);
    else if (key == "--host")
      a.host = value;
    else if (key == "--pacing")
      a.pacing = static_cast<std::uint64_t>(multilane::parse_bandwidth(value));
    else if (key == "--resend")
      a.resend = one_of(key, value, "on", "off");
    else if (key == "--shares")
      a.equal_shares = !one_of(key, value, "pulled", "equal");
    else if (key == "--adapt")
      a.adapt = one_of(key, value, "on", "off");
    else if (key == "--listen")
      a.listen = value;
    else if (key == "--connect")
      a.connect = value;
    else
      throw multilane::UsageError("unknown option " + key);
  }
  if (a.size == 0) throw multilane::UsageError("--size must be at least 1 byte");
  if (a.count < 1) throw multilane::UsageError("--count must be at least 1");
  if ((!a.listen.empty() || !a.connect.empty()) && a.streams.size() != 1) {
    throw multilane::UsageError("--listen and --connect take one --streams count");
  }
  return a;
}

// "host:port" split at the last colon; port 0 allowed only when listening.
std::pair<std::string, std::uint16_t> host_port(const std::string& text, const char* option) {
  const auto colon = text.rfind(':');
  const int port = colon == std::string::npos ? -1 : std::atoi(text.c_str() + colon + 1);
  if (colon == std::string::npos || port < 0 || port > 65535) {
    throw multilane::UsageError(fmt::format("{} {:?} is not HOST:PORT", option, text));
  }
  return {text.substr(0, colon), static_cast<std::uint16_t>(port)};
}

const multilane::channels::Credentials kCredentials{1, "wan_throughput benchmark secret"};

multilane::channels::PathOptions path_options(const Args& a, int streams) {
  multilane::channels::PathOptions o;
  o.streams = streams;
  o.chunk_size = a.chunk;
  o.pacing_rate = a.pacing;
  o.resend_stalled = a.resend;
  o.equal_shares = a.equal_shares;
  o.adapt_streams = a.adapt;
  o.timeout = std::chrono::seconds(60);
  return o;
}

std::span<const std::byte> as_bytes(const std::uint64_t& value) {
  return {reinterpret_cast<const std::byte*>(&value), sizeof value};
}

struct Measured {
  double seconds = 0;
  double bytes = 0;
  multilane::channels::PathCounters counters;  // of the timed messages
};

// The sending end: seconds from the first timed send to the acknowledgement, and the bytes.
Measured send_messages(Channels& ch, PathId p, const Args& a) {
  std::vector<std::byte> message(a.size, std::byte{0x5a}), ack(1);
  const auto warm_start = Clock::now();
  ch.send(p, message);  // untimed: opens the windows
  ch.recv(p, ack);
  const double warm = std::chrono::duration<double>(Clock::now() - warm_start).count();
  std::uint64_t count = static_cast<std::uint64_t>(a.count);
  if (a.seconds > 0) {
    count = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(a.seconds / warm)), 1,
                                      100'000);
  }
  ch.send(p, as_bytes(count));
  const auto before = ch.counters(p);
  const auto start = Clock::now();
  for (std::uint64_t i = 0; i < count; ++i) ch.send(p, message);
  ch.recv(p, ack);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  auto counters = ch.counters(p);
  counters.bytes_resent -= before.bytes_resent;
  counters.stalls -= before.stalls;
  return {seconds, static_cast<double>(a.size) * static_cast<double>(count), counters};
}

void receive_messages(Channels& ch, PathId p, const Args& a) {
  std::vector<std::byte> buffer(a.size), ack(1);
  ch.recv(p, buffer);
  ch.send(p, ack);
  std::uint64_t count = 0;
  ch.recv(p, {reinterpret_cast<std::byte*>(&count), sizeof count});
  for (std::uint64_t i = 0; i < count; ++i) ch.recv(p, buffer);
  ch.send(p, ack);
}

void report(int streams, const Measured& m) {
  fmt::print(
      "streams {}: {:.3f} Gbit/s ({} bytes in {:.3f} s; re-sent {:.1f}% in {} stalls; {} in use)\n",
      streams, m.bytes * 8 / m.seconds / 1e9, static_cast<std::uint64_t>(m.bytes), m.seconds,
      100.0 * static_cast<double>(m.counters.bytes_resent) / m.bytes, m.counters.stalls,
      m.counters.streams_in_use);
  std::fflush(stdout);
}

Measured both_ends(const Args& a, int streams) {
  const auto o = path_options(a, streams);
  Channels receiver(kCredentials);
  PathSpec listen;
  listen.bind_address = a.host;
  listen.options = o;
  const auto at_receiver = receiver.add_path(listen);
  const std::uint16_t port = receiver.local_port(at_receiver);
  auto sender = std::async(std::launch::async, [&] {
    Channels ch(kCredentials);
    PathSpec spec;
    spec.host = a.host;
    spec.port = port;
    spec.options = o;
    const auto p = ch.open(spec);
    return send_messages(ch, p, a);
  });
  receiver.establish();
  receive_messages(receiver, at_receiver, a);
  return sender.get();
}

void receiving_end(const Args& a) {
  const auto [address, port] = host_port(a.listen, "--listen");
  Channels ch(kCredentials);
  PathSpec spec;
  spec.bind_address = address;
  spec.port = port;
  spec.options = path_options(a, static_cast<int>(a.streams.front()));
  const auto p = ch.add_path(spec);
  fmt::print("listening on {}:{}\n", address, ch.local_port(p));
  std::fflush(stdout);
  ch.establish();
  receive_messages(ch, p, a);
}

void sending_end(const Args& a) {
  const auto [host, port] = host_port(a.connect, "--connect");
  if (port == 0) throw multilane::UsageError("--connect needs a port of 1..65535");
  Channels ch(kCredentials);
  PathSpec spec;
  spec.host = host;
  spec.port = port;
  spec.options = path_options(a, static_cast<int>(a.streams.front()));
  const auto p = ch.open(spec);
  report(static_cast<int>(a.streams.front()), send_messages(ch, p, a));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    if (!a.listen.empty()) {
      receiving_end(a);
    } else if (!a.connect.empty()) {
      sending_end(a);
    } else {
      for (std::uint64_t k : a.streams)
        report(static_cast<int>(k), both_ends(a, static_cast<int>(k)));
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "wan_throughput: {}\n", e.what());
    return 1;
  }
}
