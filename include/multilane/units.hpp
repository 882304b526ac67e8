// multilane/units.hpp — quantities written the way people write them.
//
//   sizes       "0", "4097", "64KiB", "1MiB", "1.5GB", "1048577B"  (KiB = 1024, KB = kB = 1000)
//   durations   "10ms", "5us", "5µs", "1.5s", "250ns"
//   bandwidths  "1Gbit/s", "250Mbit/s", "125MB/s", "10GiB/s", "1Gbps", "1Gb/s"  (bit units are /8)
//
// A space may separate the number from its unit ("64 KiB"), so the formatters' output parses.
// Parsers throw UsageError naming the offending text and the accepted forms; negative numbers
// never parse. Results are in bytes, seconds and bytes per second. Formatters pick a readable
// unit and round to three significant digits; the *_exact formatters give a text that parses
// back to exactly the same value (used when writing platform files).
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

std::string format_size(std::uint64_t bytes);      // "64 KiB", "1 MiB", "1048577 B"
std::string format_duration(double seconds);       // "10 ms", "1.53 s"
std::string format_bandwidth(double bytes_per_s);  // "1 Gbit/s"

// Shortest text with a unit that parse_duration / parse_bandwidth read back bit for bit:
// 0.01 -> "10ms", 125e6 -> "1Gbit/s", 4e9 -> "4GB/s".
std::string format_duration_exact(double seconds);
std::string format_bandwidth_exact(double bytes_per_s);

}  // namespace multilane
