// The PMPI library's pure parts: the route policy, the settings read from the environment and
// the placement of ranks on a platform file by name.
#include <gtest/gtest.h>

#include <cstdlib>

#include "mpi/discovered_platform.hpp"
#include "mpi/platform_match.hpp"
#include "mpi/route_policy.hpp"
#include "mpi/settings.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"

namespace multilane::mpi {
namespace {

// Sets a variable for the life of the object.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedVariable() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(RoutePolicy, SmallCallsOnOneNodeStayWithTheMpiLibrary) {
  Settings settings;
  RoutePolicy policy(settings);
  EXPECT_FALSE(policy.choose(WrappedCall::Bcast, (2u << 20) - 1, {8, 1, 1}).multilane);
  EXPECT_TRUE(policy.choose(WrappedCall::Bcast, 2u << 20, {8, 1, 1}).multilane);
  EXPECT_FALSE(policy.choose(WrappedCall::Gather, (512u << 10) - 1, {8, 1, 1}).multilane);
  EXPECT_TRUE(policy.choose(WrappedCall::Scatter, 512u << 10, {8, 1, 1}).multilane);
  EXPECT_TRUE(policy.choose(WrappedCall::Alltoall, 64u << 10, {8, 1, 1}).multilane);
  EXPECT_FALSE(policy.choose(WrappedCall::Barrier, 1, {8, 1, 1}).multilane);
  EXPECT_EQ(policy.choose(WrappedCall::Bcast, 100, {8, 1, 1}).reason,
            "100 B on 1 node(s) of one site, below 2097152 B");
}

TEST(RoutePolicy, OnSeveralNodesOfOneSiteFromQuarterOfAMebibyte) {
  Settings settings;
  RoutePolicy policy(settings);
  EXPECT_FALSE(policy.choose(WrappedCall::Alltoall, (256u << 10) - 1, {8, 2, 1}).multilane);
  const Route route = policy.choose(WrappedCall::Bcast, 256u << 10, {8, 2, 1});
  EXPECT_TRUE(route.multilane);
  EXPECT_EQ(route.algorithm, "auto");
  EXPECT_FALSE(policy.choose(WrappedCall::Barrier, 1, {8, 2, 1}).multilane);
}

TEST(RoutePolicy, AcrossSitesEverythingButEmptyCallsAndLoneRanks) {
  Settings settings;
  RoutePolicy policy(settings);
  EXPECT_TRUE(policy.choose(WrappedCall::Bcast, 8, {8, 2, 2}).multilane);
  EXPECT_TRUE(policy.choose(WrappedCall::Barrier, 1, {8, 2, 2}).multilane);
  EXPECT_FALSE(policy.choose(WrappedCall::Gather, 0, {8, 2, 2}).multilane);
  EXPECT_FALSE(policy.choose(WrappedCall::Gather, 1 << 20, {1, 1, 1}).multilane);
}

TEST(RoutePolicy, AForcedRouteWinsAndSaysSo) {
  Settings settings;
  settings.forced[static_cast<std::size_t>(WrappedCall::Scatter)] = "binomial";
  settings.forced[static_cast<std::size_t>(WrappedCall::Bcast)] = "mpi";
  RoutePolicy policy(settings);
  const Route scatter = policy.choose(WrappedCall::Scatter, 0, {4, 1, 1});
  EXPECT_TRUE(scatter.multilane);
  EXPECT_EQ(scatter.algorithm, "binomial");
  EXPECT_EQ(scatter.reason, "MULTILANE_ALGORITHM_SCATTER=binomial");
  EXPECT_FALSE(policy.choose(WrappedCall::Bcast, 64u << 20, {4, 4, 1}).multilane);
}

TEST(RoutePolicy, OneSizeForEveryCollectiveFromTheVariable) {
  ScopedVariable small("MULTILANE_MPI_SMALL", "1KiB");
  const Settings settings = Settings::from_environment();
  RoutePolicy policy(settings);
  EXPECT_TRUE(policy.choose(WrappedCall::Bcast, 1024, {4, 1, 1}).multilane);
  EXPECT_FALSE(policy.choose(WrappedCall::Alltoall, 1023, {4, 1, 1}).multilane);
}

TEST(Settings, ReadsTheVariables) {
  ScopedVariable off("MULTILANE_MPI", "off");
  ScopedVariable explain("MULTILANE_EXPLAIN", "1");
  ScopedVariable bcast("MULTILANE_ALGORITHM_BCAST", "multilane");
  ScopedVariable allgather("MULTILANE_ALGORITHM_ALLGATHER", "multilane");
  const Settings settings = Settings::from_environment();
  EXPECT_FALSE(settings.enabled);
  EXPECT_TRUE(settings.explain);
  EXPECT_EQ(settings.forced[static_cast<std::size_t>(WrappedCall::Bcast)], "multilane");
  // No allgather algorithm has that name: it means auto.
  EXPECT_EQ(settings.forced[static_cast<std::size_t>(WrappedCall::Allgather)], "auto");
}

void expect_error(const char* name, const char* value, const std::string& message) {
  ScopedVariable variable(name, value);
  try {
    Settings::from_environment();
    ADD_FAILURE() << name << "=" << value << " was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Settings, BadValuesAreErrorsNamingTheVariable) {
  expect_error("MULTILANE_MPI", "maybe", "MULTILANE_MPI=maybe: must be on or off");
  expect_error("MULTILANE_EXPLAIN", "yes", "MULTILANE_EXPLAIN=yes: must be 0 or 1");
  expect_error(
      "MULTILANE_ALGORITHM_SCATTER", "tree",
      "MULTILANE_ALGORITHM_SCATTER=tree: unknown scatter algorithm \"tree\": choose mpi, auto or "
      "one of linear");
  expect_error("MULTILANE_ALGORITHM_BARRIER", "linear",
               "MULTILANE_ALGORITHM_BARRIER=linear: must be mpi or auto");
  expect_error("MULTILANE_MPI_SMALL", "lots", "MULTILANE_MPI_SMALL=lots");
}

const char* kTwoNodes = R"(
name = "two"
[defaults]
cores = 2
lane_bandwidth = "1Gbit/s"
lan_latency = "20us"
[[site]]
name = "s"
[[site.node]]
name = "alpha"
[[site.node]]
name = "beta"
)";

// Ranks on hosts of these names, without addresses.
std::vector<RankHost> named(const std::vector<std::string>& names) {
  std::vector<RankHost> out;
  for (const std::string& name : names) out.push_back({.name = name, .addresses = {}});
  return out;
}

TEST(PlatformMatch, RanksGoToTheirNodesInRankOrder) {
  const Platform file = parse_platform(kTwoNodes, "two.toml");
  const Platform placed =
      place_on_file(file, "two.toml", named({"beta", "alpha.example.org", "beta", "alpha"}));
  ASSERT_EQ(placed.num_ranks(), 4);
  EXPECT_EQ(placed.node_of(0), 1);
  EXPECT_EQ(placed.ranks[0].core, 0);
  EXPECT_EQ(placed.node_of(1), 0);
  EXPECT_EQ(placed.node_of(2), 1);
  EXPECT_EQ(placed.ranks[2].core, 1);
  EXPECT_EQ(placed.ranks[3].core, 1);
}

TEST(PlatformMatch, AHostOfAnotherNameIsPlacedByItsLaneAddress) {
  const Platform file = parse_platform(
      "name = \"grid\"\n[defaults]\nlan_latency = \"20us\"\n"
      "[[site]]\nname = \"s\"\n[[site.node]]\nname = \"n0\"\ncores = 1\n"
      "lanes = [{bandwidth = \"1Gbit/s\", address = \"198.18.0.1\"}]\n"
      "[[site.node]]\nname = \"n1\"\ncores = 1\n"
      "lanes = [{bandwidth = \"1Gbit/s\", address = \"198.18.0.2\"}]\n",
      "grid.toml");
  const Platform placed = place_on_file(file, "grid.toml",
                                        {{.name = "vm", .addresses = {"10.0.0.5", "198.18.0.2"}},
                                         {.name = "vm", .addresses = {"198.18.0.1"}}});
  EXPECT_EQ(placed.node_of(0), 1);
  EXPECT_EQ(placed.node_of(1), 0);
  const RankHost back =
      parse_rank_host(rank_host_text({.name = "vm", .addresses = {"10.0.0.5", "198.18.0.2"}}));
  EXPECT_EQ(back.name, "vm");
  EXPECT_EQ(back.addresses, (std::vector<std::string>{"10.0.0.5", "198.18.0.2"}));
  EXPECT_TRUE(parse_rank_host("vm\n").addresses.empty());
}

TEST(PlatformMatch, UnknownHostsAndFullNodesAreErrors) {
  const Platform file = parse_platform(kTwoNodes, "two.toml");
  try {
    place_on_file(file, "two.toml", named({"alpha", "gamma"}));
    ADD_FAILURE() << "gamma was placed";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "MULTILANE_PLATFORM=two.toml: rank 1 runs on \"gamma\", "
                  "which is not a node of the file (nodes: alpha, beta), and none of the "
                  "file's lane addresses is one of its host's (none)"),
              std::string::npos)
        << e.what();
  }
  try {
    place_on_file(file, "two.toml", named({"alpha", "alpha", "alpha"}));
    ADD_FAILURE() << "three ranks fit on two cores";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("node \"alpha\" has 2 core(s), but more ranks run on it "
                                         "(rank 2 is one too many)"),
              std::string::npos)
        << e.what();
  }
}

