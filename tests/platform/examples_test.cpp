// Every example platform loads with the expected shape and survives a write/read round trip;
// every malformed example fails with the exact error its `# expect:` comment states.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "multilane/platform_file.hpp"
#include "platform_test_support.hpp"

namespace multilane {
namespace {

using testing::example;

struct ExpectedShape {
  std::string file;
  int sites;
  int nodes;
  int lanes_per_node;
  int cores_per_node;
  int ranks;
  int wan_links;
};

class ExampleTest : public ::testing::TestWithParam<ExpectedShape> {};

TEST_P(ExampleTest, LoadsWithExpectedShape) {
  const auto& expected = GetParam();
  const Platform p = load_platform_file(example(expected.file));
  EXPECT_EQ(p.source, example(expected.file));
  EXPECT_EQ(p.num_sites(), expected.sites);
  EXPECT_EQ(static_cast<int>(p.nodes.size()), expected.nodes);
  for (const auto& node : p.nodes) {
    EXPECT_EQ(static_cast<int>(node.lanes.size()), expected.lanes_per_node) << node.name;
    EXPECT_EQ(node.cores, expected.cores_per_node) << node.name;
  }
  EXPECT_EQ(p.num_ranks(), expected.ranks);
  EXPECT_EQ(static_cast<int>(p.wan_links.size()), expected.wan_links);
}

TEST_P(ExampleTest, RoundTripsThroughToml) {
  const Platform p = load_platform_file(example(GetParam().file));
  testing::expect_same_platform(parse_platform(platform_to_toml(p), "written"), p);
}

TEST_P(ExampleTest, DescribeNamesEverySite) {
  const Platform p = load_platform_file(example(GetParam().file));
  const std::string text = describe_platform(p);
  for (const auto& site : p.sites)
    EXPECT_NE(text.find("site " + site.name + ":"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Platforms, ExampleTest,
                         ::testing::Values(ExpectedShape{"single-site-32.toml", 1, 32, 2, 1, 32, 0},
                                           ExpectedShape{"two-sites-16x2.toml", 2, 32, 2, 1, 32, 1},
                                           ExpectedShape{"grid-2x32-wan5ms.toml", 2, 64, 2, 1, 64,
                                                         1},
                                           ExpectedShape{"smp-16x16.toml", 1, 16, 1, 16, 256, 0},
                                           ExpectedShape{"smp-1x4.toml", 1, 1, 1, 4, 4, 0},
                                           ExpectedShape{"router-2x16.toml", 2, 32, 1, 1, 32, 1},
                                           ExpectedShape{"two-sites-4x2.toml", 2, 8, 2, 1, 8, 1}),
                         [](const auto& info) {
                           std::string name = info.param.file.substr(0, info.param.file.find('.'));
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(Examples, FiguresOfTheScatterGatherGrid) {
  const Platform p = load_platform_file(example("grid-2x32-wan5ms.toml"));
  const WanLink& wan = p.wan_links.at(0);
  EXPECT_EQ(wan.latency_s, 5e-3);
  EXPECT_EQ(wan.aggregate_bps, 125e6);
  EXPECT_EQ(wan.per_connection_bps(1), 31.25e6);    // 250 Mbit/s per connection
  EXPECT_EQ(wan.per_connection_bps(8), 125e6 / 8);  // the 1 Gbit/s aggregate shared
  EXPECT_EQ(p.nodes.front().lanes.front().up_bps, 125e6);
}

// The `# expect: LINE: key: reason` comment on line 2 of a malformed example.
std::string expected_error(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  const std::string tag = "# expect: ";
  return line.starts_with(tag) ? file.string() + ":" + line.substr(tag.size()) : "(no expect line)";
}

TEST(Examples, EveryMalformedFileGivesItsExpectedError) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(example("bad"))) {
    if (entry.path().extension() != ".toml") continue;
    const std::string path = entry.path().string();
    EXPECT_EQ(testing::platform_error([&] { load_platform_file(path); }), expected_error(path));
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

TEST(Examples, SomeMalformedFilesSpelledOut) {
  const std::string bad = example("bad/");
  EXPECT_EQ(testing::platform_error([&] { load_platform_file(bad + "wan-to-itself.toml"); }),
            bad + "wan-to-itself.toml:14: wan[0].between: a link from site \"tokyo\" to itself");
  EXPECT_EQ(testing::platform_error([&] { load_platform_file(bad + "zero-lanes.toml"); }),
            bad + "zero-lanes.toml:8: site[0].lanes: must be between 1 and 64, got 0");
  EXPECT_EQ(testing::platform_error([&] { load_platform_file(bad + "syntax-error.toml"); }),
            bad +
                "syntax-error.toml:7: syntax: Error while parsing key-value pair: expected "
                "value, saw '\\n'");
}

TEST(Examples, MissingFile) {
  EXPECT_EQ(testing::platform_error([] { load_platform_file("/nonexistent/p.toml"); }),
            "/nonexistent/p.toml: cannot open: No such file or directory");
}

}  // namespace
}  // namespace multilane
