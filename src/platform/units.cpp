// Parsing and formatting of sizes, durations and bandwidths (contract in multilane/units.hpp).
//
// One table of units per quantity drives parsing, the "accepted forms" list in error messages
// and the exact formatter, so the three cannot drift apart. Sizes are parsed with integer
// arithmetic (a size is a whole number of bytes, "1.5KiB" must be exact); durations and
// bandwidths are doubles.
#include "multilane/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <span>
#include <system_error>
#include <utility>

#include "multilane/errors.hpp"

namespace multilane {

namespace {

template <typename Scale>
struct Unit {
  std::string_view text;
  Scale scale;
  bool alias = false;  // accepted but not listed in messages (e.g. "kB" next to "KB")
};

constexpr std::array<Unit<std::uint64_t>, 8> kSizeUnits{{
    {"B", 1},
    {"KB", 1000},
    {"kB", 1000, true},
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
    {"KiB", 1024},
    {"MiB", 1024 * 1024},
    {"GiB", 1024 * 1024 * 1024},
}};

constexpr std::array<Unit<double>, 6> kDurationUnits{{
    {"s", 1},
    {"ms", 1e-3},
    {"us", 1e-6},
    {"\u00b5s", 1e-6, true},  // micro sign
    {"\u03bcs", 1e-6, true},  // Greek small letter mu
    {"ns", 1e-9},
}};

// Bit units are bytes / 8; every scale below is exactly representable as a double.
constexpr std::array<Unit<double>, 23> kBandwidthUnits{{
    {"bit/s", 0.125},     {"kbit/s", 125},         {"Kbit/s", 125, true},
    {"Mbit/s", 125e3},    {"Gbit/s", 125e6},       {"bps", 0.125},
    {"kbps", 125},        {"Kbps", 125, true},     {"Mbps", 125e3},
    {"Gbps", 125e6},      {"b/s", 0.125, true},    {"kb/s", 125, true},
    {"Kb/s", 125, true},  {"Mb/s", 125e3, true},  {"Gb/s", 125e6},
    {"B/s", 1},           {"KB/s", 1e3},           {"kB/s", 1e3, true},
    {"MB/s", 1e6},        {"GB/s", 1e9},           {"KiB/s", 1024},
    {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
}};

template <typename Scale>
std::string unit_list(std::span<const Unit<Scale>> units) {
  std::string out;
  for (const auto& u : units) {
    if (u.alias) continue;
    if (!out.empty()) out += ", ";
    out += u.text;
  }
  return out;
}

template <typename Scale>
const Unit<Scale>* find_unit(std::span<const Unit<Scale>> units, std::string_view text) {
  for (const auto& u : units) {
    if (u.text == text) return &u;
  }
  return nullptr;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

[[noreturn]] void fail(std::string_view what, std::string_view text, std::string_view expected) {
  const bool negative = trim(text).starts_with('-');
  throw UsageError(fmt::format("{} \"{}\" does not parse: {}expected {}", what, text,
                               negative ? "negative values are not allowed; " : "", expected));
}

std::string size_expectation() {
  return "a number with an optional unit " +
         unit_list(std::span<const Unit<std::uint64_t>>(kSizeUnits));
}

// A non-negative decimal number followed by a unit (spaces allowed between them).
struct NumberAndUnit {
  double value = 0;
  std::string_view unit;
};

std::optional<NumberAndUnit> split_real(std::string_view text) {
  if (text.empty() || !(text.front() >= '0' && text.front() <= '9')) return std::nullopt;
  NumberAndUnit out;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out.value);
  if (ec != std::errc{} || !std::isfinite(out.value)) return std::nullopt;
  out.unit = trim(text.substr(static_cast<std::size_t>(end - text.data())));
  return out;
}

double parse_real_with_unit(std::string_view what, std::string_view raw,
                            std::span<const Unit<double>> units) {
  const std::string_view text = trim(raw);
  const auto parsed = split_real(text);
  const Unit<double>* unit = parsed ? find_unit(units, parsed->unit) : nullptr;
  if (unit == nullptr) fail(what, raw, "a number with a unit " + unit_list(units));
  return parsed->value * unit->scale;
}

// "64" KiB: digits with at most one '.', converted exactly. Returns false on overflow or when
// the result is not a whole number of bytes.
bool exact_size(std::string_view number, std::uint64_t scale, std::uint64_t& bytes) {
  std::uint64_t mantissa = 0;
  std::uint64_t divisor = 1;
  bool seen_point = false;
  for (const char c : number) {
    if (c == '.') {
      if (seen_point) return false;
      seen_point = true;
      continue;
    }
    if (__builtin_mul_overflow(mantissa, 10u, &mantissa) ||
        __builtin_add_overflow(mantissa, static_cast<std::uint64_t>(c - '0'), &mantissa)) {
      return false;
    }
    if (seen_point && __builtin_mul_overflow(divisor, 10u, &divisor)) return false;
  }
  std::uint64_t scaled = 0;
  if (__builtin_mul_overflow(mantissa, scale, &scaled)) return false;
  if (scaled % divisor != 0) return false;
  bytes = scaled / divisor;
  return true;
}

// Shortest decimal that reads back as `value` (std::to_chars guarantees the round trip).
std::string shortest(double value) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

// Three significant digits in the largest of `units` (ascending scales) that keeps the number
// at least 1.
std::string readable(double value, std::span<const std::pair<std::string_view, double>> units) {
  std::size_t pick = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (value >= units[i].second) pick = i;
  }
  std::string number = fmt::format("{:.3g}", value / units[pick].second);
  if (number.find('e') != std::string::npos) {  // rounded up to 1000, or beyond the largest unit
    if (pick + 1 < units.size() && value / units[pick + 1].second >= 0.9995) {
      ++pick;
      number = fmt::format("{:.3g}", value / units[pick].second);
    } else {
      number = fmt::format("{:.0f}", value / units[pick].second);
    }
  }
  return number + " " + std::string(units[pick].first);
}

// Among the texts that parse back to exactly `value`, the shortest one without an exponent
// ("10ms" rather than "0.01s"); the base unit always qualifies, so there is always an answer.
std::string exact(double value, std::span<const Unit<double>> units,
                  double (*parse)(std::string_view)) {
  std::string best;
  auto better = [](const std::string& a, const std::string& b) {
    const bool a_exp = a.find('e') != std::string::npos;
    const bool b_exp = b.find('e') != std::string::npos;
    return a_exp != b_exp ? !a_exp : a.size() < b.size();
  };
  for (const auto& u : units) {
    if (u.alias) continue;
    std::string candidate = shortest(value / u.scale) + std::string(u.text);
    if (parse(candidate) != value) continue;
    if (best.empty() || better(candidate, best)) best = std::move(candidate);
  }
  return best;
}

}  // namespace

std::uint64_t parse_size(std::string_view raw) {
  const std::string_view text = trim(raw);
  const auto digits_end = text.find_first_not_of("0123456789.");
  const std::string_view number = text.substr(0, digits_end);
  const std::string_view unit_text =
      digits_end == std::string_view::npos ? std::string_view{} : trim(text.substr(digits_end));
  const bool has_digit = number.find_first_of("0123456789") != std::string_view::npos;
  if (!has_digit || number.front() == '.') fail("size", raw, size_expectation());
  std::uint64_t scale = 1;
  if (!unit_text.empty()) {
    const auto* unit = find_unit(std::span<const Unit<std::uint64_t>>(kSizeUnits), unit_text);
    if (unit == nullptr) fail("size", raw, size_expectation());
    scale = unit->scale;
  }
  std::uint64_t bytes = 0;
  if (!exact_size(number, scale, bytes)) {
    fail("size", raw, "a whole number of bytes below 2^64 (" + size_expectation() + ")");
  }
  return bytes;
}

double parse_duration(std::string_view text) {
  return parse_real_with_unit("duration", text, kDurationUnits);
}

double parse_bandwidth(std::string_view text) {
  return parse_real_with_unit("bandwidth", text, kBandwidthUnits);
}

std::vector<std::uint64_t> parse_size_list(std::string_view text) {
  std::vector<std::uint64_t> sizes;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const std::string_view token =
        trim(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (token.empty()) {
      throw UsageError(fmt::format(
          "size list \"{}\" does not parse: expected sizes separated by commas, like 0,1,7,1KiB",
          text));
    }
    sizes.push_back(parse_size(token));
    if (comma == std::string_view::npos) return sizes;
    start = comma + 1;
  }
}

std::string format_size(std::uint64_t bytes) {
  // The unit giving the smallest whole number; binary units first since buffers usually are.
  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 6> units{{
      {"GiB", 1024ull * 1024 * 1024},
      {"MiB", 1024ull * 1024},
      {"KiB", 1024},
      {"GB", 1000ull * 1000 * 1000},
      {"MB", 1000ull * 1000},
      {"KB", 1000},
  }};
  std::pair<std::string_view, std::uint64_t> best{"B", 1};
  for (const auto& unit : units) {
    if (bytes != 0 && bytes % unit.second == 0 && unit.second > best.second) best = unit;
  }
  return fmt::format("{} {}", bytes / best.second, best.first);
}

std::string format_duration(double seconds) {
  static constexpr std::array<std::pair<std::string_view, double>, 4> units{{
      {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}}};
  if (seconds == 0) return "0 s";
  return readable(seconds, units);
}

std::string format_bandwidth(double bytes_per_s) {
  static constexpr std::array<std::pair<std::string_view, double>, 5> units{
      {{"bit/s", 0.125}, {"kbit/s", 125}, {"Mbit/s", 125e3}, {"Gbit/s", 125e6},
       {"Tbit/s", 125e9}}};
  if (bytes_per_s == 0) return "0 bit/s";
  return readable(bytes_per_s, units);
}

std::string format_duration_exact(double seconds) {
  return exact(seconds, kDurationUnits, parse_duration);
}

std::string format_bandwidth_exact(double bytes_per_s) {
  return exact(bytes_per_s, kBandwidthUnits, parse_bandwidth);
}

}  // namespace multilane
