// bench/wan_throughput.cpp — throughput of one channels path versus its number of streams.
//
//   wan_throughput [--streams 1,2,4,...] [--size 64MiB] [--count 8] [--chunk 1MiB]
//                  [--host 127.0.0.1] [--pacing RATE]
//
// Both ends run in this process on two threads (each drives its own Channels object, as two
// processes would): one end sends --count messages of --size bytes, the other receives them
// into one buffer and acknowledges the last; after one untimed message that opens the TCP
// windows, the time from the first send to the acknowledgement gives the throughput. One line
// per stream count: "streams K: X Gbit/s (N bytes in S s)". bench/wan_throughput.sh runs it
// next to iperf3 -P K on the same path.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <vector>

#include "multilane/channels.hpp"
#include "multilane/errors.hpp"
#include "multilane/units.hpp"

namespace {

using multilane::channels::Channels;
using multilane::channels::PathSpec;

struct Args {
  std::vector<std::uint64_t> streams{1, 2, 4, 8, 16, 32, 64};
  std::uint64_t size = 64 << 20;
  int count = 8;
  std::uint64_t chunk = 1 << 20;
  std::string host = "127.0.0.1";
  std::uint64_t pacing = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--streams")
      a.streams = multilane::parse_size_list(value);
    else if (key == "--size")
      a.size = multilane::parse_size(value);
    else if (key == "--count")
      a.count = std::stoi(value);
    else if (key == "--chunk")
      a.chunk = multilane::parse_size(value);
    else if (key == "--host")
      a.host = value;
    else if (key == "--pacing")
      a.pacing = static_cast<std::uint64_t>(multilane::parse_bandwidth(value));
    else
      throw multilane::UsageError("unknown option " + key);
  }
  return a;
}

double measure(const Args& a, int streams) {
  const multilane::channels::Credentials credentials{1, "wan_throughput benchmark secret"};
  multilane::channels::PathOptions o;
  o.streams = streams;
  o.chunk_size = a.chunk;
  o.pacing_rate = a.pacing;
  o.timeout = std::chrono::seconds(60);
  Channels receiver(credentials);
  PathSpec listen;
  listen.bind_address = a.host;
  listen.options = o;
  const auto at_receiver = receiver.add_path(listen);
  const std::uint16_t port = receiver.local_port(at_receiver);
  auto sender = std::async(std::launch::async, [&] {
    Channels ch(credentials);
    PathSpec spec;
    spec.host = a.host;
    spec.port = port;
    spec.options = o;
    const auto p = ch.open(spec);
    std::vector<std::byte> message(a.size, std::byte{0x5a}), ack(1);
    ch.send(p, message);  // untimed: opens the windows
    ch.recv(p, ack);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < a.count; ++i) ch.send(p, message);
    ch.recv(p, ack);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  receiver.establish();
  std::vector<std::byte> buffer(a.size), ack(1);
  receiver.recv(at_receiver, buffer);
  receiver.send(at_receiver, ack);
  for (int i = 0; i < a.count; ++i) receiver.recv(at_receiver, buffer);
  receiver.send(at_receiver, ack);
  return sender.get();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    for (std::uint64_t k : a.streams) {
      const double seconds = measure(a, static_cast<int>(k));
      const double bytes = static_cast<double>(a.size) * a.count;
      fmt::print("streams {}: {:.3f} Gbit/s ({} bytes in {:.3f} s)\n", k, bytes * 8 / seconds / 1e9,
                 static_cast<std::uint64_t>(bytes), seconds);
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "wan_throughput: {}\n", e.what());
    return 1;
  }
}
