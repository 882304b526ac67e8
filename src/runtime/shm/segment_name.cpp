#include "runtime/shm/segment_name.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <charconv>
#include <memory>

#include "runtime/shm/process_alive.hpp"

namespace multilane::runtime::shm {
namespace {

constexpr std::string_view kPrefix = "multilane-";

// Reads one '-'-terminated (or final) field of `text` as a number in `base`, advancing `text`.
template <typename Number>
bool take_field(std::string_view& text, int base, bool last, Number& out) {
  const auto end = last ? text.size() : text.find('-');
  if (end == std::string_view::npos || end == 0) return false;
  const auto field = text.substr(0, end);
  const auto [rest, error] = std::from_chars(field.data(), field.data() + field.size(), out, base);
  if (error != std::errc() || rest != field.data() + field.size()) return false;
  text.remove_prefix(last ? end : end + 1);
  return true;
}

}  // namespace

std::string SegmentName::text() const {
  return fmt::format("/{}{:016x}-{}-{}-{}", kPrefix, job_id, node_id, instance, creator);
}

std::optional<SegmentName> SegmentName::parse(std::string_view entry) {
  if (!entry.starts_with(kPrefix)) return std::nullopt;
  entry.remove_prefix(kPrefix.size());
  SegmentName name;
  if (entry.size() < 17 || entry[16] != '-') return std::nullopt;  // 16 hex digits, then '-'
  if (!take_field(entry, 16, false, name.job_id) || !take_field(entry, 10, false, name.node_id) ||
      !take_field(entry, 10, false, name.instance) || !take_field(entry, 10, true, name.creator) ||
      name.creator <= 0) {
    return std::nullopt;
  }
  return name;
}

std::vector<SegmentName> list_segments(std::optional<std::uint64_t> job_id,
                                       std::optional<std::uint32_t> node_id) {
  std::vector<SegmentName> names;
  const std::unique_ptr<DIR, int (*)(DIR*)> directory(opendir(kShmDirectory), closedir);
  if (!directory) return names;
  while (const dirent* entry = readdir(directory.get())) {
    const auto name = SegmentName::parse(entry->d_name);
    if (!name || (job_id && name->job_id != *job_id) || (node_id && name->node_id != *node_id)) {
      continue;
    }
    names.push_back(*name);
  }
  return names;
}

bool remove_segment(const SegmentName& name) {
  return shm_unlink(name.text().c_str()) == 0;
}

int remove_own_segments() {
  int removed = 0;
  for (const SegmentName& name : list_segments()) {
    if (name.creator == getpid() && remove_segment(name)) ++removed;
  }
  return removed;
}

std::vector<SegmentName> remove_stale_segments(std::optional<std::uint64_t> job_id) {
  std::vector<SegmentName> removed;
  for (const SegmentName& name : list_segments(job_id)) {
    if (process_alive(name.creator)) continue;
    if (remove_segment(name)) removed.push_back(name);
  }
  return removed;
}

}  // namespace multilane::runtime::shm
