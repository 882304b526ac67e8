// Chrome trace-event JSON of a simulation (see sim.hpp): process = rank, thread = lane track.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "multilane/sim.hpp"

namespace multilane {

namespace {

int track_of(int lane) {
  if (lane == kTraceStriped) return 100;
  if (lane == kTraceMemory) return 101;
  return lane;
}

std::string track_name(int lane) {
  if (lane == kTraceStriped) return "striped (all lanes)";
  if (lane == kTraceMemory) return "memory";
  return fmt::format("lane {}", lane);
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

}  // namespace

std::string trace_to_json(const SimResult& result, const Platform& platform,
                          const std::string& title) {
  std::string out = fmt::format(
      "{{\"displayTimeUnit\":\"ms\",\"otherData\":{{\"title\":\"{}\"}},"
      "\"traceEvents\":[\n",
      escape(title));
  bool first = true;
  auto emit = [&](const std::string& event) {
    if (!first) out += ",\n";
    first = false;
    out += event;
  };
  std::set<std::pair<int, int>> tracks;
  for (const auto& s : result.trace) tracks.emplace(s.rank, s.lane);
  int last_rank = -1;
  for (const auto& [rank, lane] : tracks) {
    if (rank != last_rank) {
      const auto& node = platform.nodes.at(platform.node_of(rank));
      emit(fmt::format(
          R"j({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"rank {} ({})"}}}})j", rank,
          rank, escape(node.name)));
      emit(fmt::format(
          R"j({{"name":"process_sort_index","ph":"M","pid":{},"args":{{"sort_index":{}}}}})j", rank,
          rank));
      last_rank = rank;
    }
    emit(fmt::format(
        R"j({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"{}"}}}})j", rank,
        track_of(lane), track_name(lane)));
  }
  for (const auto& s : result.trace) {
    const bool copy = s.peer == s.rank && s.lane == kTraceMemory;
    const std::string name =
        copy ? fmt::format("copy {} B", s.bytes) : fmt::format("to {} ({} B)", s.peer, s.bytes);
    emit(fmt::format(
        R"j({{"name":"{}","cat":"{}","ph":"X","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},)j"
        R"j("args":{{"peer":{},"bytes":{},"left_us":{:.3f}}}}})j",
        name, copy ? "copy" : "transfer", s.rank, track_of(s.lane), s.start_s * 1e6,
        std::max(0.0, s.arrive_s - s.start_s) * 1e6, s.peer, s.bytes, s.left_s * 1e6));
  }
  out += "\n]}\n";
  return out;
}

}  // namespace multilane