// Ranks on hosts `hashes` that name their sites, without lanes or round trips.
Discovery named_sites(std::vector<std::uint64_t> hashes, std::vector<std::string> sites) {
  Discovery found;
  found.hashes = std::move(hashes);
  found.site_names = std::move(sites);
  return found;
}

TEST(DiscoveredPlatform, EqualHashesShareANodeAndNamedSitesSplitTheNodes) {
  const Platform p = discovered_platform(named_sites({7, 9, 7, 11, 9}, {"a", "b", "a", "b", "b"}));
  ASSERT_EQ(p.num_ranks(), 5);
  ASSERT_EQ(p.num_sites(), 2);
  ASSERT_EQ(p.nodes.size(), 3u);
  EXPECT_EQ(p.node_of(0), p.node_of(2));
  EXPECT_EQ(p.node_of(1), p.node_of(4));
  EXPECT_EQ(p.ranks[2].core, 1);
  EXPECT_EQ(p.nodes[static_cast<std::size_t>(p.node_of(0))].cores, 2);
  EXPECT_EQ(p.site_of(0), 0);
  EXPECT_EQ(p.site_of(3), 1);
  EXPECT_EQ(p.sites[1].name, "b");
  ASSERT_EQ(p.wan_links.size(), 1u);
  EXPECT_GT(p.wan_links[0].latency_s, p.sites[0].lan_latency_s);
}

TEST(DiscoveredPlatform, WithoutSitesOneSiteAndNoWan) {
  const Platform p = discovered_platform(named_sites({1, 1, 1}, {"", "", ""}));
  EXPECT_EQ(p.num_sites(), 1);
  EXPECT_EQ(p.nodes.size(), 1u);
  EXPECT_TRUE(p.wan_links.empty());
}

TEST(DiscoveredPlatform, RanksOfOneNodeMustNameOneSite) {
  try {
    discovered_platform(named_sites({1, 2, 1}, {"a", "b", "c"}));
    ADD_FAILURE() << "a node in two sites";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ranks 0 and 2 share a node but name different sites "
                                         "(\"a\", \"c\")"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace multilane::mpi
