#include "simgrid_replay.hpp"

#include <fmt/format.h>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <sstream>
#include <stdexcept>

#include "multilane/errors.hpp"
#include "simgrid_platform.hpp"
#include "simgrid_transfers.hpp"

namespace multilane::simgrid_peer {

namespace sg4 = simgrid::s4u;

std::string_view to_string(LatencyMode mode) {
  return mode == LatencyMode::Overlapped ? "overlapped" : "per-message";
}

namespace {

constexpr int kMaxStripe = 8;  // lanes a kAnyLane transfer is cut over, as in multilane's simulator

// What a SimGrid activity stands for, kept in its user data: a data comm (one stripe) of a
// transfer, the zero-byte comm that carries a transfer's latency (Overlapped), or a copy's exec.
enum class Role : std::uintptr_t { Data = 0, Latency = 1, Copy = 2 };

void* tag(Role role, std::uint32_t index) {
  return reinterpret_cast<void*>((std::uintptr_t(index) << 2) | std::uintptr_t(role));
}

// Replays one schedule: counts every transfer's and copy's unmet dependencies and starts its
// SimGrid activities when the count reaches zero. A "waiter" is a transfer (ids 0..T-1) or a
// copy (id T + its position in copies_).
class Replay {
 public:
  Replay(const Schedule& schedule, const Platform& platform, const SimGridPlatform& sg,
         LatencyMode mode)
      : s_(schedule), platform_(platform), sg_(sg), mode_(mode), t_(match_transfers(schedule)) {
    choose_lanes();
    collect_copies();
    count_dependencies();
  }

  // Starts everything that waits for nothing; the rest starts from on_completion().
  void start() {
    for (std::uint32_t w = 0; w < waiting_.size(); ++w) {
      if (waiting_[w] == 0) start_waiter(w);
    }
  }

  // SimGrid's completion callback, for every activity this replay started.
  void on_completion(const sg4::Activity& activity) {
    if (activity.get_state() != sg4::Activity::State::FINISHED) return;  // stays incomplete
    const auto data = reinterpret_cast<std::uintptr_t>(activity.get_data<void>());
    const auto index = static_cast<std::uint32_t>(data >> 2);
    switch (static_cast<Role>(data & 3)) {
      case Role::Data:
        if (--stripes_left_[index] == 0) transfer_left(index);
        break;
      case Role::Latency:
        complete(t_.recv_op[index]);
        break;
      case Role::Copy:
        complete(index);
        break;
    }
  }

  std::uint64_t comms() const { return comms_; }
  std::uint64_t execs() const { return execs_; }

  // Completion time of every rank; throws naming the first operation that never completed.
  std::vector<double> rank_finish() const {
    std::vector<double> finish(static_cast<std::size_t>(s_.num_ranks()), 0.0);
    for (std::uint32_t g = 0; g < s_.ops.size(); ++g) {
      if (done_at_[g] < 0) throw_stuck(g);
      double& f = finish[static_cast<std::size_t>(t_.rank_of_op[g])];
      f = std::max(f, done_at_[g]);
    }
    return finish;
  }

 private:
  // The lanes of every transfer, checked against the nodes and the WAN links before anything
  // runs: [first_lane_, first_lane_ + lanes_).
  void choose_lanes() {
    first_lane_.resize(t_.size());
    lanes_.resize(t_.size());
    stripes_left_.resize(t_.size());
    for (std::uint32_t t = 0; t < t_.size(); ++t) {
      const Op& send = s_.ops[t_.send_op[t]];
      const int from = t_.rank_of_op[t_.send_op[t]];
      const int to = send.peer;
      const int na = platform_.node_of(from);
      const int nb = platform_.node_of(to);
      if (na == nb) {
        throw UsageError(fmt::format(
            "ranks {} and {} share node {}: the SimGrid peer does not model shared memory (use a "
            "platform with one rank per node)",
            from, to, platform_.nodes[na].name));
      }
      const int sa = platform_.nodes[na].site;
      const int sb = platform_.nodes[nb].site;
      if (!sg_.sites_connected(sa, sb)) {
        throw UsageError(
            fmt::format("no WAN link between sites '{}' and '{}' (rank {} sends to rank {})",
                        platform_.sites[sa].name, platform_.sites[sb].name, from, to));
      }
      const int la = platform_.lanes_of(from);
      const int lb = platform_.lanes_of(to);
      int first = send.lane;
      int count = 1;
      if (send.lane == kAnyLane) {
        first = 0;
        count = std::min({la, lb, kMaxStripe});
      } else if (send.lane < 0 || send.lane >= la || send.lane >= lb) {
        throw UsageError(fmt::format(
            "rank {} (node {}, {} lanes) sends to rank {} (node {}, {} lanes) on lane {}, which "
            "one of them does not have",
            from, platform_.nodes[na].name, la, to, platform_.nodes[nb].name, lb, int(send.lane)));
      }
      // Never an empty stripe: a zero-byte comm is what carries latency alone.
      count = static_cast<int>(std::min<std::uint64_t>(std::uint64_t(count), send.range.length));
      first_lane_[t] = static_cast<std::int8_t>(first);
      lanes_[t] = static_cast<std::uint8_t>(count);
    }
  }

