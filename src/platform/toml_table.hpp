// platform/toml_table.hpp — typed, checked access to one table of a TOML file (private).
//
// A TomlTable wraps a toml++ table with the file name and the dotted path that error messages
// use ("site[1].node[0].lanes"). Every accessor either returns a value of the right type and
// range or throws PlatformError `FILE:LINE: key: reason`, where LINE is the line of the
// offending value, or of the table itself when a required key is missing. Quantities are
// strings with units and go through the units parser, whose message becomes the reason.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace multilane::platform_toml {

// Throws PlatformError "FILE:LINE: KEY: REASON".
[[noreturn]] void fail_at(const std::string& file, int line, std::string_view key,
                          std::string_view reason);

int line_of(const toml::node& node);

class TomlTable {
 public:
  TomlTable(const toml::table& table, std::string path, const std::string& file)
      : table_(&table), path_(std::move(path)), file_(&file) {}

  int line() const { return line_of(*table_); }
  const std::string& file() const { return *file_; }
  // "site[0].lanes" for key "lanes"; `key` may carry an index suffix, like "nodes[3]".
  std::string path_of(std::string_view key) const;

  // The error for `key`, reported at `where` (or at this table's line when null).
  [[noreturn]] void fail(std::string_view key, const toml::node* where,
                         std::string_view reason) const;
  [[noreturn]] void fail_missing(std::string_view key, std::string_view hint) const;

  // Rejects the first key (in file order) that is not in `allowed`, listing the allowed ones.
  void allow_only(std::initializer_list<std::string_view> allowed) const;

  const toml::node* get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key) != nullptr; }

  std::optional<std::string> string(std::string_view key) const;
  std::string required_string(std::string_view key) const;
  std::optional<int> integer(std::string_view key, int min, int max) const;
  std::optional<double> duration(std::string_view key) const;     // seconds, >= 0
  std::optional<double> bandwidth(std::string_view key) const;    // bytes/s, > 0
  std::optional<std::uint64_t> size(std::string_view key) const;  // bytes, > 0

  // A sub-table ([defaults]) or the tables of an array of tables ([[site]]), with their paths.
  std::optional<TomlTable> table(std::string_view key) const;
  std::vector<TomlTable> tables(std::string_view key) const;

 private:
  const toml::table* table_;
  std::string path_;
  const std::string* file_;
};

// Helpers shared by the accessors and by readers of array elements.
int checked_integer(const TomlTable& at, std::string_view key, const toml::node& value, int min,
                    int max);
double checked_bandwidth(const TomlTable& at, std::string_view key, const toml::node& value);
std::string checked_string(const TomlTable& at, std::string_view key, const toml::node& value);

}  // namespace multilane::platform_toml
