// wan/mpwide/registry.cpp — channel numbers, paths and failure reporting (registry.hpp).
#include "wan/mpwide/registry.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "multilane/errors.hpp"
#include "runtime/launch/job_env.hpp"
#include "wan/mpwide/job_secret.hpp"

namespace multilane::wan::mpwide {

State& state() {
  static State s;
  return s;
}

channels::Credentials credentials() {
  // Read again at every connecting call: a program may set the variable between calls.
  return find_credentials();
}

std::chrono::milliseconds timeout_of(const Tunables& tunables) {
  if (tunables.timeout) return *tunables.timeout;
  const char* text = std::getenv("MULTILANE_TIMEOUT");
  if (text == nullptr || *text == '\0') return std::chrono::milliseconds{60'000};
  try {
    return runtime::parse_timeout_seconds(text);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("MULTILANE_TIMEOUT={}: {}", text, e.what()));
  }
}

int reserve_slots(State& s, int count) {
  int run = 0;
  for (int i = 0; i < static_cast<int>(s.slots.size()); ++i) {
    run = s.slots[i].kind == SlotKind::Free ? run + 1 : 0;
    if (run == count) return i + 1 - count;
  }
  const int first = static_cast<int>(s.slots.size()) - run;
  s.slots.resize(static_cast<std::size_t>(first + count));
  return first;
}

void free_slots(State& s, int first, int count) {
  for (int i = first; i < first + count; ++i) s.slots[static_cast<std::size_t>(i)] = {};
  while (!s.slots.empty() && s.slots.back().kind == SlotKind::Free) s.slots.pop_back();
}

namespace {

const Slot& slot_of(State& s, int channel) {
  if (channel < 0 || channel >= static_cast<int>(s.slots.size()) ||
      s.slots[static_cast<std::size_t>(channel)].kind == SlotKind::Free) {
    throw UsageError(s.slots.empty()
                         ? fmt::format("channel {} does not exist (no channels yet)", channel)
                         : fmt::format("channel {} does not exist (channels 0..{})", channel,
                                       s.slots.size() - 1));
  }
  const Slot& slot = s.slots[static_cast<std::size_t>(channel)];
  if (slot.kind == SlotKind::Channel && !slot.group) {
    throw UsageError(fmt::format("channel {} is still being set up by MPW_Init", channel));
  }
  return slot;
}

}  // namespace

Target target_of(const int* list, int count) {
  if (list == nullptr || count < 1) {
    throw UsageError(fmt::format("needs at least one channel, got {}{}", count,
                                 list == nullptr ? " (the channel list is NULL)" : ""));
  }
  State& s = state();
  std::lock_guard lock(s.mutex);
  const Slot& first = slot_of(s, list[0]);
  Target target;
  if (first.kind == SlotKind::PathStream) {
    auto path = s.paths[static_cast<std::size_t>(first.index)];
    bool whole = count == path->streams;
    for (int i = 0; whole && i < count; ++i) whole = list[i] == path->first_channel + i;
    if (!whole) {
      throw UsageError(fmt::format(
          "channel {} is a stream of path {} (channels {}..{}): a call on a path's streams "
          "takes all of them, in order",
          list[0], first.index, path->first_channel, path->first_channel + path->streams - 1));
    }
    target.path = std::move(path);
    target.path_id = first.index;
    return target;
  }
  for (int i = 0; i < count; ++i) {
    const Slot& slot = slot_of(s, list[i]);
    if (slot.kind != SlotKind::Channel) {
      throw UsageError(fmt::format(
          "channel {} is a stream of path {}: a call takes either MPW_Init channels or the "
          "streams of one path",
          list[i], slot.index));
    }
    if (!target.group) target.group = slot.group;
    if (slot.group != target.group) {
      throw UsageError(fmt::format(
          "channels {} and {} were opened by different MPW_Init calls: the channels of one "
          "call must come from one MPW_Init",
          list[0], list[i]));
    }
    target.channel_paths.push_back(slot.index);
  }
  return target;
}

Target owner_of(int channel) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const Slot& slot = slot_of(s, channel);
  Target target;
  if (slot.kind == SlotKind::PathStream) {
    target.path = s.paths[static_cast<std::size_t>(slot.index)];
    target.path_id = slot.index;
  } else {
    target.group = slot.group;
    target.channel_paths.push_back(slot.index);
  }
  return target;
}

std::shared_ptr<Path> path_of(int path_id) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (path_id < 0 || path_id >= static_cast<int>(s.paths.size()) ||
      !s.paths[static_cast<std::size_t>(path_id)]) {
    throw UsageError(fmt::format("path {} does not exist", path_id));
  }
  return s.paths[static_cast<std::size_t>(path_id)];
}

std::shared_ptr<DuplexPath> link_of(const Path& path, int path_id) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!path.link) {
    throw UsageError(fmt::format("path {} is not connected (MPW_ConnectPath first)", path_id));
  }
  return path.link;
}

std::string& last_error() {
  thread_local std::string text;
  return text;
}

void or_exit(const char* call, const std::function<void()>& fn) {
  const int failed = reported(
      call,
      [&] {
        fn();
        return 0;
      },
      -1);
  if (failed != 0) std::exit(EXIT_FAILURE);
}

}  // namespace multilane::wan::mpwide
