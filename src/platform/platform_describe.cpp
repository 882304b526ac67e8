// A readable summary of a platform (describe_platform), for `multilane platform show`.
//
// Consecutive nodes of a site that look alike are summarised on one line; a WAN link shows the
// per-connection bandwidth b_WAN(P) for P = 1, 2, 4, ... up to the smaller site, because that
// curve is what decides how many connections the algorithms open.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "multilane/platform_file.hpp"
#include "multilane/units.hpp"
#include "platform/placement_check.hpp"

namespace multilane {

namespace {

std::string plural(long count, std::string_view word) {
  return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
}

std::string lanes_text(const std::vector<Lane>& lanes) {
  const auto same = [&](const Lane& l) {
    return l.up_bps == lanes.front().up_bps && l.down_bps == lanes.front().down_bps;
  };
  const auto one = [](const Lane& l) {
    return l.up_bps == l.down_bps ? format_bandwidth(l.up_bps)
                                  : fmt::format("{} up / {} down", format_bandwidth(l.up_bps),
                                                format_bandwidth(l.down_bps));
  };
  if (std::all_of(lanes.begin(), lanes.end(), same)) {
    return fmt::format("{} of {}", plural(static_cast<long>(lanes.size()), "lane"),
                       one(lanes.front()));
  }
  std::string out = plural(static_cast<long>(lanes.size()), "lane") + ":";
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    out += fmt::format("{} {}", i == 0 ? "" : ",", one(lanes[i]));
  }
  return out;
}

std::string node_text(const Node& node) {
  return fmt::format("{}, {}", plural(node.cores, "core"), lanes_text(node.lanes));
}

// "tokyo-0 .. tokyo-15: 1 core, 2 lanes of 1 Gbit/s", one line per run of alike nodes.
std::string site_nodes(const Platform& platform, const Site& site) {
  std::string out;
  std::size_t begin = 0;
  while (begin < site.nodes.size()) {
    const std::string text = node_text(platform.nodes[site.nodes[begin]]);
    std::size_t end = begin + 1;
    while (end < site.nodes.size() && node_text(platform.nodes[site.nodes[end]]) == text) ++end;
    const std::string& first = platform.nodes[site.nodes[begin]].name;
    const std::string& last = platform.nodes[site.nodes[end - 1]].name;
    const std::string names = end - begin == 1 ? first : fmt::format("{} .. {}", first, last);
    out += fmt::format("    {}: {}\n", names, text);
    begin = end;
  }
  return out;
}

// When the runtime copies a group call's bytes once instead of twice (SharedMemory).
std::string single_copy_text(const SharedMemory& shm) {
  if (shm.single_copy_from == 0) return "never one copy";
  return fmt::format("one copy from {} ({} + {})", format_size(shm.single_copy_from),
                     format_bandwidth(shm.single_copy_bps),
                     format_duration(shm.single_copy_latency_s));
}

std::string site_text(const Platform& platform, const Site& site) {
  return fmt::format(
             "  site {}: {}, LAN latency {}, shared memory {} copy / {} sync, {}, reduces {}\n",
             site.name, plural(static_cast<long>(site.nodes.size()), "node"),
             format_duration(site.lan_latency_s), format_bandwidth(site.shm.copy_bps),
             format_duration(site.shm.sync_latency_s), single_copy_text(site.shm),
             format_bandwidth(site.shm.reduce_bps)) +
         site_nodes(platform, site);
}

std::string connection_cap_text(const WanLink& link) {
  std::string out;
  if (link.per_connection_table.size() == 1) {
    out += "at most " + format_bandwidth(link.per_connection_table.front().bps) + " per connection";
  } else if (!link.per_connection_table.empty()) {
    out += "per connection (P->rate):";
    for (const auto& p : link.per_connection_table) {
      out += fmt::format(" {}->{}", p.connections, format_bandwidth(p.bps));
    }
  }
  if (link.tcp_window_bytes > 0) {
    out += fmt::format("{}TCP window {} (cap {} at this RTT)", out.empty() ? "" : "; ",
                       format_size(static_cast<std::uint64_t>(std::llround(link.tcp_window_bytes))),
                       format_bandwidth(link.connection_cap_bps(1)));
  }
  return out.empty() ? "no per-connection cap" : out;
}

std::string wan_text(const Platform& platform, const WanLink& link) {
  const Site& a = platform.sites[link.site_a];
  const Site& b = platform.sites[link.site_b];
  std::string out = fmt::format(
      "  {} <-> {}: latency {} one-way, aggregate {}, {}\n", a.name, b.name,
      format_duration(link.latency_s),
      link.aggregate_bps > 0 ? format_bandwidth(link.aggregate_bps) : std::string("unlimited"),
      connection_cap_text(link));
  const int max_pairs = static_cast<int>(std::min(a.nodes.size(), b.nodes.size()));
  out += "    b_WAN(P):";
  for (int p = 1;; p *= 2) {
    const int shown = std::min(p, max_pairs);
    out += fmt::format(" P={} {}", shown, format_bandwidth(link.per_connection_bps(shown)));
    if (shown == max_pairs) break;
    out += ",";
  }
  return out + "\n";
}

// "0-15" style ranges of the ranks of one site.
std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  std::size_t i = 0;
  while (i < ranks.size()) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ",") +
           (i == j ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

std::string placement_text(const Platform& platform) {
  std::string out = fmt::format(
      "placement: {} on {}, {}\n", plural(platform.num_ranks(), "rank"),
      plural(platform.total_cores(), "core"),
      is_block_placement(platform) ? "block (cores of a node filled in order)" : "explicit");
  for (int s = 0; s < platform.num_sites(); ++s) {
    const auto ranks = platform.ranks_of_site(s);
    out += fmt::format("  {}: {} ({})\n", platform.sites[s].name,
                       plural(static_cast<long>(ranks.size()), "rank"), rank_ranges(ranks));
  }
  return out;
}

}  // namespace

std::string describe_platform(const Platform& platform) {
  std::string out = fmt::format("platform {} ({}): {}, {}, {}\n", platform.name, platform.source,
                                plural(platform.num_sites(), "site"),
                                plural(static_cast<long>(platform.nodes.size()), "node"),
                                plural(platform.num_ranks(), "rank"));
  out += "sites:\n";
  for (const auto& site : platform.sites) out += site_text(platform, site);
  out += platform.wan_links.empty() ? "WAN links: none\n" : "WAN links:\n";
  for (const auto& link : platform.wan_links) out += wan_text(platform, link);
  return out + placement_text(platform);
}

}  // namespace multilane
