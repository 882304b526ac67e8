// Segment names, creation and cleanup of stale segments (their creator is dead).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "runtime/shm/process_alive.hpp"
#include "runtime/shm/segment.hpp"
#include "runtime/shm/segment_name.hpp"
#include "runtime/shm/shm_error.hpp"
#include "shm/fork_ranks.hpp"

namespace multilane::runtime::shm {
namespace {

using testing::unique_job_id;

TEST(ShmSegmentName, FormatsAndParsesBack) {
  const SegmentName name{0x2a, 3, 1, 4711};
  EXPECT_EQ(name.text(), "/multilane-000000000000002a-3-1-4711");
  EXPECT_EQ(SegmentName::parse("multilane-000000000000002a-3-1-4711"), name);
  EXPECT_EQ(SegmentName::parse(name.text().substr(1)), name);
}

TEST(ShmSegmentName, RejectsOtherFiles) {
  for (const char* entry :
       {"multilane-2a-3-1-4711", "multilane-000000000000002a-3-1",
        "multilane-000000000000002a-3-1-0", "multilane-000000000000002a-3-1-47x1", "sem.multilane",
        "multilane-000000000000002g-3-1-1", "other-000000000000002a-3-1-4711",
        "multilane-000000000000002a--1-4711"}) {
    EXPECT_EQ(SegmentName::parse(entry), std::nullopt) << entry;
  }
}

TEST(ShmSegment, CreateIsExclusiveAndOpenWaitsForTheSize) {
  const SegmentName name{unique_job_id(), 0, 0, getpid()};
  {
    ShmSegment segment = ShmSegment::create(name, 8192);
    EXPECT_EQ(segment.size(), 8192u);
    EXPECT_EQ(list_segments(name.job_id), std::vector<SegmentName>{name});
    try {
      ShmSegment::create(name, 8192);
      ADD_FAILURE() << "created twice";
    } catch (const ShmError& error) {
      EXPECT_EQ(std::string(error.what()),
                "shared-memory segment " + name.text() + ": shm_open (create) failed: File exists");
    }
    EXPECT_EQ(ShmSegment::open(name, 16384), std::nullopt);  // not that large (yet)
    auto other = ShmSegment::open(name, 8192);
    ASSERT_TRUE(other.has_value());
    segment.data()[100] = std::byte{42};
    EXPECT_EQ(other->data()[100], std::byte{42});  // the same memory
    EXPECT_TRUE(segment.unlink_name());
    EXPECT_FALSE(segment.unlink_name());
    other->data()[101] = std::byte{43};  // the mappings outlive the name
    EXPECT_EQ(segment.data()[101], std::byte{43});
  }
  EXPECT_EQ(ShmSegment::open(name, 1), std::nullopt);
  EXPECT_TRUE(list_segments(name.job_id).empty());
}

TEST(ShmSegment, StaleSegmentsOfDeadCreatorsAreRemoved) {
  const std::uint64_t job = unique_job_id();
  // A child creates a segment and is killed: its segment is stale.
  const auto outcomes = testing::run_ranks(1, [&](int) {
    const ShmSegment segment = ShmSegment::create({job, 1, 0, getpid()}, 4096);
    kill(getpid(), SIGKILL);
  });
  ASSERT_EQ(outcomes[0].signal, SIGKILL);
  EXPECT_FALSE(process_alive(outcomes[0].pid));
  // A live creator's segment (this process) must survive the cleanup.
  const SegmentName live{job, 2, 0, getpid()};
  const ShmSegment mine = ShmSegment::create(live, 4096);
  ASSERT_EQ(list_segments(job).size(), 2u);
  EXPECT_EQ(list_segments(job, 1).size(), 1u);

  const auto removed = remove_stale_segments(job);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], (SegmentName{job, 1, 0, outcomes[0].pid}));
  EXPECT_EQ(list_segments(job), std::vector<SegmentName>{live});
  EXPECT_TRUE(remove_stale_segments(job).empty());
  mine.unlink_name();
  EXPECT_TRUE(list_segments(job).empty());
}

// A process about to abort removes the names of its own segments and no other's, and the
// memory stays mapped for its threads still using it.
TEST(ShmSegment, RemoveOwnSegmentsLeavesOtherCreatorsAndTheMappings) {
  const std::uint64_t job = unique_job_id();
  ShmSegment first = ShmSegment::create({job, 0, 0, getpid()}, 4096);
  ShmSegment second = ShmSegment::create({job, 0, 1, getpid()}, 4096);
  // A name whose creator is another live process (the one that started this test).
  const SegmentName others{job, 1, 0, getppid()};
  ShmSegment theirs = ShmSegment::create(others, 4096);

  EXPECT_EQ(remove_own_segments(), 2);
  EXPECT_EQ(list_segments(job), std::vector<SegmentName>{others});
  first.data()[7] = std::byte{9};
  EXPECT_EQ(first.data()[7], std::byte{9});
  EXPECT_FALSE(second.unlink_name()) << "already removed";
  EXPECT_EQ(remove_own_segments(), 0);
  EXPECT_TRUE(theirs.unlink_name());
  EXPECT_TRUE(list_segments(job).empty());
}

TEST(ShmProcessAlive, ZombiesAndUnknownPidsAreDead) {
  EXPECT_TRUE(process_alive(getpid()));
  EXPECT_FALSE(process_alive(0));
  EXPECT_FALSE(process_alive(-5));
  const pid_t child = fork();
  if (child == 0) _exit(0);
  // Not reaped yet: a zombie, which kill(pid, 0) still finds.
  for (int i = 0; i < 200 && process_alive(child); ++i) usleep(1000);
  EXPECT_FALSE(process_alive(child));
  EXPECT_EQ(kill(child, 0), 0);  // the zombie exists
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(process_alive(child));
}

}  // namespace
}  // namespace multilane::runtime::shm
