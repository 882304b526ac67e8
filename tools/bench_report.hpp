// tools/bench_report.hpp — `multilane bench` results as a table for people.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace multilane::cli {

// One row per (size, algorithm): median time, bandwidth, ratio to the fastest of that size,
// and the check's verdict.
std::string collective_table(const nlohmann::json& doc);
// One row per stream count: median one-way time and throughput.
std::string p2p_table(const nlohmann::json& runs);

}  // namespace multilane::cli
