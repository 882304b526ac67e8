// wan/progress.cpp — progress lines of `multilane cp` (see progress.hpp).
#include "wan/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "multilane/units.hpp"

namespace multilane::wan {

namespace {
int percent(const ProgressSample& s) {
  if (s.total == 0) return 100;
  return static_cast<int>(std::min<std::uint64_t>(100, s.done * 100 / s.total));
}
}  // namespace

std::string approx_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.3g} {}", value, kUnits[unit]);
}

std::string eta_text(const ProgressSample& s) {
  if (s.done >= s.total) return "0:00";
  if (s.rate <= 0) return "?";
  const auto left =
      static_cast<long long>(std::ceil(static_cast<double>(s.total - s.done) / s.rate));
  if (left >= 3600) return fmt::format("{}:{:02}:{:02}", left / 3600, left / 60 % 60, left % 60);
  return fmt::format("{}:{:02}", left / 60, left % 60);
}

std::string bar_line(const std::string& name, const ProgressSample& s, int bar_width) {
  const int filled = percent(s) * bar_width / 100;
  std::string bar(static_cast<std::size_t>(bar_width), ' ');
  for (int i = 0; i < filled; ++i) bar[static_cast<std::size_t>(i)] = '=';
  if (filled < bar_width) bar[static_cast<std::size_t>(filled)] = '>';
  return fmt::format("{} {:3}% [{}] {} / {}  {}  ETA {}", name, percent(s), bar,
                     approx_size(s.done), approx_size(s.total), format_bandwidth(s.rate),
                     eta_text(s));
}

std::string plain_line(const std::string& name, const ProgressSample& s) {
  return fmt::format("{}: {} of {} ({}%), {}, {} left", name, approx_size(s.done),
                     approx_size(s.total), percent(s), format_bandwidth(s.rate), eta_text(s));
}

ProgressView::ProgressView(std::string name, std::FILE* out, bool terminal,
                           std::chrono::milliseconds period)
    : name_(std::move(name)), out_(out), terminal_(terminal), period_(period) {}

void ProgressView::start(std::uint64_t already_done, std::uint64_t total) {
  started_ = std::chrono::steady_clock::now();
  first_ = done_ = already_done;
  total_ = total;
}

ProgressSample ProgressView::sample(std::uint64_t done) const {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double rate = seconds > 0 ? static_cast<double>(done - first_) / seconds : 0;
  return {done, total_, rate, seconds};
}

void ProgressView::update(std::uint64_t done) {
  done_ = done;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_drawn_ < (terminal_ ? std::chrono::milliseconds(100) : period_)) return;
  draw(sample(done));
  last_drawn_ = now;
  drawn_ = true;
}

void ProgressView::finish() {
  draw(sample(done_));
  if (terminal_) std::fputc('\n', out_);
  std::fflush(out_);
}

void ProgressView::draw(const ProgressSample& s) {
  if (terminal_) {
    fmt::print(out_, "\r{}\033[K", bar_line(name_, s));
  } else {
    fmt::print(out_, "{}\n", plain_line(name_, s));
  }
  std::fflush(out_);
}

}  // namespace multilane::wan
