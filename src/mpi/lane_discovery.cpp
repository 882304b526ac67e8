// mpi/lane_discovery.cpp — interfaces up, filtered (lane_discovery.hpp).
#include "mpi/lane_discovery.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <fstream>

#include "multilane/errors.hpp"

namespace multilane::mpi {

namespace {

double link_speed_bps(const std::string& interface) {
  std::ifstream file("/sys/class/net/" + interface + "/speed");
  long long megabits = 0;
  if (file >> megabits && megabits > 0) return static_cast<double>(megabits) * 1e6 / 8;
  return 1.25e9;
}

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

bool is_address_prefix(std::string_view entry) {
  return entry.find_first_of(".:") != std::string_view::npos;
}

bool matches(const LocalLane& lane, std::string_view entry) {
  if (is_address_prefix(entry)) return std::string_view(lane.address).starts_with(entry);
  return lane.interface == entry;
}

bool skipped_by_default(const LocalLane& lane) {
  const std::string_view name = lane.interface;
  return name.starts_with("docker") || name.starts_with("virbr");
}

std::string describe(const std::vector<LocalLane>& up) {
  if (up.empty()) return "none";
  std::string out;
  for (const LocalLane& lane : up) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", lane.interface, lane.address);
  }
  return out;
}

}  // namespace

std::vector<LocalLane> interfaces_up() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    throw CommunicationError(ErrorKind::resource, "getifaddrs failed: set MULTILANE_HOST");
  }
  std::vector<LocalLane> out;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    if ((entry->ifa_flags & IFF_UP) == 0 || (entry->ifa_flags & IFF_LOOPBACK) != 0) continue;
    std::array<char, INET_ADDRSTRLEN> text{};
    const auto* address = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    if (inet_ntop(AF_INET, &address->sin_addr, text.data(), text.size()) == nullptr) continue;
    out.push_back({.interface = entry->ifa_name,
                   .address = text.data(),
                   .bps = link_speed_bps(entry->ifa_name)});
  }
  freeifaddrs(list);
  return out;
}

std::vector<LocalLane> select_lanes(const std::vector<LocalLane>& up, std::string_view spec) {
  std::vector<LocalLane> out;
  const std::vector<std::string_view> entries = split_commas(spec);
  if (entries.empty()) {
    for (const LocalLane& lane : up) {
      if (!skipped_by_default(lane)) out.push_back(lane);
    }
    return out;
  }
  for (const std::string_view entry : entries) {
    bool found = false;
    for (const LocalLane& lane : up) {
      if (!matches(lane, entry)) continue;
      found = true;
      const bool taken = std::any_of(out.begin(), out.end(), [&](const LocalLane& chosen) {
        return chosen.address == lane.address;
      });
      if (!taken) out.push_back(lane);
    }
    if (!found) {
      throw UsageError(fmt::format(
          "MULTILANE_LANES=\"{}\": \"{}\" matches no interface that is up with an IPv4 address "
          "(up: {})",
          spec, entry, describe(up)));
    }
  }
  return out;
}

std::vector<LocalLane> discover_lanes() {
  const char* spec = std::getenv("MULTILANE_LANES");
  return select_lanes(interfaces_up(), spec == nullptr ? "" : spec);
}

std::string lanes_text(const std::vector<LocalLane>& lanes) {
  std::string out;
  for (const LocalLane& lane : lanes) {
    out += fmt::format("{}{}@{}", out.empty() ? "" : ",", lane.address, lane.bps);
  }
  return out;
}

std::vector<LocalLane> parse_lanes_text(std::string_view text) {
  std::vector<LocalLane> out;
  for (const std::string_view item : split_commas(text)) {
    const std::size_t at = item.find('@');
    LocalLane lane;
    const std::string_view speed = at == std::string_view::npos ? "" : item.substr(at + 1);
    const auto parsed = std::from_chars(speed.data(), speed.data() + speed.size(), lane.bps);
    if (at == 0 || speed.empty() || parsed.ec != std::errc() ||
        parsed.ptr != speed.data() + speed.size() || !(lane.bps > 0)) {
      throw CommunicationError(ErrorKind::protocol,
                               fmt::format("malformed lane \"{}\" from a peer", item));
    }
    lane.address = std::string(item.substr(0, at));
    out.push_back(std::move(lane));
  }
  return out;
}

}  // namespace multilane::mpi
