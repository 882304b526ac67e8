// runtime/launch/launch_output.hpp — the ranks' output, one line at a time, tagged "[rank N] ".
//
// With `multilane launch --tag-output` every rank writes into two pipes (stdout, stderr) that
// the launcher reads; each complete line goes to the launcher's own stdout or stderr prefixed
// with "[rank N] ", in one write(2), so lines of different ranks never mix. A line longer than
// kMaxTaggedLine is cut into pieces of that size; a last line without newline gets one when
// the pipe closes. Reading never blocks: the supervisor polls the descriptors (poll_fds()) and
// calls service() with poll's answer.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace multilane::runtime {

inline constexpr std::size_t kMaxTaggedLine = 64 * 1024;

class TaggedOutput {
 public:
  TaggedOutput() = default;
  TaggedOutput(const TaggedOutput&) = delete;
  TaggedOutput& operator=(const TaggedOutput&) = delete;
  ~TaggedOutput();

  struct ChildEnds {
    int stdout_fd;
    int stderr_fd;
  };
  // Two pipes for `rank`; returns the ends the child writes to, which the caller closes once
  // the child started. Throws std::runtime_error when pipes cannot be made.
  ChildEnds add_rank(int rank);

  // Appends a pollfd for every pipe still open; service() takes the same vector back, with
  // `first` the index of the first one appended.
  void poll_fds(std::vector<pollfd>& fds) const;
  void service(const std::vector<pollfd>& fds, std::size_t first);
  // Reads what is left until every pipe is closed or `limit` passed, then closes them all.
  void finish(std::chrono::milliseconds limit);

 private:
  struct Stream {
    int fd = -1;
    int rank = 0;
    int target = 1;       // the launcher's descriptor: 1 stdout, 2 stderr
    std::string partial;  // bytes after the last newline
  };
  // Reads once; false when the pipe closed (it is then flushed and closed).
  bool read_some(Stream& stream);
  void emit_lines(Stream& stream, bool at_end);
  void close_stream(Stream& stream);

  std::vector<Stream> streams_;
};

}  // namespace multilane::runtime
