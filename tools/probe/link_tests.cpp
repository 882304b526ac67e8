// tools/probe/link_tests.cpp — the tests' plan and the figures they give (link_tests.hpp).
#include "probe/link_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace multilane::probe {

namespace {

// The first rank of every node, by node.
std::map<int, int> leaders(const Platform& platform) {
  std::map<int, int> out;
  for (int rank = 0; rank < platform.num_ranks(); ++rank) out.emplace(platform.node_of(rank), rank);
  return out;
}

int common_lanes(const Platform& platform, int node_a, int node_b) {
  return static_cast<int>(std::min(platform.nodes[static_cast<std::size_t>(node_a)].lanes.size(),
                                   platform.nodes[static_cast<std::size_t>(node_b)].lanes.size()));
}

Flow flow(const std::map<int, int>& leader, int node_a, int node_b, int lanes, int streams) {
  return {.sender = leader.at(node_a),
          .receiver = leader.at(node_b),
          .lanes = lanes,
          .streams = streams};
}

}  // namespace

std::string LinkTest::describe(const Platform& platform) const {
  int streams = 0;
  for (const Flow& f : flows) streams += f.lanes * f.streams;
  const std::string& a = platform.sites[static_cast<std::size_t>(site_a)].name;
  const std::string& b = platform.sites[static_cast<std::size_t>(site_b)].name;
  switch (kind) {
    case LinkTestKind::Lanes:
      return fmt::format("lanes of {}: {} stream(s)", a, streams);
    case LinkTestKind::WanOneStream:
      return fmt::format("one stream {} -> {}", a, b);
    case LinkTestKind::WanAll:
      return fmt::format("all of {} -> {}: {} stream(s)", a, b, streams);
  }
  return "";
}

std::vector<LinkTest> plan_link_tests(const Platform& platform, int streams) {
  const std::map<int, int> leader = leaders(platform);
  std::vector<std::vector<int>> nodes(static_cast<std::size_t>(platform.num_sites()));
  for (const auto& [node, rank] : leader) {
    nodes[static_cast<std::size_t>(platform.nodes[static_cast<std::size_t>(node)].site)].push_back(
        node);
  }
  std::vector<LinkTest> tests;
  for (int s = 0; s < platform.num_sites(); ++s) {
    const std::vector<int>& here = nodes[static_cast<std::size_t>(s)];
    if (here.size() < 2) continue;
    tests.push_back(
        {.kind = LinkTestKind::Lanes,
         .site_a = s,
         .site_b = s,
         .flows = {flow(leader, here[0], here[1], common_lanes(platform, here[0], here[1]), 1)}});
  }
  for (int a = 0; a < platform.num_sites(); ++a) {
    for (int b = a + 1; b < platform.num_sites(); ++b) {
      const std::vector<int>& from = nodes[static_cast<std::size_t>(a)];
      const std::vector<int>& to = nodes[static_cast<std::size_t>(b)];
      if (from.empty() || to.empty()) continue;
      tests.push_back({.kind = LinkTestKind::WanOneStream,
                       .site_a = a,
                       .site_b = b,
                       .flows = {flow(leader, from[0], to[0], 1, 1)}});
      LinkTest all{.kind = LinkTestKind::WanAll, .site_a = a, .site_b = b, .flows = {}};
      for (std::size_t i = 0; i < std::min(from.size(), to.size()); ++i) {
        all.flows.push_back(
            flow(leader, from[i], to[i], common_lanes(platform, from[i], to[i]), streams));
      }
      tests.push_back(std::move(all));
    }
  }
  return tests;
}

void apply_link_figures(Platform& platform, const std::vector<LinkTest>& tests,
                        const std::vector<double>& bytes_per_second) {
  std::map<std::pair<int, int>, double> one_stream;
  for (std::size_t t = 0; t < tests.size(); ++t) {
    const LinkTest& test = tests[t];
    const double measured = bytes_per_second[t];
    if (test.kind == LinkTestKind::Lanes) {
      const double per_lane = measured / test.flows.front().lanes;
      for (Node& node : platform.nodes) {
        if (node.site != test.site_a) continue;
        for (Lane& lane : node.lanes) lane.up_bps = lane.down_bps = per_lane;
      }
    } else if (test.kind == LinkTestKind::WanOneStream) {
      one_stream[{test.site_a, test.site_b}] = measured;
    }
  }
  for (std::size_t t = 0; t < tests.size(); ++t) {
    const LinkTest& test = tests[t];
    if (test.kind != LinkTestKind::WanAll) continue;
    WanLink* link = nullptr;
    for (WanLink& candidate : platform.wan_links) {
      if (std::minmax(candidate.site_a, candidate.site_b) ==
          std::minmax(test.site_a, test.site_b)) {
        link = &candidate;
      }
    }
    if (link == nullptr) continue;
    int connections = 0;
    for (const Flow& f : test.flows) connections += f.lanes * f.streams;
    link->aggregate_bps = bytes_per_second[t];
    link->tcp_window_bytes = 0;
    link->per_connection_table = {
        {.connections = 1, .bps = one_stream[{test.site_a, test.site_b}]}};
    if (connections > 1) {
      link->per_connection_table.push_back(
          {.connections = connections, .bps = bytes_per_second[t] / connections});
    }
  }
}

}  // namespace multilane::probe
