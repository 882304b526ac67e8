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

// Whether a unit is used when writing, only listed in error messages, or merely accepted.
enum class Listing { kWritten, kListed, kAlias };

template <typename Scale>
struct Unit {
  std::string_view text;
  Scale scale;
  Listing listing = Listing::kWritten;
};

constexpr auto kAlias = Listing::kAlias;
constexpr auto kListed = Listing::kListed;

constexpr std::array<Unit<std::uint64_t>, 8> kSizeUnits{{
    {"B", 1},
    {"KB", 1000},
    {"kB", 1000, kAlias},
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
    {"KiB", 1024},
    {"MiB", 1024 * 1024},
    {"GiB", 1024 * 1024 * 1024},
}};

// A real-valued unit is 10^exponent times a power of two, applied as "NUMBERe<exponent>"
// (one correctly rounded decimal conversion) times the factor (exact): "50us" is then the
// same double as the literal 50e-6, which keeps written files bit-exact.
struct RealScale {
  int exponent;
  double factor;
};

constexpr std::array<Unit<RealScale>, 6> kDurationUnits{{
    {"s", {0, 1}},
    {"ms", {-3, 1}},
    {"us", {-6, 1}},
    {"\u00b5s", {-6, 1}, kAlias},  // micro sign
    {"\u03bcs", {-6, 1}, kAlias},  // Greek small letter mu
    {"ns", {-9, 1}},
}};

// Bit units are bytes / 8.
constexpr std::array<Unit<RealScale>, 23> kBandwidthUnits{{
    {"bit/s", {0, 0.125}},
    {"kbit/s", {3, 0.125}},
    {"Kbit/s", {3, 0.125}, kAlias},
    {"Mbit/s", {6, 0.125}},
    {"Gbit/s", {9, 0.125}},
    {"bps", {0, 0.125}, kListed},
    {"kbps", {3, 0.125}, kListed},
    {"Kbps", {3, 0.125}, kAlias},
    {"Mbps", {6, 0.125}, kListed},
    {"Gbps", {9, 0.125}, kListed},
    {"b/s", {0, 0.125}, kAlias},
    {"kb/s", {3, 0.125}, kAlias},
    {"Kb/s", {3, 0.125}, kAlias},
    {"Mb/s", {6, 0.125}, kAlias},
    {"Gb/s", {9, 0.125}, kListed},
    {"B/s", {0, 1}},
    {"KB/s", {3, 1}},
    {"kB/s", {3, 1}, kAlias},
    {"MB/s", {6, 1}},
    {"GB/s", {9, 1}},
    {"KiB/s", {0, 1024}},
    {"MiB/s", {0, 1048576.0}},
    {"GiB/s", {0, 1073741824.0}},
}};

template <typename Scale>
std::string unit_list(std::span<const Unit<Scale>> units) {
  std::string out;
  for (const auto& u : units) {
    if (u.listing == kAlias) continue;
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

// A non-negative decimal number (optionally with an exponent) followed by a unit, spaces
// allowed between them.
struct NumberAndUnit {
  std::string_view number;
  std::string_view unit;
};

std::optional<NumberAndUnit> split_real(std::string_view text) {
  if (text.empty() || !(text.front() >= '0' && text.front() <= '9')) return std::nullopt;
  double ignored = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ignored);
  if (ec != std::errc{}) return std::nullopt;
  const auto length = static_cast<std::size_t>(end - text.data());
  return NumberAndUnit{text.substr(0, length), trim(text.substr(length))};
}

// number x 10^exponent, rounded once.
std::optional<double> scaled_decimal(std::string_view number, int exponent) {
  const auto e = number.find_first_of("eE");
  if (e != std::string_view::npos) {
    int own = 0;
    const auto [end, ec] =
        std::from_chars(number.data() + e + 1, number.data() + number.size(), own);
    if (ec != std::errc{} || end != number.data() + number.size()) return std::nullopt;
    exponent += own;
    number = number.substr(0, e);
  }
  const std::string text = fmt::format("{}e{}", number, exponent);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

double parse_real_with_unit(std::string_view what, std::string_view raw,
                            std::span<const Unit<RealScale>> units) {
  const std::string_view text = trim(raw);
  const auto parsed = split_real(text);
  const Unit<RealScale>* unit = parsed ? find_unit(units, parsed->unit) : nullptr;
  const auto value = unit ? scaled_decimal(parsed->number, unit->scale.exponent) : std::nullopt;
  if (!value || !std::isfinite(*value * unit->scale.factor)) {
    fail(what, raw, "a number with a unit " + unit_list(units));
  }
  return *value * unit->scale.factor;
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

// The shortest digits that read back as `value` (std::to_chars guarantees the round trip),
// written without an exponent as a number of units of 10^exponent: (5e-05, -6) -> "50".
std::string plain_decimal(double value, int exponent) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::scientific);
  const std::string_view scientific(buffer.data(), result.ptr);  // "d.ddde-05"
  const auto e = scientific.find('e');
  std::string digits;
  for (const char c : scientific.substr(0, e)) {
    if (c != '.') digits += c;
  }
  std::string_view power = scientific.substr(e + 1);
  if (power.front() == '+') power.remove_prefix(1);
  int exp10 = 0;
  std::from_chars(power.data(), power.data() + power.size(), exp10);
  const int n = static_cast<int>(digits.size());
  const int point = exp10 - exponent + 1;  // digits before the decimal point
  if (point <= 0) return "0." + std::string(-point, '0') + digits;
  if (point >= n) return digits + std::string(point - n, '0');
  return digits.substr(0, point) + "." + digits.substr(point);
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

// Among the texts that parse back to exactly `value`, the shortest ("10ms" rather than
// "0.01s"); the base unit always qualifies, so there is always an answer.
std::string exact(double value, std::span<const Unit<RealScale>> units,
                  double (*parse)(std::string_view)) {
  std::string best;
  for (const auto& u : units) {
    if (u.listing != Listing::kWritten) continue;
    std::string candidate =
        plain_decimal(value / u.scale.factor, u.scale.exponent) + std::string(u.text);
    if (parse(candidate) != value) continue;
    if (best.empty() || candidate.size() < best.size()) best = std::move(candidate);
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
  static constexpr std::array<std::pair<std::string_view, double>, 4> units{
      {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}}};
  if (seconds == 0) return "0 s";
  return readable(seconds, units);
}

std::string format_bandwidth(double bytes_per_s) {
  static constexpr std::array<std::pair<std::string_view, double>, 5> units{
      {{"bit/s", 0.125}, {"kbit/s", 125}, {"Mbit/s", 125e3}, {"Gbit/s", 125e6}, {"Tbit/s", 125e9}}};
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
