// tools/probe/link_tests.hpp — what `multilane platform probe` measures between the nodes it
// found, and how the figures fill in the platform.
//
// One leader per node (its first rank) takes part; a flow joins two leaders on their lanes
// (lane i to lane i: a rail) with a number of TCP streams per lane, and a test runs its flows at
// once for a few seconds:
//
//   lanes of site s        first node -> second node, every lane, one stream each (a short
//                          round trip needs no more, and more streams overflow a shaped lane's
//                          queue): the lane figure of every node of s (total / lanes)
//   one stream a -> b      first node of a -> first node of b, lane 0, 1 stream: b_WAN(1)
//   all of a -> b          node i of a -> node i of b for every i both sites have, every lane,
//                          `streams` streams each, P streams in all: B_WAN, the aggregate (a
//                          lower bound when the lanes of the nodes that take part carry less
//                          than the WAN), and b_WAN(P) = B_WAN / P
//
// The WAN link's per-connection table is these two points; the model interpolates between
// them (platform.hpp). One stream limited by its TCP window over the round trip shows as a
// b_WAN(1) below the lanes.
//
// Sites with one node keep the interfaces' link speed as their lanes' figure.
#pragma once

#include <string>
#include <vector>

#include "multilane/platform.hpp"

namespace multilane::probe {

struct Flow {
  int sender = 0;    // rank
  int receiver = 0;  // rank
  int lanes = 1;     // lanes 0 .. lanes-1 of both nodes
  int streams = 1;   // per lane
};

enum class LinkTestKind { Lanes, WanOneStream, WanAll };

struct LinkTest {
  LinkTestKind kind = LinkTestKind::Lanes;
  int site_a = 0;
  int site_b = 0;  // site_a for Lanes
  std::vector<Flow> flows;
  std::string describe(const Platform& platform) const;  // "all of east -> west: 8 streams"
};

// The tests for `platform` (its ranks placed), `streams` streams per lane across the WAN.
std::vector<LinkTest> plan_link_tests(const Platform& platform, int streams);
// Fills in lane bandwidths and WAN figures from each test's measured total (bytes/s, same
// order as `tests`).
void apply_link_figures(Platform& platform, const std::vector<LinkTest>& tests,
                        const std::vector<double>& bytes_per_second);

}  // namespace multilane::probe
