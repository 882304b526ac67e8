// Typed, checked access to one TOML table (contract in toml_table.hpp).
#include "platform/toml_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "multilane/errors.hpp"
#include "multilane/units.hpp"

namespace multilane::platform_toml {

namespace {

std::string quoted_or_plain(const toml::node& value) {
  if (const auto* text = value.as_string()) return fmt::format("\"{}\"", text->get());
  if (const auto* number = value.as_integer()) return std::to_string(number->get());
  switch (value.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::floating_point:
      return "a bare number";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

// Runs a units parser on a string value, turning its UsageError into the file's error form.
template <typename Parse>
auto parse_quantity(const TomlTable& at, std::string_view key, const toml::node& value,
                    std::string_view example, Parse parse) {
  const auto* text = value.as_string();
  if (text == nullptr) {
    at.fail(key, &value,
            fmt::format("expected a quoted quantity with a unit, like \"{}\"; got {}", example,
                        quoted_or_plain(value)));
  }
  try {
    return parse(text->get());
  } catch (const UsageError& e) {
    at.fail(key, &value, e.what());
  }
}

}  // namespace

void fail_at(const std::string& file, int line, std::string_view key, std::string_view reason) {
  throw PlatformError(fmt::format("{}:{}: {}: {}", file, line, key, reason));
}

int line_of(const toml::node& node) {
  return static_cast<int>(node.source().begin.line);
}

std::string TomlTable::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void TomlTable::fail(std::string_view key, const toml::node* where, std::string_view reason) const {
  fail_at(file(), where != nullptr ? line_of(*where) : line(), path_of(key), reason);
}

void TomlTable::fail_missing(std::string_view key, std::string_view hint) const {
  fail(key, nullptr, hint.empty() ? std::string("missing") : fmt::format("missing; {}", hint));
}

void TomlTable::allow_only(std::initializer_list<std::string_view> allowed) const {
  const toml::key* first_unknown = nullptr;
  for (const auto& [key, value] : *table_) {
    const bool known = std::find(allowed.begin(), allowed.end(), key.str()) != allowed.end();
    if (!known && (first_unknown == nullptr ||
                   key.source().begin.line < first_unknown->source().begin.line)) {
      first_unknown = &key;
    }
  }
  if (first_unknown == nullptr) return;
  std::string list;
  for (const auto key : allowed) list += (list.empty() ? "" : ", ") + std::string(key);
  fail_at(file(), static_cast<int>(first_unknown->source().begin.line),
          path_of(first_unknown->str()), "unknown key; allowed here: " + list);
}

const toml::node* TomlTable::get(std::string_view key) const {
  return table_->get(key);
}

std::string checked_string(const TomlTable& at, std::string_view key, const toml::node& value) {
  const auto* text = value.as_string();
  if (text == nullptr)
    at.fail(key, &value, "expected a quoted string, got " + quoted_or_plain(value));
  if (text->get().empty()) at.fail(key, &value, "must not be empty");
  return text->get();
}

int checked_integer(const TomlTable& at, std::string_view key, const toml::node& value, int min,
                    int max) {
  const auto* number = value.as_integer();
  if (number == nullptr) at.fail(key, &value, "expected an integer, got " + quoted_or_plain(value));
  const std::int64_t n = number->get();
  if (n < min || n > max) {
    at.fail(key, &value,
            max == INT_MAX ? fmt::format("must be at least {}, got {}", min, n)
                           : fmt::format("must be between {} and {}, got {}", min, max, n));
  }
  return static_cast<int>(n);
}

double checked_bandwidth(const TomlTable& at, std::string_view key, const toml::node& value) {
  const double bps = parse_quantity(at, key, value, "1Gbit/s", parse_bandwidth);
  if (bps <= 0) at.fail(key, &value, "must be positive, got " + quoted_or_plain(value));
  return bps;
}

std::optional<std::string> TomlTable::string(std::string_view key) const {
  const auto* value = get(key);
  if (value == nullptr) return std::nullopt;
  return checked_string(*this, key, *value);
}

std::string TomlTable::required_string(std::string_view key) const {
  auto text = string(key);
  if (!text) fail_missing(key, "");
  return *text;
}

std::optional<int> TomlTable::integer(std::string_view key, int min, int max) const {
  const auto* value = get(key);
  if (value == nullptr) return std::nullopt;
  return checked_integer(*this, key, *value, min, max);
}

std::optional<double> TomlTable::duration(std::string_view key) const {
  const auto* value = get(key);
  if (value == nullptr) return std::nullopt;
  return parse_quantity(*this, key, *value, "10ms", parse_duration);
}

std::optional<double> TomlTable::bandwidth(std::string_view key) const {
  const auto* value = get(key);
  if (value == nullptr) return std::nullopt;
  return checked_bandwidth(*this, key, *value);
}

std::optional<std::uint64_t> TomlTable::size(std::string_view key) const {
  const auto* value = get(key);
  if (value == nullptr) return std::nullopt;
  const std::uint64_t bytes = parse_quantity(*this, key, *value, "64KiB", parse_size);
  if (bytes == 0) fail(key, value, "must be positive, got " + quoted_or_plain(*value));
  return bytes;
}

std::optional<TomlTable> TomlTable::table(std::string_view key) const {
  const auto* value = get(key);
  if (value == nullptr) return std::nullopt;
  const auto* sub = value->as_table();
  if (sub == nullptr) fail(key, value, fmt::format("expected a table [{}]", path_of(key)));
  return TomlTable(*sub, path_of(key), file());
}

std::vector<TomlTable> TomlTable::tables(std::string_view key) const {
  std::vector<TomlTable> out;
  const auto* value = get(key);
  if (value == nullptr) return out;
  const auto* array = value->as_array();
  if (array == nullptr || !array->is_array_of_tables()) {
    fail(key, value, fmt::format("expected [[{}]] tables (an array of tables)", path_of(key)));
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    out.emplace_back(*(*array)[i].as_table(), fmt::format("{}[{}]", path_of(key), i), file());
  }
  return out;
}

}  // namespace multilane::platform_toml
