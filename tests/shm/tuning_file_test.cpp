// The tuning file the runtime reads (runtime/shm/tuning_file.hpp): round trip, lookup by call
// size, and errors naming file, line and key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "multilane/errors.hpp"
#include "runtime/shm/tuning_file.hpp"

namespace multilane::runtime::shm {
namespace {

std::string write_temp(const std::string& text) {
  const std::string path = "/tmp/multilane-tuning-test-" + std::to_string(getpid()) + ".toml";
  std::ofstream(path) << text;
  return path;
}

TEST(TuningFile, RoundTripsAndFindsTheSmallestEntryThatCoversTheCall) {
  TuningTable table;
  table.entries = {{Collective::Bcast, 1024, {8192, 4}},
                   {Collective::Bcast, 65536, {16384, 8}},
                   {Collective::Scatter, 0, {4096, 2}}};
  const std::string path = write_temp(tuning_to_toml(table, "test"));
  const TuningTable read = read_tuning_file(path);
  unlink(path.c_str());
  ASSERT_EQ(read.entries.size(), 3u);
  EXPECT_EQ(read.find(Collective::Bcast, 1)->buffer_size, 8192u);
  EXPECT_EQ(read.find(Collective::Bcast, 1024)->buffer_size, 8192u);
  EXPECT_EQ(read.find(Collective::Bcast, 1025)->pipeline_buffers, 8);
  EXPECT_EQ(read.find(Collective::Bcast, 1 << 30)->buffer_size, 16384u);  // the largest
  EXPECT_EQ(read.find(Collective::Scatter, 99)->buffer_size, 4096u);
  EXPECT_FALSE(read.find(Collective::Alltoall, 1).has_value());
  EXPECT_EQ(read.capacity(), 8u * 16384u);
  EXPECT_EQ(read.capacity_with(ShmTuning{}), 16u * 32768u);  // the group's own is larger
  EXPECT_EQ(read.capacity_with(ShmTuning{1024, 2}), 8u * 16384u);
  EXPECT_EQ(read.find(Collective::Bcast, 1)->copies, CopyMode::Auto);
}

TEST(TuningFile, KeepsHowACallCopies) {
  TuningTable table;
  table.entries = {{Collective::Alltoall, 4096, {65536, 2, CopyMode::Twice}},
                   {Collective::Alltoall, 1 << 20, {32768, 16, CopyMode::Once}},
                   {Collective::Gather, 64, {1024, 4}}};
  const std::string text = tuning_to_toml(table, "test");
  EXPECT_NE(text.find("copies = \"twice\""), std::string::npos) << text;
  EXPECT_NE(text.find("copies = \"once\""), std::string::npos) << text;
  EXPECT_EQ(text.find("copies = \"auto\""), std::string::npos) << text;  // the default: left out
  const std::string path = write_temp(text);
  const TuningTable read = read_tuning_file(path);
  unlink(path.c_str());
  ASSERT_EQ(read.entries.size(), 3u);
  EXPECT_EQ(read.find(Collective::Alltoall, 4096)->copies, CopyMode::Twice);
  EXPECT_EQ(read.find(Collective::Alltoall, 4097)->copies, CopyMode::Once);
  EXPECT_EQ(read.find(Collective::Gather, 1)->copies, CopyMode::Auto);
  EXPECT_EQ(read.entries[0].tuning, (ShmTuning{65536, 2, CopyMode::Twice}));
}

TEST(TuningFile, ErrorsNameFileLineAndKey) {
  const std::string path = write_temp(
      "[[shm]]\ncollective = \"bcast\"\nmax_size = 1\nbuffer_size = 4096\n"
      "pipeline_buffers = 65\n");
  try {
    read_tuning_file(path);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":5: pipeline_buffers: 65 is outside 1..64");
  }
  std::ofstream(path) << "[[shm]]\ncollective = \"reduce\"\n";
  try {
    read_tuning_file(path);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":2: collective: must be bcast, scatter, gather, allgather or alltoall");
  }
  std::ofstream(path) << "[[shm]]\ncollective = \"gather\"\nmax_size = 1\nbuffer_size = 4096\n"
                         "pipeline_buffers = 2\ncopies = \"thrice\"\n";
  try {
    read_tuning_file(path);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":6: copies: must be \"auto\", \"once\" or \"twice\"");
  }
  unlink(path.c_str());
  EXPECT_THROW(read_tuning_file("/nonexistent/tuning.toml"), UsageError);
}

}  // namespace
}  // namespace multilane::runtime::shm
