// multilane/units.hpp — quantities written the way people write them.
//
//   sizes       "0", "4097", "64KiB", "1MiB", "1.5GB", "1048577B"  (KiB = 1024, KB = 1000)
//   durations   "10ms", "5us", "1.5s", "250ns"
//   bandwidths  "1Gbit/s", "250Mbit/s", "125MB/s", "10GiB/s", "1Gbps"  (bit units are /8)
//
// Parsers throw UsageError naming the offending text and the accepted forms; results are in
// bytes, seconds and bytes per second. Formatters pick a readable unit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace multilane {

std::uint64_t parse_size(std::string_view text);
double parse_duration(std::string_view text);
double parse_bandwidth(std::string_view text);
// "0,1,7,1KiB" -> {0,1,7,1024}; the error names the token that does not parse.
std::vector<std::uint64_t> parse_size_list(std::string_view text);

std::string format_size(std::uint64_t bytes);        // "64 KiB", "1 MiB", "1048577 B"
std::string format_duration(double seconds);         // "10 ms", "1.53 s"
std::string format_bandwidth(double bytes_per_s);    // "1 Gbit/s"

}  // namespace multilane