  void collect_copies() {
    for (std::uint32_t g = 0; g < s_.ops.size(); ++g) {
      if (s_.ops[g].kind == OpKind::Copy) copies_.push_back(g);
    }
  }

  // Reverse dependency edges op -> waiter in compressed rows, and every waiter's count: a
  // transfer waits for its Send's and its Recv's dependencies and for the previous transfer of
  // its pair (to have left its sender, or, PerMessage, to have arrived: the Send then completes
  // on arrival); a copy waits for its own dependencies.
  void count_dependencies() {
    const auto transfers = static_cast<std::uint32_t>(t_.size());
    waiting_.assign(transfers + copies_.size(), 0);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  // (op, waiter)
    auto wait_for_deps = [&](std::uint32_t g, std::uint32_t w) {
      const int rank = t_.rank_of_op[g];
      for (OpIndex d : s_.deps_of(s_.ops[g])) edges.emplace_back(s_.rank_begin[rank] + d, w);
    };
    for (std::uint32_t t = 0; t < transfers; ++t) {
      wait_for_deps(t_.send_op[t], t);
      wait_for_deps(t_.recv_op[t], t);
      if (t_.previous[t] != kNoTransfer) edges.emplace_back(t_.send_op[t_.previous[t]], t);
    }
    for (std::uint32_t c = 0; c < copies_.size(); ++c) wait_for_deps(copies_[c], transfers + c);
    edge_begin_.assign(s_.ops.size() + 1, 0);
    for (const auto& [op, w] : edges) {
      ++edge_begin_[op + 1];
      ++waiting_[w];
    }
    for (std::size_t g = 0; g < s_.ops.size(); ++g) edge_begin_[g + 1] += edge_begin_[g];
    dependents_.resize(edges.size());
    std::vector<std::uint32_t> fill(edge_begin_.begin(), edge_begin_.end() - 1);
    for (const auto& [op, w] : edges) dependents_[fill[op]++] = w;
    done_at_.assign(s_.ops.size(), -1.0);
  }

  void start_waiter(std::uint32_t w) {
    if (w < t_.size()) {
      start_transfer(w);
    } else {
      start_copy(copies_[w - t_.size()]);
    }
  }

  sg4::Host* lane_host(int rank, int lane) const {
    return sg_.lane_host(platform_.node_of(rank), lane);
  }

  void start_transfer(std::uint32_t t) {
    const Op& send = s_.ops[t_.send_op[t]];
    const int from = t_.rank_of_op[t_.send_op[t]];
    const std::uint64_t bytes = send.range.length;
    const int stripes = lanes_[t];
    stripes_left_[t] = static_cast<std::uint8_t>(stripes);
    if (stripes == 0) {  // an empty message has left as soon as it may start
      transfer_left(t);
      return;
    }
    for (int i = 0; i < stripes; ++i) {
      const std::uint64_t share = bytes / stripes + (std::uint64_t(i) < bytes % stripes ? 1 : 0);
      const int lane = first_lane_[t] + i;
      start_comm(lane_host(from, lane), lane_host(send.peer, lane), share, tag(Role::Data, t));
    }
  }

  // The transfer's bytes have left the sender: its Send completes, and its Recv too
  // (PerMessage, where leaving is arriving) or one route latency later (Overlapped).
  void transfer_left(std::uint32_t t) {
    complete(t_.send_op[t]);
    if (mode_ == LatencyMode::PerMessage) {
      complete(t_.recv_op[t]);
      return;
    }
    const int from = t_.rank_of_op[t_.send_op[t]];
    const int to = s_.ops[t_.send_op[t]].peer;
    start_comm(lane_host(from, first_lane_[t]), lane_host(to, first_lane_[t]), 0,
               tag(Role::Latency, t));
  }

  void start_comm(sg4::Host* from, sg4::Host* to, std::uint64_t bytes, void* data) {
    sg4::CommPtr comm = sg4::Comm::sendto_init(from, to)->set_payload_size(bytes);
    comm->set_data(data);
    comm->start();
    keep_.push_back(std::move(comm));
    ++comms_;
  }

  void start_copy(std::uint32_t g) {
    const Op& op = s_.ops[g];
    sg4::ExecPtr exec = sg4::Exec::init()
                            ->set_flops_amount(double(op.range.length))
                            ->set_host(sg_.memory_host(platform_.node_of(t_.rank_of_op[g])));
    exec->set_data(tag(Role::Copy, g));
    exec->start();
    keep_.push_back(std::move(exec));
    ++execs_;
  }

