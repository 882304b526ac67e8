// tools/bench_report.cpp — see bench_report.hpp.
#include "bench_report.hpp"

#include <fmt/format.h>

#include <map>

#include "multilane/units.hpp"

namespace multilane::cli {

namespace {

std::string check_text(const nlohmann::json& row) {
  if (!row.value("checked", false)) return "-";
  return row.value("check_ok", false) ? "ok" : "FAILED";
}

}  // namespace

std::string collective_table(const nlohmann::json& doc) {
  std::map<std::uint64_t, double> best;
  for (const auto& row : doc["results"]) {
    const auto size = row["size"].get<std::uint64_t>();
    const double t = row["median_s"].get<double>();
    if (!best.contains(size) || t < best[size]) best[size] = t;
  }
  std::string out = fmt::format("{} on {} ranks ({} platform), median of {} repetitions\n",
                                doc["collective"].get<std::string>(), doc["ranks"].get<int>(),
                                doc["platform"].get<std::string>(),
                                doc["results"].empty() ? 0 : doc["results"][0]["times_s"].size());
  out += fmt::format("{:>10}  {:<18} {:>12} {:>14} {:>8} {:>6}  {}\n", "size", "algorithm", "time",
                     "bandwidth", "x best", "iters", "check");
  for (const auto& row : doc["results"]) {
    const auto size = row["size"].get<std::uint64_t>();
    const double t = row["median_s"].get<double>();
    out += fmt::format("{:>10}  {:<18} {:>12} {:>14} {:>8.2f} {:>6}  {}\n", format_size(size),
                       row["algorithm"].get<std::string>(), format_duration(t),
                       t > 0 ? format_bandwidth(static_cast<double>(size) / t) : "-",
                       best[size] > 0 ? t / best[size] : 1.0, row["iterations"].get<int>(),
                       check_text(row));
  }
  return out;
}

std::string p2p_table(const nlohmann::json& runs) {
  std::string out = fmt::format("{:>8} {:>10} {:>12} {:>14}  {}\n", "streams", "size", "time",
                                "throughput", "check");
  for (const auto& run : runs) {
    const auto size = run["size"].get<std::uint64_t>();
    const double t = run["median_s"].get<double>();
    out +=
        fmt::format("{:>8} {:>10} {:>12} {:>14}  {}\n", run["streams"].get<int>(),
                    format_size(size), format_duration(t),
                    t > 0 ? format_bandwidth(static_cast<double>(size) / t) : "-", check_text(run));
  }
  return out;
}

}  // namespace multilane::cli
