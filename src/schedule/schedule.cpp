#include "multilane/schedule.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace multilane {

namespace {
constexpr std::array<std::string_view, 15> kCollectiveNames = {
    "bcast",   "scatter",   "gather",         "allgather", "alltoall",
    "reduce",  "allreduce", "reduce-scatter", "scan",      "exscan",
    "gatherv", "scatterv",  "allgatherv",     "alltoallv", "reduce-scatterv"};

// Each v-form and its even collective.
constexpr std::array<std::pair<Collective, Collective>, 5> kUnevenForms = {{
    {Collective::Gatherv, Collective::Gather},
    {Collective::Scatterv, Collective::Scatter},
    {Collective::Allgatherv, Collective::Allgather},
    {Collective::Alltoallv, Collective::Alltoall},
    {Collective::ReduceScatterv, Collective::ReduceScatter},
}};
}  // namespace

Collective even_form(Collective c) {
  for (const auto& [uneven, even] : kUnevenForms) {
    if (uneven == c) return even;
  }
  return c;
}

Collective uneven_form(Collective c) {
  for (const auto& [uneven, even] : kUnevenForms) {
    if (even == c) return uneven;
  }
  return c;
}

std::string_view to_string(Collective c) {
  return kCollectiveNames[static_cast<int>(c)];
}

std::optional<Collective> parse_collective(std::string_view name) {
  for (std::size_t i = 0; i < kCollectiveNames.size(); ++i) {
    if (kCollectiveNames[i] == name) return static_cast<Collective>(i);
  }
  return std::nullopt;
}

std::string collective_names() {
  std::string out;
  for (std::size_t i = 0; i < kCollectiveNames.size(); ++i) {
    if (i > 0) out += i + 1 == kCollectiveNames.size() ? " or " : ", ";
    out += kCollectiveNames[i];
  }
  return out;
}

std::string_view to_string(Buffer b) {
  switch (b) {
    case Buffer::Send:
      return "send";
    case Buffer::Recv:
      return "recv";
    case Buffer::Scratch:
      return "scratch";
  }
  return "?";
}

std::string_view to_string(OpKind k) {
  switch (k) {
    case OpKind::Send:
      return "send";
    case OpKind::Recv:
      return "recv";
    case OpKind::Copy:
      return "copy";
    case OpKind::GroupBcast:
      return "group-bcast";
    case OpKind::GroupScatter:
      return "group-scatter";
    case OpKind::GroupGather:
      return "group-gather";
    case OpKind::GroupAllgather:
      return "group-allgather";
    case OpKind::GroupAlltoall:
      return "group-alltoall";
    case OpKind::RecvReduce:
      return "recv-reduce";
    case OpKind::Reduce:
      return "reduce";
  }
  return "?";
}

Collective group_collective(OpKind group_kind) {
  return static_cast<Collective>(static_cast<int>(group_kind) -
                                 static_cast<int>(OpKind::GroupBcast));
}

OpKind group_op_kind(Collective collective) {
  return static_cast<OpKind>(static_cast<int>(OpKind::GroupBcast) + static_cast<int>(collective));
}

ScheduleBuilder::ScheduleBuilder(Collective collective, std::string algorithm, int num_ranks,
                                 int root, std::uint64_t size, std::uint64_t segment) {
  schedule_.collective = collective;
  schedule_.algorithm = std::move(algorithm);
  schedule_.root = root;
  schedule_.size = size;
  schedule_.segment = segment;
  schedule_.rank_begin.assign(static_cast<std::size_t>(num_ranks) + 1, 0);
  schedule_.scratch_bytes.assign(num_ranks, 0);
}

void ScheduleBuilder::start_rank(int rank) {
  if (rank <= current_ || rank >= schedule_.num_ranks()) {
    throw std::logic_error(fmt::format("ScheduleBuilder: rank {} started out of order", rank));
  }
  // Ranks skipped in between get empty programs.
  for (int r = current_ + 1; r <= rank; ++r) {
    schedule_.rank_begin[r] = static_cast<std::uint32_t>(schedule_.ops.size());
  }
  current_ = rank;
}

OpIndex ScheduleBuilder::append(Op op, std::span<const OpIndex> deps) {
  if (current_ < 0) throw std::logic_error("ScheduleBuilder: no rank started");
  const auto first = schedule_.rank_begin[current_];
  const auto index = static_cast<OpIndex>(schedule_.ops.size() - first);
  op.deps_begin = static_cast<std::uint32_t>(schedule_.deps.size());
  for (OpIndex d : deps) {
    const auto listed = schedule_.deps.begin() + op.deps_begin;
    if (d == kNoOp || std::find(listed, schedule_.deps.end(), d) != schedule_.deps.end()) continue;
    if (d >= index) {
      throw std::logic_error(
          fmt::format("ScheduleBuilder: rank {} op {} depends on later op {}", current_, index, d));
    }
    schedule_.deps.push_back(d);
  }
  op.deps_count = static_cast<std::uint32_t>(schedule_.deps.size() - op.deps_begin);
  schedule_.ops.push_back(op);
  return index;
}

