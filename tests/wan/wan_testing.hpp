// tests/wan/wan_testing.hpp — helpers for the WAN layer's tests, all on 127.0.0.1.
//
// Every helper is bounded in time (channels' own timeouts, subprocess deadlines) and joins
// or reaps what it started, so a failing test cannot hang or leak processes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "multilane/channels.hpp"
#include "support/loopback_port.hpp"

namespace multilane::wan::testing {

using namespace std::chrono_literals;

inline constexpr const char* kSecret = "the wan tests' job secret";
inline constexpr std::uint64_t kJob = 4242;

inline channels::Credentials credentials() {
  return {kJob, kSecret};
}

// Bytes whose value depends on the position and the seed, so misplaced chunks show.
inline std::vector<std::byte> pattern(std::size_t size, unsigned seed = 7) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<std::byte>((i * 131 + seed * 17 + (i >> 9)) & 0xff);
  }
  return bytes;
}

inline channels::PathOptions options(int streams) {
  channels::PathOptions o;
  o.streams = streams;
  o.timeout = 10s;
  o.chunk_size = 64 * 1024;  // several chunks per stream for messages of a few hundred KiB
  return o;
}

// A listening path on 127.0.0.1 (any port).
inline channels::PathSpec listening(const channels::PathOptions& o) {
  channels::PathSpec spec;
  spec.bind_address = "127.0.0.1";
  spec.options = o;
  return spec;
}

inline channels::PathSpec connecting(std::uint16_t port, const channels::PathOptions& o) {
  channels::PathSpec spec;
  spec.host = "127.0.0.1";
  spec.port = port;
  spec.options = o;
  return spec;
}

template <typename Fn>
auto in_background(Fn fn) {
  return std::async(std::launch::async, std::move(fn));
}

inline std::span<const std::byte> bytes(const std::vector<std::byte>& v) {
  return v;
}
inline std::span<std::byte> bytes(std::vector<std::byte>& v) {
  return v;
}

// Process output and status of a finished (or killed) subprocess.
struct Finished {
  int status = -1;     // exit status; -1 when killed at the deadline or by a signal
  std::string output;  // stdout and stderr
  bool timed_out = false;
};

// Starts `argv` with extra environment variables; its output goes to a temporary file.
class Subprocess {
 public:
  Subprocess(std::vector<std::string> argv, std::vector<std::string> environment = {});
  ~Subprocess();  // kills and reaps a process still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  // Waits until it exits or `limit` passes (then kills it).
  Finished wait(std::chrono::milliseconds limit = 20s);
  void signal(int number);
  int pid() const { return pid_; }
  std::string output_so_far() const;

 private:
  int pid_ = -1;
  std::string output_file_;
  bool reaped_ = false;
};

// The port of the line "<what> on 127.0.0.1:<port>" in the output of `process`, once it
// printed it (waits up to 10 s); 0 if it did not.
std::uint16_t listening_port(const Subprocess& process, const std::string& what);

// The directory of built programs (the build tree).
std::string binary_dir();
// A fresh empty directory under the build tree, removed by the caller.
std::string scratch_dir(const std::string& name);

}  // namespace multilane::wan::testing
