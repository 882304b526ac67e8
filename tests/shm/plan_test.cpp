// The plans (runtime/shm/plan.hpp) run in one process: Table 1's decomposition, the switch
// points, exact bytes and freedom from deadlock for every collective over sizes around every
// switch point, many interleavings, and sequences of calls that change the geometry.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/shm/layout.hpp"
#include "runtime/shm/plan.hpp"
#include "runtime/shm/root_share.hpp"
#include "shm/in_process.hpp"

namespace multilane::runtime::shm {
namespace {

using testing::plan_of;
using testing::PlannedCall;
using testing::run_in_process;

// The rank's steps as "Sender_put Group_sync/W ..." (merged repeats of one primitive kept).
std::string primitives(const ShmPlan& plan) {
  std::string text;
  for (const Step& step : plan.steps) {
    if (!text.empty()) text += ' ';
    text += std::string(to_string(step.primitive));
    if (is_sync(step.primitive)) text += step.role == SyncRole::Writer ? "/W" : "/R";
  }
  return text;
}

CallShape shape(Collective collective, int ranks, std::uint64_t size, int root = 0) {
  CallShape call;
  call.collective = collective;
  call.local_size = ranks;
  call.size = size;
  call.root = root;
  return call;
}

const Geometry kSmall{1024, 4};

TEST(ShmPlan, Table1DecompositionBelowTheBufferSize) {
  // 4 ranks, 1 KiB buffer; every call below fits one stage.
  EXPECT_EQ(primitives(plan_of(shape(Collective::Bcast, 4, 1000, 1), 1, kSmall)),
            "Sender_put Group_sync/W");
  EXPECT_EQ(primitives(plan_of(shape(Collective::Bcast, 4, 1000, 1), 2, kSmall)),
            "Group_sync/R Group_get");
  EXPECT_EQ(primitives(plan_of(shape(Collective::Scatter, 4, 256, 1), 1, kSmall)),
            "Sender_put Sender_put Group_sync/W local_copy");
  EXPECT_EQ(primitives(plan_of(shape(Collective::Scatter, 4, 256, 1), 3, kSmall)),
            "Group_sync/R Group_seg_get");
  EXPECT_EQ(primitives(plan_of(shape(Collective::Gather, 4, 256, 0), 0, kSmall)),
            "Group_sync/R Receiver_get local_copy");
  EXPECT_EQ(primitives(plan_of(shape(Collective::Gather, 4, 256, 0), 2, kSmall)),
            "Group_seg_put Group_sync/W");
  // alltoall with no more ranks than buffers: one stage per rank (its row), one writer each.
  EXPECT_EQ(primitives(plan_of(shape(Collective::Alltoall, 4, 64, 0), 1, kSmall)),
            "Group_seg_put Group_seg_put Group_sync/W Group_sync/R Group_seg_get Group_sync/R "
            "Group_seg_get Group_sync/R Group_seg_get local_copy");
  EXPECT_EQ(plan_of(shape(Collective::Alltoall, 4, 64, 0), 1, kSmall).stages, 4u);
  // More ranks than buffers: Table 1's one stage, every rank a writer and a reader.
  const ShmPlan one_stage = plan_of(shape(Collective::Alltoall, 5, 32, 0), 1, kSmall);
  EXPECT_EQ(one_stage.stages, 1u);
  EXPECT_EQ(primitives(one_stage),
            "Group_seg_put Group_seg_put Group_sync/W Group_sync/R Group_seg_get Group_seg_get "
            "Group_seg_get Group_seg_get local_copy");
  // allgather the same way: rows of one block each when the ranks fit the buffers, else
  // one stage.
  EXPECT_EQ(primitives(plan_of(shape(Collective::Allgather, 4, 256, 0), 0, kSmall)),
            "Group_seg_put Group_sync/W Group_sync/R Group_get Group_sync/R Group_get "
            "Group_sync/R Group_get local_copy");
  EXPECT_EQ(plan_of(shape(Collective::Allgather, 4, 256, 0), 0, kSmall).stages, 4u);
  const ShmPlan allgather = plan_of(shape(Collective::Allgather, 5, 200, 0), 0, kSmall);
  EXPECT_EQ(allgather.stages, 1u);
  EXPECT_EQ(primitives(allgather),  // the gets of adjacent blocks merged into one
            "Group_seg_put Group_sync/W Group_sync/R Group_get local_copy");
}

TEST(ShmPlan, Table1DecompositionAboveTheBufferSize) {
  // bcast: the same primitives, one stage per chunk of B.
  const ShmPlan bcast = plan_of(shape(Collective::Bcast, 4, 2500, 0), 3, kSmall);
  EXPECT_EQ(bcast.stages, 3u);
  EXPECT_EQ(primitives(bcast),
            "Group_sync/R Group_get Group_sync/R Group_get Group_sync/R Group_get");
  // scatter and gather: pair-wise, chunk-major over the 3 other ranks, 2 chunks each.
  const ShmPlan scatter_root = plan_of(shape(Collective::Scatter, 4, 2000, 0), 0, kSmall);
  EXPECT_EQ(scatter_root.stages, 6u);
  EXPECT_EQ(primitives(scatter_root),
            "Sender_put Pair_sync/W Sender_put Pair_sync/W Sender_put Pair_sync/W "
            "Sender_put Pair_sync/W Sender_put Pair_sync/W Sender_put Pair_sync/W local_copy");
  EXPECT_EQ(primitives(plan_of(shape(Collective::Scatter, 4, 2000, 0), 2, kSmall)),
            "Pair_sync/R Receiver_get Pair_sync/R Receiver_get");
  EXPECT_EQ(primitives(plan_of(shape(Collective::Gather, 4, 2000, 0), 2, kSmall)),
            "Sender_put Pair_sync/W Sender_put Pair_sync/W");
  // alltoall: 3 rounds of pair-wise exchange, each one stage per sender.
  const ShmPlan alltoall = plan_of(shape(Collective::Alltoall, 4, 100, 0), 1, kSmall);
  EXPECT_EQ(alltoall.stages, 12u);
  EXPECT_EQ(primitives(alltoall),
            "Sender_put Pair_sync/W Pair_sync/R Receiver_get Sender_put Pair_sync/W Pair_sync/R "
            "Receiver_get Sender_put Pair_sync/W Pair_sync/R Receiver_get local_copy");
}

TEST(ShmPlan, SingleCopyExposesOnceAndCopiesDirectly) {
  const auto single = [](Collective c, std::uint64_t size, int root = 0) {
    CallShape call = shape(c, 4, size, root);
    call.single_copy = true;
    return call;
  };
  // The exposing rank waits (a put of nothing) until every reader released the stage. In a
  // bcast every rank exposes its buffer, the root puts the last quarter into each reader and
  // the readers get the rest; then everyone waits for everyone.
  const ShmPlan root = plan_of(single(Collective::Bcast, 1 << 20, 1), 1, kSmall);
  EXPECT_EQ(primitives(root),
            "expose Group_sync/W Group_sync/R direct_put direct_put direct_put Group_seg_put");
  for (int k = 0; k < 3; ++k) {
    const Step& put = root.steps[3 + static_cast<std::size_t>(k)];
    EXPECT_EQ(put.peer, (2 + k) % 4);
    EXPECT_EQ(put.offset, 3u << 18);
    EXPECT_EQ(put.remote, 3u << 18);
    EXPECT_EQ(put.length, 1u << 18);
    EXPECT_EQ(put.release, k == 2);
  }
  const ShmPlan reader = plan_of(single(Collective::Bcast, 1 << 20, 1), 3, kSmall);
  EXPECT_EQ(primitives(reader), "expose Group_sync/W Group_sync/R direct_get Group_seg_put");
  EXPECT_TRUE(reader.steps[0].exposes_recv);
  EXPECT_EQ(reader.steps[3].length, 3u << 18);
  EXPECT_TRUE(reader.steps[3].release);
  // Less than a cache line per rank: the root only exposes.
  EXPECT_EQ(primitives(plan_of(single(Collective::Bcast, 255, 1), 1, kSmall)),
            "expose Group_sync/W Group_seg_put");
  EXPECT_EQ(primitives(plan_of(single(Collective::Bcast, 255, 1), 3, kSmall)),
            "Group_sync/R direct_get");
  // Scatter and gather share too, 3/4 of 1/p of every block (the root also copies its own):
  // 5000 / 16 * 3 = 936, 896 in whole lines.
  const ShmPlan scatter_root = plan_of(single(Collective::Scatter, 5000), 0, kSmall);
  EXPECT_EQ(primitives(scatter_root),
            "expose Group_sync/W Group_sync/R local_copy direct_put direct_put direct_put "
            "Group_seg_put");
  EXPECT_FALSE(scatter_root.steps[0].exposes_recv);
  EXPECT_EQ(scatter_root.steps[4].peer, 1);
  EXPECT_EQ(scatter_root.steps[4].offset, 5000u + 4104u);  // rank 1's block, past its rest
  EXPECT_EQ(scatter_root.steps[4].remote, 4104u);
  EXPECT_EQ(scatter_root.steps[4].length, 896u);
  const ShmPlan gather_root = plan_of(single(Collective::Gather, 5000), 0, kSmall);
  EXPECT_EQ(primitives(gather_root),
            "expose Group_sync/W Group_sync/R local_copy direct_get direct_get direct_get "
            "Group_seg_put");
  EXPECT_TRUE(gather_root.steps[0].exposes_recv);
  EXPECT_EQ(gather_root.steps[6].peer, 3);
  EXPECT_EQ(gather_root.steps[6].remote, 4104u);  // from rank 3's send buffer
  EXPECT_EQ(gather_root.steps[6].offset, 3 * 5000u + 4104u);
  EXPECT_TRUE(gather_root.steps[6].release);
  const ShmPlan gather_other = plan_of(single(Collective::Gather, 5000), 2, kSmall);
  EXPECT_EQ(primitives(gather_other), "expose Group_sync/W Group_sync/R direct_put Group_seg_put");
  EXPECT_FALSE(gather_other.steps[0].exposes_recv);
  EXPECT_EQ(gather_other.steps[3].remote, 2 * 5000u);
  EXPECT_EQ(gather_other.steps[3].length, 4104u);
  // Less than a line to share: only the root exposes.
  EXPECT_EQ(primitives(plan_of(single(Collective::Scatter, 300), 0, kSmall)),
            "expose Group_sync/W local_copy Group_seg_put");
  EXPECT_EQ(primitives(plan_of(single(Collective::Gather, 300), 2, kSmall)),
            "Group_sync/R direct_put");
  EXPECT_EQ(primitives(plan_of(single(Collective::Alltoall, 5000), 1, kSmall)),
            "expose Group_sync/W local_copy Group_sync/R direct_get direct_get direct_get "
            "Group_seg_put");
  const ShmPlan allgather = plan_of(single(Collective::Allgather, 5000), 2, kSmall);
  EXPECT_EQ(allgather.stages, 1u);
  // Rank 2 reads from 3, then 0, then 1; the last get releases the stage.
  ASSERT_EQ(allgather.steps.size(), 8u);
  EXPECT_EQ(allgather.steps[4].peer, 3);
  EXPECT_EQ(allgather.steps[5].peer, 0);
  EXPECT_EQ(allgather.steps[6].peer, 1);
  EXPECT_FALSE(allgather.steps[5].release);
  EXPECT_TRUE(allgather.steps[6].release);
  EXPECT_EQ(allgather.steps[6].offset, 5000u);  // rank 1's block, at 1 * 5000 in recv
}

TEST(ShmPlan, SwitchPointsAreAtTheBufferSize) {
  const Geometry g{1000, 2};
  for (const int p : {2, 3, 4, 7}) {
    const auto b = g.buffer_size;
    const std::uint64_t up = static_cast<std::uint64_t>(p);
    EXPECT_TRUE(fits_one_stage(shape(Collective::Bcast, p, b), g));
    EXPECT_FALSE(fits_one_stage(shape(Collective::Bcast, p, b + 1), g));
    for (const Collective c : {Collective::Scatter, Collective::Gather, Collective::Allgather}) {
      EXPECT_TRUE(fits_one_stage(shape(c, p, b / up), g)) << to_string(c) << " p=" << p;
      EXPECT_FALSE(fits_one_stage(shape(c, p, b / up + 1), g)) << to_string(c) << " p=" << p;
      // Allgather: one stage per rank's row when the ranks fit the buffers (plan_rows).
      const bool rows = c == Collective::Allgather && up <= g.buffers;
      EXPECT_EQ(plan_of(shape(c, p, b / up), 0, g).stages, rows ? up : 1u);
    }
    EXPECT_TRUE(fits_one_stage(shape(Collective::Alltoall, p, b / up / up), g));
    EXPECT_FALSE(fits_one_stage(shape(Collective::Alltoall, p, b / up / up + 1), g));
    // One stage, or one per rank's row when the ranks fit the buffers (plan_alltoall.cpp).
    EXPECT_EQ(plan_of(shape(Collective::Alltoall, p, b / up / up), 0, g).stages,
              up <= g.buffers ? up : 1u);
    EXPECT_EQ(plan_of(shape(Collective::Alltoall, p, b / up / up + 1), 0, g).stages, up * (up - 1));
  }
  // No overflow: p * p * size beyond 64 bits is simply "does not fit".
  EXPECT_FALSE(fits_one_stage(shape(Collective::Alltoall, 4096, std::uint64_t{1} << 50), g));
}

// Puts and gets of a plan that copy bytes at `place`, each within the place's bytes.
int count_copies(const ShmPlan& plan, SharedPlace place) {
  int n = 0;
  for (const Step& step : plan.steps) {
    if ((is_put(step.primitive) || is_get(step.primitive)) && step.length > 0 &&
        step.place == place) {
      if (place == SharedPlace::SlotHeader) {
        EXPECT_LE(step.slot_offset + step.length, kInlineBytes);
      }
      if (place == SharedPlace::FlaggedLines) {
        EXPECT_LE(step.slot_offset + step.length, kFlaggedBytes);
      }
      ++n;
    }
  }
  return n;
}

// A call whose stages touch at most kInlineBytes keeps its bytes in the slot headers: an 8-byte
// bcast, scatter or gather on 2 ranks, an alltoall or allgather whose row fits; the plan cache
// does not move those offsets with the buffer ring.
TEST(ShmPlan, TinyCallsKeepTheirBytesInTheSlotHeader) {
  EXPECT_EQ(kInlineBytes, 16u);
  for (const Collective c : kGroupCollectives) {
    EXPECT_GT(count_copies(plan_of(shape(c, 2, 8, 1), 0, kSmall), SharedPlace::SlotHeader), 0)
        << to_string(c);
    EXPECT_GT(count_copies(plan_of(shape(c, 2, 8, 1), 1, kSmall), SharedPlace::SlotHeader), 0)
        << to_string(c);
  }
  EXPECT_GT(
      count_copies(plan_of(shape(Collective::Bcast, 5, 16, 2), 3, kSmall), SharedPlace::SlotHeader),
      0);
  EXPECT_GT(count_copies(plan_of(shape(Collective::Alltoall, 4, 4, 0), 1, kSmall),
                         SharedPlace::SlotHeader),
            0);
}

// Past the slot header, up to kFlaggedBytes, a stage with one writer keeps its bytes in its
// flagged lines; its syncs cover the bytes: the writer's what it put, the reader's what it gets.
// Stages with several writers (gather on more than 2 ranks) use the data area.
TEST(ShmPlan, SmallStagesWithOneWriterUseFlaggedLines) {
  EXPECT_EQ(kFlaggedBytes, 224u);
  for (const Collective c : kGroupCollectives) {
    for (const int rank : {0, 1}) {
      // bcast: the message; allgather and alltoall rows: a block (2 ranks); scatter, gather: two
      const std::uint64_t fits = c == Collective::Bcast || c == Collective::Allgather ? 224 : 112;
      const ShmPlan plan = plan_of(shape(c, 2, fits, 1), rank, kSmall);
      EXPECT_GT(count_copies(plan, SharedPlace::FlaggedLines), 0) << to_string(c) << " " << rank;
      EXPECT_GT(
          count_copies(plan_of(shape(c, 2, fits + 1, 1), rank, kSmall), SharedPlace::DataArea), 0)
          << to_string(c);
      for (const Step& step : plan.steps) {
        if (!is_sync(step.primitive)) continue;
        EXPECT_EQ(step.place, SharedPlace::FlaggedLines) << to_string(c);
        EXPECT_LE(step.slot_offset + step.length, kFlaggedBytes) << to_string(c);
      }
    }
  }
  // Scatter on 3 ranks, root 1, 50-byte blocks: the root wrote blocks 0 and 2 (bytes 0..150,
  // its own block's place between them), rank 2 reads bytes 100..150.
  const CallShape scatter = shape(Collective::Scatter, 3, 50, 1);
  const auto sync_of = [](const ShmPlan& plan) {
    for (const Step& step : plan.steps) {
      if (is_sync(step.primitive)) return step;
    }
    return Step{};
  };
  const Step writer = sync_of(plan_of(scatter, 1, kSmall));
  EXPECT_EQ(writer.role, SyncRole::Writer);
  EXPECT_EQ(writer.slot_offset, 0u);
  EXPECT_EQ(writer.length, 150u);
  const Step reader = sync_of(plan_of(scatter, 2, kSmall));
  EXPECT_TRUE(waits_for_flags(reader));
  EXPECT_EQ(reader.slot_offset, 100u);
  EXPECT_EQ(reader.length, 50u);
  EXPECT_EQ(count_copies(plan_of(shape(Collective::Gather, 3, 20, 0), 0, kSmall),
                         SharedPlace::FlaggedLines),
            0);
}

TEST(ShmPlan, ZeroBytesAndOneRankUseNoStage) {
  for (const Collective c : kGroupCollectives) {
    EXPECT_EQ(plan_of(shape(c, 5, 0, 2), 2, kSmall).stages, 0u) << to_string(c);
    EXPECT_TRUE(plan_of(shape(c, 5, 0, 2), 2, kSmall).steps.empty()) << to_string(c);
    const ShmPlan alone = plan_of(shape(c, 1, 4000), 0, kSmall);
    EXPECT_EQ(alone.stages, 0u) << to_string(c);
    for (const Step& step : alone.steps) EXPECT_EQ(step.primitive, Primitive::LocalCopy);
  }
}

// Sizes just around every switch point of `p` ranks and buffer size `b`, and a few chunks.
std::vector<std::uint64_t> sizes_around(int p, std::uint64_t b) {
  const auto up = static_cast<std::uint64_t>(p);
  std::vector<std::uint64_t> sizes{0,          1,     7, b / up / up, b / up / up + 1, b / up,
                                   b / up + 1, b - 1, b, b + 1,       3 * b + 5};
  std::erase(sizes, 0u);
  sizes.push_back(0);
  return sizes;
}

class ShmPlanCollective : public ::testing::TestWithParam<Collective> {};

TEST_P(ShmPlanCollective, ExactBytesWithoutDeadlock) {
  const Collective c = GetParam();
  const std::vector<Geometry> geometries{{64, 1}, {100, 2}, {256, 3}, {1000, 8}};
  int runs = 0;
  for (int p = 1; p <= 8; ++p) {
    for (const Geometry& g : geometries) {
      if (c == Collective::Allgather && g.buffer_size < static_cast<std::uint64_t>(p)) continue;
      for (const std::uint64_t size : sizes_around(p, g.buffer_size)) {
        for (const int root : {0, p - 1}) {
          const std::uint32_t seed = static_cast<std::uint32_t>(runs++);
          const std::string problem = run_in_process(p, {{shape(c, p, size, root), g}}, seed);
          ASSERT_EQ(problem, "") << to_string(c) << " p=" << p << " B=" << g.buffer_size
                                 << " D=" << g.buffers << " size=" << size << " root=" << root;
        }
      }
    }
  }
}

// Single copy runs for real here too: the ranks' buffers are in this process, which may read
// its own memory through process_vm_readv.
TEST_P(ShmPlanCollective, SingleCopyExactBytesWithoutDeadlock) {
  const Collective c = GetParam();
  int runs = 0;
  for (int p = 2; p <= 8; ++p) {
    for (const Geometry& g : {Geometry{256, 1}, Geometry{1000, 3}}) {
      for (const std::uint64_t size : {1ull, 777ull, 4096ull, 70001ull}) {
        for (const int root : {0, p / 2, p - 1}) {
          CallShape call = shape(c, p, size, root);
          call.single_copy = true;
          // A Table 1 call before and after: the single-copy stage shares the buffer ring.
          const std::vector<PlannedCall> calls{
              {shape(c, p, 300, root), g}, {call, g}, {shape(c, p, 300, 0), g}};
          const std::string problem = run_in_process(p, calls, static_cast<std::uint32_t>(runs++));
          ASSERT_EQ(problem, "") << to_string(c) << " p=" << p << " B=" << g.buffer_size
                                 << " size=" << size << " root=" << root;
        }
      }
    }
  }
}

// Whatever share of the other blocks the root learns to copy (root_share.hpp), every byte
// arrives once: no share, less than a line, a part, the largest.
TEST(ShmPlan, EveryRootShareDeliversExactBytes) {
  int runs = 0;
  for (const Collective c : {Collective::Bcast, Collective::Scatter, Collective::Gather}) {
    for (const int p : {2, 3, 5, 8}) {
      for (const std::uint64_t size : {777ull, 70001ull}) {
        for (const std::uint16_t share : {0, 1, 200, static_cast<int>(kMaxShare)}) {
          for (const int root : {0, p - 1}) {
            CallShape call = shape(c, p, size, root);
            call.single_copy = true;
            call.root_share = share;
            const std::string problem =
                run_in_process(p, {{call, Geometry{1000, 2}}}, static_cast<std::uint32_t>(runs++));
            ASSERT_EQ(problem, "") << to_string(c) << " p=" << p << " size=" << size
                                   << " share=" << share << " root=" << root;
          }
        }
      }
    }
  }
}

// A buffer is free again once its stage's `readers` released it (endpoint.hpp counts them), so
// every reader of a stage must release it exactly once: a missing release stalls the writers
// that reuse the buffer, a second one frees it while another reader still reads.
TEST_P(ShmPlanCollective, EveryReaderReleasesItsStageOnce) {
  const Collective c = GetParam();
  for (int p = 1; p <= 8; ++p) {
    for (const Geometry& g : {Geometry{64, 1}, Geometry{256, 3}, Geometry{1000, 8}}) {
      if (c == Collective::Allgather && g.buffer_size < static_cast<std::uint64_t>(p)) continue;
      for (const std::uint64_t size : sizes_around(p, g.buffer_size)) {
        for (const bool single_copy : {false, true}) {
          CallShape call = shape(c, p, size, p - 1);
          call.single_copy = single_copy && p > 1 && size > 0 &&
                             static_cast<std::uint64_t>(p) * kExposedBytes <= g.buffer_size;
          std::map<std::uint64_t, std::uint32_t> readers, releases;
          for (int r = 0; r < p; ++r) {
            for (const Step& step : plan_of(call, r, g).steps) {
              if (step.stage.readers > 0) readers[step.stage.index] = step.stage.readers;
              if (step.release) ++releases[step.stage.index];
            }
          }
          EXPECT_EQ(releases, readers)
              << fmt::format("{} p={} B={} D={} size={}{}", to_string(c), p, g.buffer_size,
                             g.buffers, size, call.single_copy ? " single copy" : "");
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, ShmPlanCollective, ::testing::ValuesIn(kGroupCollectives),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(ShmPlan, SequencesOfCallsWithChangingGeometryInRandomInterleavings) {
  // Ranks drift apart by whole calls, buffers are reused across calls, and the geometry changes
  // between calls (the drain must keep a new, overlapping buffer from being overwritten while
  // an old one is read).
  const std::vector<Geometry> geometries{{64, 1}, {64, 5}, {200, 2}, {96, 3}, {1024, 4}};
  std::mt19937 random(12345);
  for (std::uint32_t run = 0; run < 200; ++run) {
    const int p = 2 + static_cast<int>(random() % 5);
    std::vector<PlannedCall> calls;
    for (int i = 0; i < 12; ++i) {
      PlannedCall call;
      const auto kind = random() % 6;
      if (kind < 5) call.shape.collective = kGroupCollectives[kind];
      call.shape.local_size = p;
      call.shape.root = static_cast<int>(random() % static_cast<unsigned>(p));
      const auto size_kind = random() % 4;  // 0 bytes, tiny (slot headers), or any
      call.shape.size = size_kind == 0 ? 0 : size_kind == 1 ? 1 + random() % 16 : random() % 700;
      call.geometry = geometries[random() % geometries.size()];
      calls.push_back(call);
    }
    const std::string problem = run_in_process(p, calls, run);
    ASSERT_EQ(problem, "") << "run " << run << ", " << p << " ranks";
  }
}

// As `multilane tune shm` measures: every call in a geometry other than the last one's. A new
// epoch's first plan starts with zero-length puts that wait for the old buffers, numbered
// old stage + old buffers; that number may be a stage of the call itself, and a put of the
// call at offset 0 must not be merged into such a wait (it was: rank 1's row of an 8-byte
// allgather went to the old buffer instead of its slot header, and rank 0 read the last
// call's bytes).
TEST(ShmPlan, APutIsNeverMergedIntoAWaitForTheLastEpoch) {
  const Geometry tuned{4096, 2}, standard{32768, 16};
  CallShape barrier;
  barrier.local_size = 2;
  std::vector<PlannedCall> calls;
  for (int i = 0; i < 4; ++i) {
    calls.push_back({shape(Collective::Bcast, 2, 1024), tuned});
    calls.push_back({shape(Collective::Allgather, 2, 8), standard});
    calls.push_back({shape(Collective::Alltoall, 2, 8), tuned});
    calls.push_back({barrier, standard});
  }
  for (std::uint32_t seed = 0; seed < 20; ++seed) {
    ASSERT_EQ(run_in_process(2, calls, seed), "") << "seed " << seed;
  }
}

TEST(ShmPlan, ManyPipelineBuffersAndFewAgree) {
  // Alltoall switches its order at p buffers; both sides of the switch, many interleavings.
  for (std::uint32_t buffers = 1; buffers <= 9; ++buffers) {
    for (std::uint32_t seed = 0; seed < 20; ++seed) {
      const std::string problem =
          run_in_process(6, {{shape(Collective::Alltoall, 6, 300), Geometry{128, buffers}}}, seed);
      ASSERT_EQ(problem, "") << buffers << " buffers, seed " << seed;
    }
  }
}

}  // namespace
}  // namespace multilane::runtime::shm