OpIndex ScheduleBuilder::transfer(OpKind kind, int peer, Range range, int lane,
                                  std::span<const OpIndex> deps) {
  if (range.length == 0) return kNoOp;
  Op op;
  op.kind = kind;
  op.peer = peer;
  op.lane = static_cast<std::int8_t>(lane);
  op.range = range;
  return append(op, deps);
}

OpIndex ScheduleBuilder::local(OpKind kind, Range to, Range from, std::span<const OpIndex> deps) {
  if (to.length == 0) return kNoOp;
  Op op;
  op.kind = kind;
  op.range = to;
  op.source = from;
  return append(op, deps);
}

OpIndex ScheduleBuilder::send(int peer, Range range, int lane, std::span<const OpIndex> deps) {
  return transfer(OpKind::Send, peer, range, lane, deps);
}

OpIndex ScheduleBuilder::recv(int peer, Range range, int lane, std::span<const OpIndex> deps) {
  return transfer(OpKind::Recv, peer, range, lane, deps);
}

OpIndex ScheduleBuilder::recv_reduce(int peer, Range range, int lane,
                                     std::span<const OpIndex> deps) {
  return transfer(OpKind::RecvReduce, peer, range, lane, deps);
}

OpIndex ScheduleBuilder::copy(Range to, Range from, std::span<const OpIndex> deps) {
  return local(OpKind::Copy, to, from, deps);
}

OpIndex ScheduleBuilder::reduce(Range to, Range from, std::span<const OpIndex> deps) {
  return local(OpKind::Reduce, to, from, deps);
}

OpIndex ScheduleBuilder::group(OpKind kind, int group_root, Range to, Range from,
                               std::span<const OpIndex> deps) {
  if (!is_group_op(kind)) throw std::logic_error("ScheduleBuilder::group: not a group kind");
  Op op;
  op.kind = kind;
  op.peer = group_root;
  op.range = to;
  op.source = from;
  return append(op, deps);
}

void ScheduleBuilder::need_scratch(std::uint64_t bytes) {
  auto& s = schedule_.scratch_bytes.at(current_);
  s = std::max(s, bytes);
}

Schedule ScheduleBuilder::finish() {
  for (int r = current_ + 1; r <= schedule_.num_ranks(); ++r) {
    schedule_.rank_begin[r] = static_cast<std::uint32_t>(schedule_.ops.size());
  }
  schedule_.rank_begin[schedule_.num_ranks()] = static_cast<std::uint32_t>(schedule_.ops.size());
  current_ = schedule_.num_ranks();
  return std::move(schedule_);
}

namespace {
Buffer swap_user_buffers(Buffer b) {
  if (b == Buffer::Send) return Buffer::Recv;
  if (b == Buffer::Recv) return Buffer::Send;
  return b;
}
}  // namespace

Schedule reverse_schedule(const Schedule& s, Collective reversed_collective,
                          std::string algorithm) {
  Schedule out;
  out.collective = reversed_collective;
  out.algorithm = std::move(algorithm);
  out.root = s.root;
  out.size = s.size;
  out.segment = s.segment;
  out.element_size = s.element_size;
  out.counts = s.counts;  // block i is rank i's both ways
  out.scratch_bytes = s.scratch_bytes;
  out.rank_begin = s.rank_begin;
  out.ops.reserve(s.ops.size());
  out.deps.reserve(s.deps.size());
  for (const Op& op : s.ops) {
    if (is_combining(op.kind)) {
      throw std::logic_error("reverse_schedule: a schedule that reduces has no reverse");
    }
  }
  for (int r = 0; r < s.num_ranks(); ++r) {
    const auto prog = s.program(r);
    const auto n = static_cast<OpIndex>(prog.size());
    // Invert the dependency relation: old y depends on x  =>  new (n-1-x) depends on (n-1-y).
    std::vector<std::vector<OpIndex>> reversed_deps(n);
    for (OpIndex y = 0; y < n; ++y) {
      for (OpIndex x : s.deps_of(prog[y])) reversed_deps[n - 1 - x].push_back(n - 1 - y);
    }
    for (OpIndex i = 0; i < n; ++i) {
      Op op = prog[n - 1 - i];
      if (op.kind == OpKind::Send) {
        op.kind = OpKind::Recv;
      } else if (op.kind == OpKind::Recv) {
        op.kind = OpKind::Send;
      } else {
        std::swap(op.range, op.source);
        if (op.kind == OpKind::GroupScatter) {
          op.kind = OpKind::GroupGather;
        } else if (op.kind == OpKind::GroupGather) {
          op.kind = OpKind::GroupScatter;
        }
      }
      op.range.buffer = swap_user_buffers(op.range.buffer);
      op.source.buffer = swap_user_buffers(op.source.buffer);
      auto& d = reversed_deps[i];
      std::sort(d.begin(), d.end());
      op.deps_begin = static_cast<std::uint32_t>(out.deps.size());
      op.deps_count = static_cast<std::uint32_t>(d.size());
      out.deps.insert(out.deps.end(), d.begin(), d.end());
      out.ops.push_back(op);
    }
  }
  return out;
}

