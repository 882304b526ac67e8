#include "simgrid_replay.hpp"

#include <fmt/format.h>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/NetZone.hpp>
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

// One activity of the graph: a comm or an exec, by index.
struct Ref {
  bool exec = false;
  std::uint32_t index = 0;
  friend auto operator<=>(const Ref&, const Ref&) = default;
};

// The activity graph of one schedule on one SimGrid platform.
class ActivityGraph {
 public:
  ActivityGraph(const Schedule& schedule, const Platform& platform, const SimGridPlatform& sg,
                LatencyMode mode)
      : s_(schedule), platform_(platform), sg_(sg), mode_(mode), t_(match_transfers(schedule)) {
    create_transfers();
    create_copies();
    link_transfers();
    link_copies();
  }

  // Starts every activity whose predecessors are done; SimGrid starts the others as they become
  // so while the engine runs.
  void start() {
    for (auto& c : comms_) c->vetoable_start();
    for (auto& e : execs_) e->vetoable_start();
  }

  std::size_t comms() const { return comms_.size(); }
  std::size_t execs() const { return execs_.size(); }

  // Completion time of every rank; throws naming the first operation that never completed.
  std::vector<double> rank_finish() const {
    std::vector<double> finish(static_cast<std::size_t>(s_.num_ranks()), 0.0);
    std::vector<Ref> refs;
    for (std::uint32_t g = 0; g < s_.ops.size(); ++g) {
      refs.clear();
      completion_of(g, refs);
      for (const Ref& r : refs) {
        const sg4::Activity& a = activity(r);
        if (a.get_state() != sg4::Activity::State::FINISHED) throw_stuck(g);
        double& f = finish[static_cast<std::size_t>(t_.rank_of_op[g])];
        f = std::max(f, a.get_finish_time());
      }
    }
    return finish;
  }

 private:
  const sg4::Activity& activity(Ref r) const {
    if (r.exec) return *execs_[r.index];
    return *comms_[r.index];
  }

  void add_successor(Ref from, const sg4::ActivityPtr& to) {
    if (from.exec) {
      execs_[from.index]->add_successor(to);
    } else {
      comms_[from.index]->add_successor(to);
    }
  }

  // The activities whose completion completes op g: a Send's data comms (its bytes have left),
  // a Recv's latency comm (Overlapped) or data comms (PerMessage), a Copy's exec.
  void completion_of(std::uint32_t g, std::vector<Ref>& out) const {
    const Op& op = s_.ops[g];
    if (op.kind == OpKind::Copy) {
      out.push_back({true, copy_exec_[g]});
      return;
    }
    const std::uint32_t t = t_.of_op[g];
    if (op.kind == OpKind::Recv && mode_ == LatencyMode::Overlapped) {
      out.push_back({false, arrival_[t]});
      return;
    }
    for (std::uint32_t c = stripe_begin_[t]; c < stripe_end_[t]; ++c) out.push_back({false, c});
  }

  void dependencies_of(std::uint32_t g, std::vector<Ref>& out) const {
    const int rank = t_.rank_of_op[g];
    for (OpIndex d : s_.deps_of(s_.ops[g])) completion_of(s_.rank_begin[rank] + d, out);
  }

  // The lanes a transfer uses, checked against the nodes and the platform's WAN links.
  std::pair<int, int> lanes_of(const Op& send, int from, int to) const {
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
    if (send.lane == kAnyLane) return {0, std::min({la, lb, kMaxStripe})};
    if (send.lane < 0 || send.lane >= la || send.lane >= lb) {
      throw UsageError(fmt::format(
          "rank {} (node {}, {} lanes) sends to rank {} (node {}, {} lanes) on lane {}, which one "
          "of them does not have",
          from, platform_.nodes[na].name, la, to, platform_.nodes[nb].name, lb, int(send.lane)));
    }
    return {send.lane, 1};
  }

