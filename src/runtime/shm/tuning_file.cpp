// runtime/shm/tuning_file.cpp — see tuning_file.hpp.
#include "runtime/shm/tuning_file.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>

#include "multilane/errors.hpp"
#include "runtime/shm/layout.hpp"

namespace multilane::runtime::shm {

namespace {

[[noreturn]] void fail(const std::string& path, const toml::node* at, std::string_view key,
                       std::string_view reason) {
  const int line = at ? static_cast<int>(at->source().begin.line) : 0;
  throw UsageError(fmt::format("{}:{}: {}: {}", path, line, key, reason));
}

std::int64_t integer(const std::string& path, const toml::table& t, std::string_view key,
                     std::int64_t low, std::int64_t high) {
  const toml::node* node = t.get(key);
  if (!node) fail(path, &t, key, "missing");
  const auto value = node->value<std::int64_t>();
  if (!value) fail(path, node, key, "must be an integer");
  if (*value < low || *value > high) {
    fail(path, node, key, fmt::format("{} is outside {}..{}", *value, low, high));
  }
  return *value;
}

TuningEntry entry_of(const std::string& path, const toml::table& t) {
  TuningEntry e;
  const toml::node* name = t.get("collective");
  if (!name) fail(path, &t, "collective", "missing");
  const auto text = name->value<std::string>();
  const auto collective = text ? parse_collective(*text) : std::nullopt;
  // Only the collectives with a shared-memory group call are tuned here.
  if (!collective || is_reduction(*collective)) {
    fail(path, name, "collective", "must be bcast, scatter, gather, allgather or alltoall");
  }
  e.collective = *collective;
  e.max_size = static_cast<std::uint64_t>(integer(path, t, "max_size", 0, INT64_MAX));
  e.tuning.buffer_size =
      static_cast<std::uint64_t>(integer(path, t, "buffer_size", 64, std::int64_t{1} << 30));
  e.tuning.pipeline_buffers =
      static_cast<int>(integer(path, t, "pipeline_buffers", 1, kMaxPipelineBuffers));
  if (const toml::node* copies = t.get("copies")) {  // optional: auto when absent
    const auto text = copies->value<std::string>();
    const auto mode = text ? parse_copy_mode(*text) : std::nullopt;
    if (!mode) fail(path, copies, "copies", "must be \"auto\", \"once\" or \"twice\"");
    e.tuning.copies = *mode;
  }
  return e;
}

}  // namespace

std::optional<ShmTuning> TuningTable::find(Collective collective, std::uint64_t size) const {
  const TuningEntry* best = nullptr;
  const TuningEntry* largest = nullptr;
  for (const TuningEntry& e : entries) {
    if (e.collective != collective) continue;
    if (!largest || e.max_size > largest->max_size) largest = &e;
    if (e.max_size >= size && (!best || e.max_size < best->max_size)) best = &e;
  }
  if (!best) best = largest;
  if (!best) return std::nullopt;
  return best->tuning;
}

std::uint64_t TuningTable::capacity() const {
  std::uint64_t bytes = 0;
  for (const TuningEntry& e : entries) {
    const Geometry g{e.tuning.buffer_size, static_cast<std::uint32_t>(e.tuning.pipeline_buffers)};
    bytes = std::max(bytes, data_bytes(g));
  }
  return bytes;
}

std::uint64_t TuningTable::capacity_with(const ShmTuning& group_tuning) const {
  const Geometry own{group_tuning.buffer_size,
                     static_cast<std::uint32_t>(group_tuning.pipeline_buffers)};
  return std::max(data_bytes(own), capacity());
}

TuningTable read_tuning_file(const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    if (e.source().begin.line == 0) throw UsageError(fmt::format("{}: cannot open", path));
    throw UsageError(fmt::format("{}:{}: {}", path, e.source().begin.line, e.description()));
  }
  TuningTable table;
  const toml::node* shm = doc.get("shm");
  if (!shm) return table;
  const toml::array* list = shm->as_array();
  if (!list) fail(path, shm, "shm", "must be an array of tables ([[shm]])");
  for (const toml::node& item : *list) {
    const toml::table* t = item.as_table();
    if (!t) fail(path, &item, "shm", "must be an array of tables ([[shm]])");
    table.entries.push_back(entry_of(path, *t));
  }
  return table;
}

std::string tuning_to_toml(const TuningTable& table, const std::string& comment) {
  std::string text = fmt::format("# {}\n", comment);
  for (const TuningEntry& e : table.entries) {
    text += fmt::format(
        "\n[[shm]]\ncollective = \"{}\"\nmax_size = {}\nbuffer_size = {}\npipeline_buffers = {}\n",
        to_string(e.collective), e.max_size, e.tuning.buffer_size, e.tuning.pipeline_buffers);
    if (e.tuning.copies != CopyMode::Auto) {
      text += fmt::format("copies = \"{}\"\n", to_string(e.tuning.copies));
    }
  }
  return text;
}

}  // namespace multilane::runtime::shm
