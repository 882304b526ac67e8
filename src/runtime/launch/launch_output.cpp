// runtime/launch/launch_output.cpp — tagging the ranks' output lines (see launch_output.hpp).
#include "runtime/launch/launch_output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace multilane::runtime {

namespace {

using Clock = std::chrono::steady_clock;

// Writes all of `text` to `fd`; gives up silently on errors (a closed stdout must not stop
// the launcher from supervising its ranks).
void write_fully(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

TaggedOutput::~TaggedOutput() {
  for (Stream& stream : streams_) {
    if (stream.fd >= 0) ::close(stream.fd);
  }
}

TaggedOutput::ChildEnds TaggedOutput::add_rank(int rank) {
  int ends[2][2];
  for (int i = 0; i < 2; ++i) {
    if (::pipe2(ends[i], O_CLOEXEC) != 0) {
      const int error = errno;
      if (i == 1) {
        ::close(ends[0][0]);
        ::close(ends[0][1]);
      }
      throw std::runtime_error(
          fmt::format("cannot create the output pipes of rank {}: {}", rank, ::strerror(error)));
    }
    ::fcntl(ends[i][0], F_SETFL, O_NONBLOCK);  // the launcher's end
  }
  streams_.push_back({ends[0][0], rank, STDOUT_FILENO, {}});
  streams_.push_back({ends[1][0], rank, STDERR_FILENO, {}});
  return {ends[0][1], ends[1][1]};
}

void TaggedOutput::poll_fds(std::vector<pollfd>& fds) const {
  for (const Stream& stream : streams_) fds.push_back({stream.fd, POLLIN, 0});
}

void TaggedOutput::service(const std::vector<pollfd>& fds, std::size_t first) {
  for (std::size_t i = 0; i < streams_.size() && first + i < fds.size(); ++i) {
    if (fds[first + i].fd >= 0 && fds[first + i].revents != 0) read_some(streams_[i]);
  }
}

void TaggedOutput::finish(std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    std::vector<pollfd> fds;
    poll_fds(fds);
    bool open = false;
    for (const pollfd& p : fds) open = open || p.fd >= 0;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (!open || left <= 0) break;
    if (::poll(fds.data(), fds.size(), static_cast<int>(left)) < 0 && errno != EINTR) break;
    service(fds, 0);
  }
  for (Stream& stream : streams_) {
    if (stream.fd >= 0) close_stream(stream);
  }
}

bool TaggedOutput::read_some(Stream& stream) {
  char buffer[16 * 1024];
  const ssize_t n = ::read(stream.fd, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) {
    close_stream(stream);
    return false;
  }
  stream.partial.append(buffer, static_cast<std::size_t>(n));
  emit_lines(stream, false);
  return true;
}

void TaggedOutput::emit_lines(Stream& stream, bool at_end) {
  const std::string tag = fmt::format("[rank {}] ", stream.rank);
  std::size_t start = 0;
  for (;;) {
    const std::size_t newline = stream.partial.find('\n', start);
    std::size_t length = 0;
    if (newline != std::string::npos && newline - start < kMaxTaggedLine) {
      length = newline - start + 1;
    } else if (stream.partial.size() - start >= kMaxTaggedLine) {
      length = kMaxTaggedLine;
    } else if (at_end && start < stream.partial.size()) {
      length = stream.partial.size() - start;
    } else {
      break;
    }
    std::string line = tag + stream.partial.substr(start, length);
    if (line.back() != '\n') line += '\n';
    write_fully(stream.target, line);
    start += length;
  }
  stream.partial.erase(0, start);
}

void TaggedOutput::close_stream(Stream& stream) {
  emit_lines(stream, true);
  ::close(stream.fd);
  stream.fd = -1;
}

}  // namespace multilane::runtime