  void create_transfers() {
    stripe_begin_.reserve(t_.size());
    stripe_end_.reserve(t_.size());
    if (mode_ == LatencyMode::Overlapped) arrival_.reserve(t_.size());
    for (std::size_t t = 0; t < t_.size(); ++t) {
      const Op& send = s_.ops[t_.send_op[t]];
      const int from = t_.rank_of_op[t_.send_op[t]];
      const int to = send.peer;
      const auto [first_lane, lanes] = lanes_of(send, from, to);
      // Never an empty stripe: a zero-byte comm is what carries latency alone.
      const std::uint64_t bytes = send.range.length;
      const auto stripes = static_cast<int>(std::min<std::uint64_t>(std::uint64_t(lanes), bytes));
      stripe_begin_.push_back(static_cast<std::uint32_t>(comms_.size()));
      for (int i = 0; i < stripes; ++i) {
        const std::uint64_t share = bytes / stripes + (std::uint64_t(i) < bytes % stripes ? 1 : 0);
        comms_.push_back(
            sg4::Comm::sendto_init(sg_.lane_host(platform_.node_of(from), first_lane + i),
                                   sg_.lane_host(platform_.node_of(to), first_lane + i))
                ->set_payload_size(share));
      }
      stripe_end_.push_back(static_cast<std::uint32_t>(comms_.size()));
      if (mode_ == LatencyMode::Overlapped) {
        arrival_.push_back(static_cast<std::uint32_t>(comms_.size()));
        comms_.push_back(sg4::Comm::sendto_init(sg_.lane_host(platform_.node_of(from), first_lane),
                                                sg_.lane_host(platform_.node_of(to), first_lane))
                             ->set_payload_size(0));
      }
    }
  }

  void create_copies() {
    copy_exec_.assign(s_.ops.size(), 0);
    for (std::uint32_t g = 0; g < s_.ops.size(); ++g) {
      const Op& op = s_.ops[g];
      if (op.kind != OpKind::Copy) continue;
      copy_exec_[g] = static_cast<std::uint32_t>(execs_.size());
      execs_.push_back(sg4::Exec::init()
                           ->set_flops_amount(double(op.range.length))
                           ->set_host(sg_.memory_host(platform_.node_of(t_.rank_of_op[g]))));
    }
  }

  // A transfer's comms wait for the Send's and the Recv's dependencies and for the previous
  // transfer of the pair (its bytes having left, or, PerMessage, having arrived).
  void link_transfers() {
    std::vector<Ref> preds;
    for (std::size_t t = 0; t < t_.size(); ++t) {
      preds.clear();
      dependencies_of(t_.send_op[t], preds);
      dependencies_of(t_.recv_op[t], preds);
      if (t_.previous[t] != kNoTransfer) completion_of(t_.send_op[t_.previous[t]], preds);
      std::sort(preds.begin(), preds.end());
      preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
      for (std::uint32_t c = stripe_begin_[t]; c < stripe_end_[t]; ++c) {
        for (const Ref& p : preds) add_successor(p, comms_[c]);
        if (mode_ == LatencyMode::Overlapped) comms_[c]->add_successor(comms_[arrival_[t]]);
      }
    }
  }

  void link_copies() {
    std::vector<Ref> preds;
    for (std::uint32_t g = 0; g < s_.ops.size(); ++g) {
      if (s_.ops[g].kind != OpKind::Copy) continue;
      preds.clear();
      dependencies_of(g, preds);
      std::sort(preds.begin(), preds.end());
      preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
      for (const Ref& p : preds) add_successor(p, execs_[copy_exec_[g]]);
    }
  }

  [[noreturn]] void throw_stuck(std::uint32_t g) const {
    const int rank = t_.rank_of_op[g];
    const Op& op = s_.ops[g];
    std::string what = std::string(to_string(op.kind));
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
  std::vector<sg4::CommPtr> comms_;          // data stripes, then latency comms interleaved
  std::vector<sg4::ExecPtr> execs_;          // copies
  std::vector<std::uint32_t> stripe_begin_;  // per transfer, its data comms in comms_ ...
  std::vector<std::uint32_t> stripe_end_;    // ... [stripe_begin_, stripe_end_)
  std::vector<std::uint32_t> arrival_;       // per transfer, its latency comm (Overlapped)
  std::vector<std::uint32_t> copy_exec_;     // per op, its exec (copies)
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Overlapped: data comms do not wait for the route latency (factor 0, but TCP-gamma still sees
// it); zero-byte comms carry it whole.
double overlapped_latency_factor(double size, const sg4::Host*, const sg4::Host*,
                                 const std::vector<sg4::Link*>&,
                                 const std::unordered_set<sg4::NetZone*>&) {
  return size > 0 ? 0.0 : 1.0;
}

}  // namespace

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
  ActivityGraph graph(schedule, platform, sg, mode);
  graph.start();
  result.build_s = seconds_since(build_start);

  const auto run_start = std::chrono::steady_clock::now();
  engine.run();
  result.run_s = seconds_since(run_start);

  result.rank_finish_s = graph.rank_finish();
  for (double f : result.rank_finish_s) result.time_s = std::max(result.time_s, f);
  result.comms = graph.comms();
  result.execs = graph.execs();
  return result;
}

}  // namespace multilane::simgrid_peer
