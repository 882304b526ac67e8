#include "sim/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
#include "multilane/errors.hpp"
#include "multilane/model.hpp"
#include "multilane/units.hpp"

namespace multilane::sim {

namespace {

BuildParams params_for(const Platform& platform, const SweepRequest& req, std::uint64_t size,
                       std::uint64_t segment) {
  BuildParams p;
  p.root = req.root;
  p.size = size;
  p.segment = segment;
  p.wan_pairs = req.wan_pairs;
  p.element_size = req.element_size;
  p.counts = req.counts.counts(req.collective, platform.num_ranks(), size, req.element_size);
  if (!p.counts.empty()) p.size = largest_count(p.counts);
  return p;
}

// Segments to try for one (algorithm, size): the fixed one, or the model's best candidates
// (powers of two when the algorithm has no closed form here).
std::vector<std::uint64_t> segments_to_try(const Platform& platform, const SweepRequest& req,
                                           const AlgorithmInfo& info, std::uint64_t size) {
  if (!info.pipelined) return {kDefaultSegment};
  if (req.segment) return {*req.segment};
  try {
    auto c =
        segment_candidates(platform, req.collective, info.name, params_for(platform, req, size, 0),
                           req.overhead_s, req.max_segments);
    if (!req.simulate) c.resize(1);
    return c;
  } catch (const UsageError&) {
    const std::uint64_t lo = std::max<std::uint64_t>(4096, size / std::max(req.max_segments, 1));
    std::vector<std::uint64_t> c;
    for (std::uint64_t s = lo; c.size() < 3; s *= 4)
      c.push_back(std::min(s, std::max<std::uint64_t>(size, 1)));
    c.erase(std::unique(c.begin(), c.end()), c.end());
    return c;
  }
}

void evaluate(const Platform& platform, const SweepRequest& req, const AlgorithmInfo& info,
              std::uint64_t size, SweepResult& out) {
  SweepRow best;
  best.algorithm = std::string(info.name);
  best.size = size;
  bool have = false;
  for (std::uint64_t seg : segments_to_try(platform, req, info, size)) {
    SweepRow row;
    row.algorithm = best.algorithm;
    row.size = size;
    const BuildParams params = params_for(platform, req, size, seg);
    if (req.model) {
      try {
        row.model_s = model_time(platform, req.collective, info.name, params, req.overhead_s);
      } catch (const UsageError& e) {
        if (!req.simulate && !req.algorithms.empty()) throw;  // `model` of one named algorithm
        row.model_note = e.what();
      }
    }
    const Schedule schedule = build_schedule(platform, req.collective, info.name, params);
    row.segment = info.pipelined ? seg : 0;
    row.wan_pairs = wan_pairs_used(platform, req.collective, info.name, params);
    row.ops = schedule.num_ops();
    if (req.simulate) {
      SimOptions o;
      o.per_message_overhead_s = req.overhead_s;
      o.record_trace = req.trace_first && !out.first_trace && !have;
      SimResult r = simulate(schedule, platform, o);
      row.sim_s = r.time_s;
      row.transfers = r.transfers;
      row.events = r.events;
      row.wall_s = r.wall_s;
      if (o.record_trace) out.first_trace = std::move(r);
    }
    if (!have || row.time() < best.time()) best = row;
    have = true;
  }
  out.rows.push_back(best);
}

void fill_ratios(std::vector<SweepRow>& rows) {
  std::map<std::uint64_t, double> best;
  for (const auto& r : rows) {
    if (!r.error.empty() || (!r.sim_s && !r.model_s)) continue;
    auto [it, fresh] = best.emplace(r.size, r.time());
    if (!fresh) it->second = std::min(it->second, r.time());
  }
  for (auto& r : rows) {
    auto it = best.find(r.size);
    if (it != best.end() && it->second > 0 && r.error.empty() && (r.sim_s || r.model_s)) {
      r.ratio_to_best = r.time() / it->second;
    } else if (it != best.end() && r.error.empty() && (r.sim_s || r.model_s)) {
      r.ratio_to_best = 1;
    }
  }
}

}  // namespace

SweepResult run_sweep(const Platform& platform, const SweepRequest& req) {
  std::vector<const AlgorithmInfo*> algos;
  if (req.algorithms.empty()) {
    for (const auto& a : all_algorithms()) {
      if (a.collective == req.collective) algos.push_back(&a);
    }
  } else {
    for (const auto& name : req.algorithms) {
      const AlgorithmInfo* a = find_algorithm(req.collective, name);
      if (!a) throw UsageError(unknown_algorithm_message(req.collective, name, {"all"}));
      algos.push_back(a);
    }
  }
  SweepResult out;
  for (std::uint64_t size : req.sizes) {
    for (const AlgorithmInfo* a : algos) {
      try {
        evaluate(platform, req, *a, size, out);
      } catch (const UsageError& e) {
        if (!req.algorithms.empty()) {
          throw UsageError(fmt::format("{} {} on platform {}: {}", to_string(req.collective),
                                       a->name, platform.name, e.what()));
        }
        SweepRow row;
        row.algorithm = std::string(a->name);
        row.size = size;
        row.error = e.what();
        out.rows.push_back(row);
      }
    }
  }
  fill_ratios(out.rows);
  return out;
}

std::string sweep_table(const SweepResult& result, const SweepRequest& req) {
  std::string out;
  const bool both = req.simulate && req.model;
  if (both) {
    out += fmt::format("{:>10}  {:<18} {:>12} {:>12} {:>8} {:>10} {:>5}\n", "size", "algorithm",
                       "simulated", "model", "diff", "segment", "P");
  } else {
    out += fmt::format("{:>10}  {:<18} {:>12} {:>14} {:>7} {:>10} {:>5}\n", "size", "algorithm",
                       req.simulate ? "simulated" : "model", "bandwidth", "x best", "segment", "P");
  }
  for (const auto& r : result.rows) {
    const std::string seg = r.segment ? format_size(r.segment) : "-";
    const std::string pairs = r.wan_pairs ? std::to_string(r.wan_pairs) : "-";
    if (!r.error.empty()) {
      out +=
          fmt::format("{:>10}  {:<18} cannot run: {}\n", format_size(r.size), r.algorithm, r.error);
      continue;
    }
    if (both) {
      std::string model = r.model_s ? format_duration(*r.model_s) : "n/a";
      std::string diff = (r.model_s && r.sim_s && *r.sim_s > 0)
                             ? fmt::format("{:+.1f}%", 100 * (*r.model_s - *r.sim_s) / *r.sim_s)
                             : "-";
      out += fmt::format("{:>10}  {:<18} {:>12} {:>12} {:>8} {:>10} {:>5}\n", format_size(r.size),
                         r.algorithm, format_duration(*r.sim_s), model, diff, seg, pairs);
      continue;
    }
    if (!r.sim_s && !r.model_s) {
      out += fmt::format("{:>10}  {:<18} no closed form: {}\n", format_size(r.size), r.algorithm,
                         r.model_note);
      continue;
    }
    const double t = r.time();
    out += fmt::format("{:>10}  {:<18} {:>12} {:>14} {:>7.2f} {:>10} {:>5}\n", format_size(r.size),
                       r.algorithm, format_duration(t),
                       t > 0 ? format_bandwidth(double(r.size) / t) : "-", r.ratio_to_best, seg,
                       pairs);
  }
  return out;
}

std::string sweep_json(const SweepResult& result, const SweepRequest& req,
                       const Platform& platform) {
  nlohmann::json doc;
  doc["platform"] = platform.name;
  doc["collective"] = std::string(to_string(req.collective));
  doc["mode"] = req.simulate && req.model ? "compare" : (req.simulate ? "sim" : "model");
  doc["per_message_overhead_s"] = req.overhead_s;
  auto rows = nlohmann::json::array();
  for (const auto& r : result.rows) {
    nlohmann::json j;
    j["algorithm"] = r.algorithm;
    j["size"] = r.size;
    if (!r.error.empty()) {
      j["error"] = r.error;
      rows.push_back(j);
      continue;
    }
    j["time_s"] = r.sim_s || r.model_s ? nlohmann::json(r.time()) : nlohmann::json(nullptr);
    j["segment"] = r.segment;
    j["wan_pairs"] = r.wan_pairs;
    j["bandwidth_Bps"] = r.time() > 0 ? double(r.size) / r.time() : 0.0;
    j["ratio_to_best"] = r.ratio_to_best;
    if (r.sim_s) {
      j["sim_s"] = *r.sim_s;
      j["transfers"] = r.transfers;
      j["events"] = r.events;
      j["ops"] = r.ops;
      j["wall_s"] = r.wall_s;
    }
    if (r.model_s) j["model_s"] = *r.model_s;
    if (!r.model_note.empty()) j["model_note"] = r.model_note;
    rows.push_back(j);
  }
  doc["results"] = rows;
  return doc.dump(2) + "\n";
}

}  // namespace multilane::sim
