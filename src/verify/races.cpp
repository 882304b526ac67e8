#include "verify/races.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "verify/access.hpp"
#include "verify/interval_map.hpp"
#include "verify/reachability.hpp"

namespace multilane::verify {

namespace {

// Who last wrote a run of bytes, and who read it since (a shared, immutable reader list).
struct Access {
  OpIndex writer = kNoOp;     // kNoOp: the bytes hold what they held before the call
  std::uint32_t readers = 0;  // head of a list in RankRaceChecker::reader_nodes_, 0 = none
  friend bool operator==(const Access&, const Access&) = default;
};

struct AccessTraits {
  static Access shifted(const Access& a, std::uint64_t) { return a; }
  static bool continues(const Access& left, std::uint64_t, const Access& right) {
    return left == right;
  }
};

enum class Hazard { ReadAfterWrite, WriteAfterWrite, WriteAfterRead };

struct Conflict {
  Hazard hazard;
  Buffer buffer;
  OpIndex other;
  std::uint64_t begin;
  std::uint64_t end;
};

class RankRaceChecker {
 public:
  RankRaceChecker(const Schedule& s, int rank, ErrorSink& sink)
      : s_(s), rank_(rank), program_(s.program(rank)), reach_(s, rank), sink_(sink) {
    reader_nodes_.push_back({kNoOp, 0});  // index 0 is the empty list
    ordered_stamp_.assign(program_.size(), kNoOp);
    ordered_result_.assign(program_.size(), false);
    create_maps_of_written_buffers();
  }

  void run() {
    if (cannot_race()) return;
    for (OpIndex i = 0; i < program_.size() && !sink_.full(); ++i) {
      conflicts_.clear();
      const Op& op = program_[i];
      if (const auto r = read_range(op)) on_read(i, *r);
      if (const auto c = combined_range(op)) on_read(i, *c);
      if (const auto w = written_range(op)) on_write(i, *w);
      report(i, op);
    }
  }

 private:
  using AccessMap = IntervalMap<Access, AccessTraits>;
  struct ReaderNode {
    OpIndex op;
    std::uint32_t next;
  };

  // A rank that never reads a buffer it writes, and never writes a byte twice, has nothing
  // to order (leaves of trees, alltoall and gather ranks are mostly like this): checked by
  // sorting its writes, much cheaper than walking the access maps.
  bool cannot_race() const {
    std::vector<Range> writes;
    for (const Op& op : program_) {
      if (const auto r = read_range(op); r && maps_[buffer_index(r->buffer)]) return false;
      if (combined_range(op)) return false;
      if (const auto w = written_range(op)) writes.push_back(*w);
    }
    std::sort(writes.begin(), writes.end(), [](const Range& a, const Range& b) {
      return a.buffer != b.buffer ? a.buffer < b.buffer : a.offset < b.offset;
    });
    for (std::size_t k = 1; k < writes.size(); ++k) {
      const Range& before = writes[k - 1];
      if (before.buffer == writes[k].buffer && before.end() > writes[k].offset) return false;
    }
    return true;
  }

  // Bytes nobody writes cannot race: only buffers the rank writes are tracked.
  void create_maps_of_written_buffers() {
    for (const Op& op : program_) {
      const auto w = written_range(op);
      if (!w) continue;
      auto& map = maps_[buffer_index(w->buffer)];
      if (!map) map.emplace(buffer_bytes(s_, rank_, w->buffer), Access{});
    }
  }

  // Whether `later` depends on `earlier`, remembered for the duration of one operation.
  bool ordered(OpIndex earlier, OpIndex later) {
    if (ordered_stamp_[earlier] != later) {
      ordered_stamp_[earlier] = later;
      ordered_result_[earlier] = reach_.precedes(earlier, later);
    }
    return ordered_result_[earlier];
  }

  void on_read(OpIndex i, const Range& range) {
    auto& map = maps_[buffer_index(range.buffer)];
    if (!map) return;
    // Consecutive runs usually share one reader list: extend it once, keep them mergeable.
    std::uint32_t last_old = kNone32;
    std::uint32_t last_new = 0;
    map->update(range.offset, range.end(), [&](std::uint64_t b, std::uint64_t e, Access& a) {
      if (a.writer != kNoOp && !ordered(a.writer, i)) {
        add_conflict(Hazard::ReadAfterWrite, range.buffer, a.writer, b, e);
      }
      if (a.readers != last_old) {
        last_old = a.readers;
        last_new = static_cast<std::uint32_t>(reader_nodes_.size());
        reader_nodes_.push_back({i, a.readers});
      }
      a.readers = last_new;
    });
  }

  void on_write(OpIndex i, const Range& range) {
    auto& map = maps_[buffer_index(range.buffer)];
    map->update(range.offset, range.end(), [&](std::uint64_t b, std::uint64_t e, Access& a) {
      if (a.writer != kNoOp && !ordered(a.writer, i)) {
        add_conflict(Hazard::WriteAfterWrite, range.buffer, a.writer, b, e);
      }
      for (std::uint32_t n = a.readers; n != 0; n = reader_nodes_[n].next) {
        const OpIndex reader = reader_nodes_[n].op;
        if (reader != i && !ordered(reader, i))
          add_conflict(Hazard::WriteAfterRead, range.buffer, reader, b, e);
      }
      a = Access{i, 0};
    });
  }

  void add_conflict(Hazard hazard, Buffer buffer, OpIndex other, std::uint64_t b, std::uint64_t e) {
    for (Conflict& c : conflicts_) {
      if (c.hazard == hazard && c.buffer == buffer && c.other == other && c.end == b) {
        c.end = e;
        return;
      }
    }
    conflicts_.push_back({hazard, buffer, other, b, e});
  }

  void report(OpIndex i, const Op& op) {
    for (const Conflict& c : conflicts_) {
      const std::string what = describe_range(c.buffer, c.begin, c.end);
      const std::string other = describe_local_op(c.other, program_[c.other]);
      const std::string self = describe_op(rank_, i, op);
      switch (c.hazard) {
        case Hazard::ReadAfterWrite:
          sink_.add(fmt::format("{} reads {} written by {} but does not depend on it", self, what,
                                other));
          break;
        case Hazard::WriteAfterWrite:
          sink_.add(fmt::format("{} writes {} also written by {} but does not depend on it", self,
                                what, other));
          break;
        case Hazard::WriteAfterRead:
          sink_.add(
              fmt::format("{} writes {} read by {} but does not depend on it", self, what, other));
          break;
      }
    }
  }

  static constexpr std::uint32_t kNone32 = 0xffffffffu;

  const Schedule& s_;
  int rank_;
  std::span<const Op> program_;
  Reachability reach_;
  ErrorSink& sink_;
  std::array<std::optional<AccessMap>, kNumBuffers> maps_;
  std::vector<ReaderNode> reader_nodes_;
  std::vector<OpIndex> ordered_stamp_;
  std::vector<bool> ordered_result_;
  std::vector<Conflict> conflicts_;
};

}  // namespace

void check_races(const Schedule& schedule, ErrorSink& sink) {
  for (int r = 0; r < schedule.num_ranks() && !sink.full(); ++r) {
    RankRaceChecker(schedule, r, sink).run();
  }
}

}  // namespace multilane::verify
