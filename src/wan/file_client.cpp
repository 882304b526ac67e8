// wan/file_client.cpp — the client's side of a copy (see file_client.hpp).
#include "wan/file_client.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <future>
#include <vector>

#include "multilane/errors.hpp"
#include "multilane/units.hpp"
#include "wan/file_hash.hpp"
#include "wan/file_protocol.hpp"
#include "wan/progress.hpp"

namespace multilane::wan {

namespace {

class Source {
 public:
  explicit Source(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw UsageError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    struct stat info {};
    if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
      ::close(fd_);
      throw UsageError(fmt::format("{} is not a regular file", path));
    }
    size_ = static_cast<std::uint64_t>(info.st_size);
  }
  ~Source() { ::close(fd_); }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;
  std::uint64_t size() const { return size_; }
  int fd() const { return fd_; }
  void read(std::span<std::byte> out, std::uint64_t offset) const {
    while (!out.empty()) {
      const ssize_t n = ::pread(fd_, out.data(), out.size(), static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        throw CopyError(ErrorKind::resource,
                        fmt::format("reading {} at offset {} failed: {}", path_, offset,
                                    n == 0 ? "the file became shorter" : std::strerror(errno)));
      }
      out = out.subspan(static_cast<std::size_t>(n));
      offset += static_cast<std::uint64_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

class Conversation {
 public:
  Conversation(const CopyOptions& options, const std::function<void(const CopyProgress&)>& progress)
      : options_(options),
        progress_(progress),
        source_(options.source),
        channels_(options.credentials) {}

  CopyResult run() {
    channels::PathSpec spec{options_.host, options_.port, options_.relay, "", options_.path};
    try {
      path_ = channels_.open(spec);
    } catch (const channels::ChannelError& e) {
      throw CopyError(e.kind(), fmt::format("{}; nothing was copied", e.what()));
    }
    try {
      return converse();
    } catch (const channels::ChannelError& e) {
      throw CopyError(e.kind(),
                      fmt::format("{}; the server holds {} of {} for a resume: run the same "
                                  "command again",
                                  e.what(), approx_size(held_), approx_size(source_.size())));
    }
  }

 private:
  CopyResult converse() {
    const std::string name = std::filesystem::path(options_.source).filename().string();
    channels_.send(path_, encode(CopyRequest{options_.force, source_.size(), options_.block_size,
                                             options_.destination, name}));
    const auto offer = decode_offer(receive_control());
    if (!offer) throw CopyError(ErrorKind::protocol, "the server sent a malformed answer");
    if (!offer->refusal.empty()) {
      // The server's rules refuse what was asked (the file exists, a name it does not take).
      throw CopyError(ErrorKind::usage, "the server refused the copy: " + offer->refusal);
    }
    const std::uint64_t start = resume_point(*offer);
    channels_.send(path_, encode(CopyStart{start}));
    held_ = resumed_ = start;
    progress_({held_, source_.size(), resumed_});
    send_blocks(start);
    channels_.send(path_, encode(CopyFinish{hasher_.digest()}));
    const auto verdict = decode_verdict(receive_control());
    if (!verdict) throw CopyError(ErrorKind::protocol, "the server sent a malformed verdict");
    if (!verdict->error.empty()) {
      throw CopyError(ErrorKind::resource, "the server did not keep the file: " + verdict->error);
    }
    return {source_.size(), start, hasher_.digest()};
  }

  // The offered prefix counts only if its digest matches the same bytes here.
  std::uint64_t resume_point(const CopyOffer& offer) {
    if (offer.have == 0 || offer.have > source_.size()) return 0;
    hash_file_prefix(source_.fd(), offer.have, hasher_, options_.source);
    if (hasher_.digest() == offer.prefix_hash) return offer.have;
    hasher_.reset();
    return 0;
  }

  // Two blocks take turns: while one is sent, a worker thread reads and hashes the next, so
  // the streams are refilled at once (a sender that stops to read lets them run dry).
  void send_blocks(std::uint64_t start) {
    const auto block_size = static_cast<std::size_t>(
        std::min<std::uint64_t>(options_.block_size, source_.size() - start));
    std::array<std::vector<std::byte>, 2> blocks{std::vector<std::byte>(block_size),
                                                 std::vector<std::byte>(block_size)};
    auto load = [this, block_size, &blocks](int turn, std::uint64_t offset) {
      const auto n =
          static_cast<std::size_t>(std::min<std::uint64_t>(block_size, source_.size() - offset));
      const std::span<std::byte> data(blocks[turn].data(), n);
      source_.read(data, offset);
      hasher_.update(data);
      return data;
    };
    std::future<std::span<std::byte>> next;
    if (start < source_.size()) next = std::async(std::launch::async, load, 0, start);
    int unacknowledged = 0;
    for (std::uint64_t offset = start; offset < source_.size();) {
      const std::span<std::byte> data = next.get();
      offset += data.size();
      if (offset < source_.size()) {
        const int turn = data.data() == blocks[0].data() ? 1 : 0;
        next = std::async(std::launch::async, load, turn, offset);
      }
      channels_.send(path_, data);
      if (++unacknowledged >= kCopyWindow) {
        take_ack();
        --unacknowledged;
      }
    }
    for (; unacknowledged > 0; --unacknowledged) take_ack();
  }

  void take_ack() {
    const auto ack = decode_ack(receive_control());
    if (!ack) throw CopyError(ErrorKind::protocol, "the server sent a malformed acknowledgement");
    if (!ack->error.empty())
      throw CopyError(ErrorKind::resource, "the server failed: " + ack->error);
    held_ = ack->held;
    progress_({held_, source_.size(), resumed_});
  }

  std::vector<std::byte> receive_control() {
    std::vector<std::byte> buffer(kControlLimit);
    channels::Incoming in{path_, buffer, true};
    channels_.precv({&in, 1});
    buffer.resize(in.received);
    return buffer;
  }

  const CopyOptions& options_;
  const std::function<void(const CopyProgress&)>& progress_;
  Source source_;
  channels::Channels channels_;
  channels::PathId path_ = 0;
  FileHasher hasher_;
  std::uint64_t held_ = 0;
  std::uint64_t resumed_ = 0;
};

}  // namespace

CopyResult copy_file(const CopyOptions& options,
                     const std::function<void(const CopyProgress&)>& progress) {
  if (options.block_size < 4096 || options.block_size > (64u << 20)) {
    throw UsageError(fmt::format("block size must be 4 KiB..64 MiB, got {}", options.block_size));
  }
  Conversation conversation(options, progress);
  return conversation.run();
}

}  // namespace multilane::wan