  void complete(std::uint32_t g) {
    done_at_[g] = sg4::Engine::get_clock();
    for (std::uint32_t e = edge_begin_[g]; e < edge_begin_[g + 1]; ++e) {
      if (--waiting_[dependents_[e]] == 0) start_waiter(dependents_[e]);
    }
  }

  [[noreturn]] void throw_stuck(std::uint32_t g) const {
    const int rank = t_.rank_of_op[g];
    const Op& op = s_.ops[g];
    std::string what(to_string(op.kind));
    if (op.kind != OpKind::Copy) {
      what += fmt::format(" {} rank {}", op.kind == OpKind::Send ? "to" : "from", op.peer);
    }
    throw std::runtime_error(fmt::format("SimGrid replay stuck: rank {} op {} ({}) never completed",
                                         rank, g - s_.rank_begin[rank], what));
  }

  const Schedule& s_;
  const Platform& platform_;
  const SimGridPlatform& sg_;
  LatencyMode mode_;
  Transfers t_;
  std::vector<std::int8_t> first_lane_;     // per transfer
  std::vector<std::uint8_t> lanes_;         // per transfer: its stripes
  std::vector<std::uint8_t> stripes_left_;  // per transfer: stripes still moving
  std::vector<std::uint32_t> copies_;       // op indices of the copies
  std::vector<std::uint32_t> waiting_;      // per waiter: unmet dependencies
  std::vector<std::uint32_t> edge_begin_;   // per op: its dependents in dependents_
  std::vector<std::uint32_t> dependents_;
  std::vector<double> done_at_;  // per op: completion time, -1 until then
  // Every activity started: SimGrid calls back into the S4U object when it completes, so it
  // must outlive its run.
  std::vector<sg4::ActivityPtr> keep_;
  std::uint64_t comms_ = 0;
  std::uint64_t execs_ = 0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Overlapped: data comms do not wait for the route latency (factor 0, but TCP-gamma still sees
// it); zero-byte comms carry it whole.
double overlapped_latency_factor(double size, const sg4::Host*, const sg4::Host*,
                                 const std::vector<sg4::Link*>&,
                                 const std::unordered_set<sg4::NetZone*>&) {
  return size > 0 ? 0.0 : 1.0;
}

}  // namespace

std::string encode_result(const ReplayResult& r) {
  std::string out = fmt::format("{:a} {:a} {:a} {:a} {} {} {}", r.time_s, r.setup_s, r.run_s,
                                r.run_cpu_s, r.comms, r.execs, r.rank_finish_s.size());
  for (double f : r.rank_finish_s) out += fmt::format(" {:a}", f);
  return out;
}

ReplayResult decode_result(const std::string& text) {
  std::istringstream in(text);
  auto unreadable = [&] {
    return std::runtime_error(fmt::format("unreadable answer from the SimGrid run: \"{}\"", text));
  };
  auto number = [&] {
    std::string word;
    if (!(in >> word)) throw unreadable();
    return std::strtod(word.c_str(), nullptr);
  };
  ReplayResult r;
  r.time_s = number();
  r.setup_s = number();
  r.run_s = number();
  r.run_cpu_s = number();
  std::size_t ranks = 0;
  if (!(in >> r.comms >> r.execs >> ranks)) throw unreadable();
  for (std::size_t i = 0; i < ranks; ++i) r.rank_finish_s.push_back(number());
  return r;
}

ReplayResult replay_in_simgrid(const Schedule& schedule, const Platform& platform,
                               LatencyMode mode) {
  const SimGridSettings settings = simgrid_settings(platform);
  // SimGrid announces every configuration change at level INFO; keep warnings and errors.
  xbt_log_control_set("root.thresh:warning");
  int argc = 1;
  char name[] = "simgrid_peer";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  for (const auto& c : settings.config) sg4::Engine::set_config(c);

  ReplayResult result;
  const auto build_start = std::chrono::steady_clock::now();
  const SimGridPlatform sg(platform);
  if (mode == LatencyMode::Overlapped) {
    engine.get_netzone_root()->get_network_model()->set_lat_factor_cb(overlapped_latency_factor);
  }
  Replay replay(schedule, platform, sg, mode);
  sg4::Activity::on_completion_cb([&replay](const sg4::Activity& a) { replay.on_completion(a); });
  replay.start();
  result.setup_s = seconds_since(build_start);

  const double cpu_start = process_cpu_s();
  const auto run_start = std::chrono::steady_clock::now();
  engine.run();
  result.run_s = seconds_since(run_start);
  result.run_cpu_s = process_cpu_s() - cpu_start;

  result.rank_finish_s = replay.rank_finish();
  for (double f : result.rank_finish_s) result.time_s = std::max(result.time_s, f);
  result.comms = replay.comms();
  result.execs = replay.execs();
  return result;
}

}  // namespace multilane::simgrid_peer
