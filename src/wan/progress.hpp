// wan/progress.hpp — how `multilane cp` shows a transfer's progress.
//
// On a terminal one line is redrawn in place ("\r"): name, percentage, a bar, bytes, rate and
// the estimated time left. Elsewhere (a log, a pipe) a plain line is printed at most once per
// `period` and at the end. The rate counts only the bytes moved by this run (not those a
// resumed copy already had), over the time since the first update.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace multilane::wan {

// A size for people, three significant digits: "1.5 GiB", "512 KiB", "17 B".
std::string approx_size(std::uint64_t bytes);

struct ProgressSample {
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  double rate = 0;     // bytes/s
  double seconds = 0;  // elapsed
};

// "data.bin  45% [=============>                 ] 460 MiB / 1 GiB  1.2 Gbit/s  ETA 0:05"
std::string bar_line(const std::string& name, const ProgressSample& sample, int bar_width = 30);
// "data.bin: 460 MiB of 1 GiB (45%), 1.2 Gbit/s, 5 s left"
std::string plain_line(const std::string& name, const ProgressSample& sample);
// "0:05", "1:02:03", "?" (no rate yet)
std::string eta_text(const ProgressSample& sample);

class ProgressView {
 public:
  ProgressView(std::string name, std::FILE* out, bool terminal,
               std::chrono::milliseconds period = std::chrono::seconds(1));
  void start(std::uint64_t already_done, std::uint64_t total);
  void update(std::uint64_t done);
  void finish();  // the last state, and a newline on a terminal

 private:
  ProgressSample sample(std::uint64_t done) const;
  void draw(const ProgressSample& s);

  std::string name_;
  std::FILE* out_;
  bool terminal_;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_drawn_;
  std::uint64_t first_ = 0;
  std::uint64_t total_ = 0;
  std::uint64_t done_ = 0;
  bool drawn_ = false;
};

}  // namespace multilane::wan
