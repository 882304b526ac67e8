// bench/wan_routers.cpp — throughput between two sites through R routers per site.
//
//   wan_routers [--routers 1,2,4,8] [--nic 200Mbit/s] [--size 16MiB] [--count 4]
//               [--chunk 256KiB] [--modes aggregate,static,direct]
//
// Emulates the aggregate-router paper's setting on one machine: every router's links to the
// other site are paced to --nic (SO_MAX_PACING_RATE; an external NIC slower than the inter-site
// link), and so is a rank's own link in the direct mode (all-to-all TCP, the rank's NIC). Rank 0
// of site 0 sends --count messages of --size bytes to rank 0 of site 1, which checks them and
// acknowledges the last; throughput = bytes / time to the acknowledgement. One line per (R,
// mode): "R 4 aggregate: X Mbit/s = Y x one NIC". Routers and ranks run on threads of this
// process (router_grid.hpp), so the machine's cores bound what R can gain.
#include <fmt/format.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "multilane/errors.hpp"
#include "multilane/units.hpp"
#include "wan/routed_endpoint.hpp"
#include "wan/router_grid.hpp"

namespace {

using namespace multilane;
using namespace multilane::wan;

struct Args {
  std::vector<std::uint64_t> routers{1, 2, 4, 8};
  double nic = 25e6;  // bytes/s
  std::uint64_t size = 16 << 20;
  int count = 4;
  std::uint64_t chunk = 256 << 10;
  std::vector<RouteMode> modes{RouteMode::Aggregate, RouteMode::Static, RouteMode::Direct};
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--routers")
      a.routers = parse_size_list(value);
    else if (key == "--nic")
      a.nic = parse_bandwidth(value);
    else if (key == "--size")
      a.size = parse_size(value);
    else if (key == "--count")
      a.count = std::stoi(value);
    else if (key == "--chunk")
      a.chunk = parse_size(value);
    else if (key == "--modes") {
      a.modes.clear();
      std::size_t start = 0;
      while (start <= value.size()) {
        const auto comma = value.find(',', start);
        a.modes.push_back(parse_route_mode(value.substr(start, comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else
      throw UsageError("unknown option " + key);
  }
  return a;
}

const char* kSecret = "wan_routers benchmark secret";

RankOptions rank_options(const Args& a, RouteMode mode, std::uint16_t site) {
  RankOptions o;
  o.self = {site, 0};
  o.mode = mode;
  o.max_chunk = a.chunk;
  o.job_id = 1;
  o.secret = runtime::JobSecret::from_text(kSecret);
  o.timeout = std::chrono::seconds(60);
  o.listen = {asio::ip::make_address("127.0.0.1"), 0};
  o.direct_pacing = static_cast<std::uint64_t>(a.nic);
  return o;
}

// Seconds to move the messages from site 0 to site 1 (and be acknowledged); checks the bytes.
double transfer(const Args& a, RankOptions sender_options, RankOptions receiver_options) {
  RankEndpoint receiver(receiver_options);
  RankEndpoint sender(sender_options);
  std::map<RankAddress, asio::ip::tcp::endpoint> directory{
      {{0, 0}, {asio::ip::make_address("127.0.0.1"), sender.port()}},
      {{1, 0}, {asio::ip::make_address("127.0.0.1"), receiver.port()}}};
  auto far = std::async(std::launch::async, [&] {
    receiver.connect(directory);
    std::vector<std::byte> buffer(a.size), ack(1);
    bool exact = true;
    for (int i = 0; i < a.count; ++i) {
      receiver.recv({0, 0}, buffer);
      exact = exact && buffer[a.size / 2] == static_cast<std::byte>(i);
    }
    receiver.send({0, 0}, ack);
    return exact;
  });
  sender.connect(directory);
  std::vector<std::byte> message(a.size), ack(1);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < a.count; ++i) {
    message[a.size / 2] = static_cast<std::byte>(i);
    sender.send({1, 0}, message);
  }
  sender.recv({1, 0}, ack);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!far.get()) throw std::runtime_error("a message arrived wrong");
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    const double bytes = static_cast<double>(a.size) * a.count;
    fmt::print("one NIC: {}; {} x {} from site 0 to site 1\n", format_bandwidth(a.nic), a.count,
               format_size(a.size));
    for (std::uint64_t r : a.routers) {
      RouterGridOptions g;
      g.routers = static_cast<int>(r);
      g.job_id = 1;
      g.secret = runtime::JobSecret::from_text(kSecret);
      g.wan_pacing = static_cast<std::uint64_t>(a.nic);
      RouterGrid grid(g);
      for (RouteMode mode : a.modes) {
        RankOptions s = rank_options(a, mode, 0), d = rank_options(a, mode, 1);
        s.routers = grid.endpoints(0);
        d.routers = grid.endpoints(1);
        const double seconds = transfer(a, s, d);
        const double rate = bytes / seconds;
        fmt::print("R {} {}: {} = {:.2f} x one NIC\n", r, to_string(mode), format_bandwidth(rate),
                   rate / a.nic);
        std::fflush(stdout);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "wan_routers: {}\n", e.what());
    return 1;
  }
}
