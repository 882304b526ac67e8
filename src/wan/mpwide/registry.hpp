// wan/mpwide/registry.hpp — the drop-in's process-wide tables: channel numbers and paths.
//
// MPWide numbers every stream of the process: MPW_Init's channels and the streams of paths
// take the next free run of numbers, and calls name channels by those numbers. Here a number
// (a slot) refers either to one MPW_Init channel, a one-stream path of the process's Channels
// object, or to one stream of a path, a DuplexPath of its own (so one thread can send on a
// path while another receives). The tables are guarded by one mutex and hold no lock during
// communication; a call keeps the path it uses alive (shared_ptr) even if another thread
// destroys the path meanwhile.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "multilane/channels.hpp"
#include "wan/duplex_path.hpp"

namespace multilane::wan::mpwide {

struct Tunables {
  int chunk_send = 8192;  // MPWide's defaults, kept for MPW_Print only
  int chunk_recv = 8192;
  double pacing_rate = 0;  // bytes/s per stream of paths set up later; 0: unpaced
  bool autotuning = true;
  std::optional<std::chrono::milliseconds> timeout;  // MPW_setTimeout's, if called
};

// The longest wait without progress for what is set up now: MPW_setTimeout's, else
// MULTILANE_TIMEOUT's (seconds, so an unchanged program that waits long between exchanges can
// say so), else 60 s. Throws UsageError naming a malformed MULTILANE_TIMEOUT.
std::chrono::milliseconds timeout_of(const Tunables& tunables);

struct Path {
  std::string host;
  int port = 0;
  int streams = 1;
  int first_channel = 0;
  int window = 0;                    // SO_SNDBUF/SO_RCVBUF when it connects; 0: the system's
  std::mutex connecting;             // one MPW_ConnectPath at a time
  std::shared_ptr<DuplexPath> link;  // once connected (guarded by State::mutex)
};

// The channels of one MPW_Init call: a Channels object serves one call at a time.
struct ChannelGroup {
  std::mutex calls;
  std::unique_ptr<channels::Channels> channels;
};

enum class SlotKind { Free, Channel, PathStream };

struct Slot {
  SlotKind kind = SlotKind::Free;
  int index = -1;                       // the Channels path (Channel) or the path id (PathStream)
  std::shared_ptr<ChannelGroup> group;  // Channel: its MPW_Init's channels, null until set up
  std::string host;
  int port = 0;
};

struct State {
  std::mutex mutex;  // the tables below
  std::vector<Slot> slots;
  std::vector<std::shared_ptr<Path>> paths;  // null: a free id
  Tunables tunables;
};

State& state();

// Looked up at the first call that needs them; throws UsageError saying what to set.
channels::Credentials credentials();

// The first of `count` consecutive free channel numbers, now taken (State::mutex held).
int reserve_slots(State& s, int count);
// Frees them (State::mutex held).
void free_slots(State& s, int first, int count);

// What a list of channel numbers refers to: one whole path, or MPW_Init channels.
struct Target {
  std::shared_ptr<Path> path;  // set: every stream of this path, in order
  int path_id = -1;
  std::shared_ptr<ChannelGroup> group;  // else: MPW_Init channels of one call,
  std::vector<int> channel_paths;       // the Channels path of each listed channel
};
// Throws UsageError naming the channel at fault.
Target target_of(const int* list, int count);

// What one channel number belongs to: its MPW_Init channel, or its whole path.
Target owner_of(int channel);

// The path with this id; throws UsageError when there is none.
std::shared_ptr<Path> path_of(int path_id);
// Its connection; throws UsageError when it is not connected.
std::shared_ptr<DuplexPath> link_of(const Path& path, int path_id);

// The calling thread's last failure text (MPW_LastError).
std::string& last_error();

// Runs one call: its result, or `failed` after printing "<call>: <reason>" to stderr.
template <typename Fn>
auto reported(const char* call, Fn fn, decltype(fn()) failed) -> decltype(fn()) {
  try {
    last_error().clear();
    return fn();
  } catch (const std::exception& e) {
    last_error() = e.what();
  } catch (...) {
    last_error() = "unknown failure";
  }
  std::cerr << call << ": " << last_error() << std::endl;
  return failed;
}

// Runs a communication call declared void: on failure prints the reason and ends the
// process with status 1, as MPWide does on a send or receive error.
void or_exit(const char* call, const std::function<void()>& fn);

}  // namespace multilane::wan::mpwide