namespace {
std::string range_text(const Range& r) {
  return fmt::format("{}[{},{})", to_string(r.buffer), r.offset, r.end());
}

std::string op_text(const Schedule& s, const Op& op) {
  std::string text;
  switch (op.kind) {
    case OpKind::Send:
      text = fmt::format("send {} -> rank {}", range_text(op.range), op.peer);
      break;
    case OpKind::Recv:
      text = fmt::format("recv {} <- rank {}", range_text(op.range), op.peer);
      break;
    case OpKind::Copy:
      text = fmt::format("copy {} <- {}", range_text(op.range), range_text(op.source));
      break;
    case OpKind::RecvReduce:
      text = fmt::format("recv-reduce {} <- rank {}", range_text(op.range), op.peer);
      break;
    case OpKind::Reduce:
      text = fmt::format("reduce {} <- {}", range_text(op.range), range_text(op.source));
      break;
    case OpKind::GroupBcast:
    case OpKind::GroupScatter:
    case OpKind::GroupGather:
    case OpKind::GroupAllgather:
    case OpKind::GroupAlltoall:
      text = fmt::format("{} {} <- {} root rank {}", to_string(op.kind), range_text(op.range),
                         range_text(op.source), op.peer);
      break;
  }
  if (is_transfer(op.kind) && op.lane != kAnyLane) text += fmt::format(" lane {}", op.lane);
  if (op.deps_count > 0) {
    text += " after";
    for (OpIndex d : s.deps_of(op)) text += fmt::format(" #{}", d);
  }
  return text;
}
}  // namespace

std::string schedule_to_text(const Schedule& s, int max_ranks) {
  std::string out =
      fmt::format("{} {} root={} size={} segment={} ranks={} ops={}", to_string(s.collective),
                  s.algorithm, s.root, s.size, s.segment, s.num_ranks(), s.num_ops());
  if (is_reduction(s.collective)) out += fmt::format(" element={}", s.element_size);
  if (!s.counts.empty()) out += fmt::format(" counts={}", fmt::join(s.counts, ","));
  out += "\n";
  const int shown = max_ranks < 0 ? s.num_ranks() : std::min(max_ranks, s.num_ranks());
  for (int r = 0; r < shown; ++r) {
    const auto prog = s.program(r);
    out += fmt::format("rank {} ({} ops, scratch {}):\n", r, prog.size(), s.scratch_bytes[r]);
    for (std::size_t i = 0; i < prog.size(); ++i) {
      out += fmt::format("  #{} {}\n", i, op_text(s, prog[i]));
    }
  }
  if (shown < s.num_ranks()) out += fmt::format("... {} more ranks\n", s.num_ranks() - shown);
  return out;
}

std::string schedule_to_json(const Schedule& s, int indent) {
  using nlohmann::json;
  auto range_json = [](const Range& r) {
    return json{{"buffer", to_string(r.buffer)}, {"offset", r.offset}, {"length", r.length}};
  };
  json ranks = json::array();
  for (int r = 0; r < s.num_ranks(); ++r) {
    json ops = json::array();
    for (const Op& op : s.program(r)) {
      json j{{"op", to_string(op.kind)}, {"range", range_json(op.range)}};
      if (op.kind == OpKind::Copy || op.kind == OpKind::Reduce) {
        j["source"] = range_json(op.source);
      } else if (is_group_op(op.kind)) {
        j["source"] = range_json(op.source);
        j["root"] = op.peer;
      } else {
        j["peer"] = op.peer;
        j["lane"] = op.lane;
      }
      auto deps = s.deps_of(op);
      j["after"] = std::vector<OpIndex>(deps.begin(), deps.end());
      ops.push_back(std::move(j));
    }
    ranks.push_back({{"rank", r}, {"scratch", s.scratch_bytes[r]}, {"ops", std::move(ops)}});
  }
  json doc{{"collective", to_string(s.collective)},
           {"algorithm", s.algorithm},
           {"root", s.root},
           {"size", s.size},
           {"segment", s.segment},
           {"element_size", s.element_size},
           {"ranks", std::move(ranks)}};
  if (!s.counts.empty()) doc["counts"] = s.counts;
  return doc.dump(indent);
}

}  // namespace multilane
