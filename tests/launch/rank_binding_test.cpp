// Which processing unit each rank of a local job is bound to (runtime/launch/rank_binding.hpp).
#include "runtime/launch/rank_binding.hpp"

#include <gtest/gtest.h>
#include <sched.h>

namespace multilane::runtime {
namespace {

// Two cores with two hardware threads each: first units 0 and 2, then their siblings 1 and 3.
const std::vector<int> kTwoCoresSmt{0, 2, 1, 3};

TEST(RankBinding, AutoBindsOneRankPerCoreWhenTheRanksFit) {
  EXPECT_EQ(rank_units(2, RankBinding::Auto, kTwoCoresSmt, 2), (std::vector<int>{0, 2}));
  EXPECT_EQ(rank_units(1, RankBinding::Auto, kTwoCoresSmt, 2), (std::vector<int>{0}));
}

TEST(RankBinding, AutoLeavesRanksUnboundWhenTheyOutnumberTheCores) {
  EXPECT_EQ(rank_units(3, RankBinding::Auto, kTwoCoresSmt, 2), (std::vector<int>{-1, -1, -1}));
}

TEST(RankBinding, CoreWrapsRoundTheCores) {
  EXPECT_EQ(rank_units(5, RankBinding::Core, kTwoCoresSmt, 2), (std::vector<int>{0, 2, 0, 2, 0}));
}

TEST(RankBinding, NoneAndUnknownTopologyBindNobody) {
  EXPECT_EQ(rank_units(2, RankBinding::None, kTwoCoresSmt, 2), (std::vector<int>{-1, -1}));
  EXPECT_EQ(rank_units(2, RankBinding::Core, {}, 0), (std::vector<int>{-1, -1}));
}

TEST(RankBinding, ParsesItsThreeNames) {
  EXPECT_EQ(parse_rank_binding("auto"), RankBinding::Auto);
  EXPECT_EQ(parse_rank_binding("core"), RankBinding::Core);
  EXPECT_EQ(parse_rank_binding("none"), RankBinding::None);
  EXPECT_EQ(parse_rank_binding("socket"), std::nullopt);
  EXPECT_EQ(to_string(RankBinding::Core), "core");
}

TEST(RankBinding, ThisMachineBindsEveryRankToAUnitItMayUse) {
  const std::vector<int> units = rank_units_here(1, RankBinding::Core);
  ASSERT_EQ(units.size(), 1u);
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  ASSERT_GE(units[0], 0);  // hwloc knows this machine
  EXPECT_TRUE(CPU_ISSET(units[0], &allowed));
}

}  // namespace
}  // namespace multilane::runtime
