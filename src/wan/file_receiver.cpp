// wan/file_receiver.cpp — the server's side of a copy (see file_receiver.hpp).
#include "wan/file_receiver.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "multilane/units.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "wan/file_destination.hpp"
#include "wan/file_hash.hpp"
#include "wan/file_protocol.hpp"
#include "wan/progress.hpp"

namespace multilane::wan {

namespace fs = std::filesystem;

bool CopyRegistry::claim(const fs::path& path) {
  std::lock_guard lock(mutex_);
  return busy_.insert(path).second;
}

void CopyRegistry::release(const fs::path& path) {
  std::lock_guard lock(mutex_);
  busy_.erase(path);
}

namespace {

// A failure of the conversation itself (malformed message), as opposed to the transport's.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::vector<std::byte> receive_control(runtime::StreamSet& set) {
  std::vector<std::byte> buffer(kControlLimit);
  buffer.resize(set.recv_up_to(buffer));
  return buffer;
}

template <typename Message>
void send_control(runtime::StreamSet& set, const Message& message) {
  set.send(encode(message));
}

// Writes all of `bytes` at `offset`; the error text, or "" on success.
std::string write_at(int fd, std::span<const std::byte> bytes, std::uint64_t offset) {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? std::strerror(errno) : "nothing was written";
    bytes = bytes.subspan(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
  return {};
}

// Starts writing the bytes to the disk now (without waiting), so that the sync at the end
// finds little left to write and the dirty pages of a large copy stay few.
void start_writeback(int fd, std::uint64_t offset, std::size_t length) {
  ::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(length),
                    SYNC_FILE_RANGE_WRITE);
}

class Session {
 public:
  Session(runtime::StreamSet& set, const fs::path& root, CopyRegistry& registry)
      : set_(set), root_(root), registry_(registry) {}
  ~Session() {
    if (claimed_) registry_.release(destination_.final_path);
  }

  ReceiveOutcome run() {
    const auto request = decode_request(receive_control(set_));
    if (!request) {
      send_control(set_, CopyOffer{"malformed copy request"});
      return {false, fmt::format("refused a copy from {}: malformed request", set_.peer())};
    }
    request_ = *request;
    try {
      prepare();
    } catch (const CopyRefused& e) {
      send_control(set_, CopyOffer{e.what()});
      return {false, fmt::format("refused a copy of {} from {}: {}", request_.name, set_.peer(),
                                 e.what())};
    }
    return transfer();
  }

 private:
  void prepare() {
    if (request_.block_size < kMinBlock || request_.block_size > kMaxBlock) {
      throw CopyRefused(fmt::format("block size {} is not {}..{}", request_.block_size,
                                    approx_size(kMinBlock), approx_size(kMaxBlock)));
    }
    destination_ = resolve_destination(root_, request_);
    if (!registry_.claim(destination_.final_path)) {
      throw CopyRefused(fmt::format("a copy to {} is already in progress", destination_.shown));
    }
    claimed_ = true;
    const int fd =
        ::open(destination_.part_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw CopyRefused(fmt::format("cannot open {}{}: {}", destination_.shown, kPartSuffix,
                                    std::strerror(errno)));
    }
    part_ = std::make_unique<Descriptor>(fd);
    struct stat info {};
    ::fstat(fd, &info);
    have_ = static_cast<std::uint64_t>(info.st_size);
    if (have_ > request_.size) have_ = 0;  // another file: start over
    try {
      hash_file_prefix(fd, have_, hasher_, destination_.shown + kPartSuffix);
    } catch (const std::runtime_error& e) {
      throw CopyRefused(e.what());
    }
  }

  ReceiveOutcome transfer() {
    std::uint64_t held = 0;
    try {
      send_control(set_, CopyOffer{"", have_, hasher_.digest()});
      const auto start = decode_start(receive_control(set_));
      if (!start || (start->offset != 0 && start->offset != have_)) {
        throw ProtocolError("malformed start");
      }
      held = start->offset;
      if (held == 0) hasher_.reset();
      if (::ftruncate(part_->get(), static_cast<off_t>(held)) != 0) {
        const std::string error = fmt::format("truncating {}{} failed: {}", destination_.shown,
                                              kPartSuffix, std::strerror(errno));
        send_control(set_, CopyAck{held, error});
        return {false, error};
      }
      if (auto failed = receive_blocks(held)) return *failed;
      return finish(held);
    } catch (const runtime::TransportError& e) {
      return {false, interrupted(held, e.what())};
    } catch (const ProtocolError& e) {
      return {false, interrupted(held, e.what())};
    }
  }

  // Returns an outcome when writing failed (the client was told), nothing when all arrived.
  // Two blocks take turns: while one is received, a worker thread writes and hashes the other,
  // so the streams keep being read while the disk works (a reader that stops closes the TCP
  // windows). A block is acknowledged once it is written, one block later than it arrived.
  std::optional<ReceiveOutcome> receive_blocks(std::uint64_t& held) {
    const auto block_size = static_cast<std::size_t>(
        std::min<std::uint64_t>(request_.block_size, request_.size - held));
    std::array<std::vector<std::byte>, 2> blocks{std::vector<std::byte>(block_size),
                                                 std::vector<std::byte>(block_size)};
    std::future<std::string> storing;  // the block the worker writes and hashes, if any
    std::uint64_t received = held;
    for (int turn = 0; received < request_.size; turn ^= 1) {
      const auto n =
          static_cast<std::size_t>(std::min<std::uint64_t>(block_size, request_.size - received));
      const std::span<std::byte> data(blocks[turn].data(), n);
      set_.recv(data);
      if (auto failed = settle(storing, held, received, blocks[turn])) return failed;
      storing = std::async(std::launch::async, [this, data, offset = received] {
        std::string error = write_at(part_->get(), data, offset);
        if (error.empty()) {
          start_writeback(part_->get(), offset, data.size());
          hasher_.update(data);
        }
        return error;
      });
      received += n;
    }
    return settle(storing, held, received, blocks[0]);
  }

  // Waits for the block being stored, which ends at `stored_end`, and acknowledges it; on a
  // write error tells the client, takes what it still sends (into `scratch`) and returns the
  // outcome.
  std::optional<ReceiveOutcome> settle(std::future<std::string>& storing, std::uint64_t& held,
                                       std::uint64_t stored_end, std::vector<std::byte>& scratch) {
    if (!storing.valid()) return std::nullopt;
    if (const std::string error = storing.get(); !error.empty()) {
      const std::string text = fmt::format(
          "writing {}{} at offset {} failed: {} (the partial file is kept: {} held "
          "for a resume)",
          destination_.shown, kPartSuffix, held, error, approx_size(held));
      send_control(set_, CopyAck{held, text});
      drain(scratch);
      return ReceiveOutcome{
          false, fmt::format("copy of {} from {}: {}", destination_.shown, set_.peer(), text)};
    }
    held = stored_end;
    send_control(set_, CopyAck{held, ""});
    return std::nullopt;
  }

  // After an error was sent: takes what the client still sends until it read the error and
  // left, so that it is not stopped by a full pipe before it could read it.
  void drain(std::vector<std::byte>& scratch) {
    try {
      while (true) set_.recv_up_to(scratch);
    } catch (const runtime::TransportError&) {
      // The client left (or timed out): the end expected here.
    }
  }

  ReceiveOutcome finish(std::uint64_t held) {
    const auto finish = decode_finish(receive_control(set_));
    if (!finish) throw ProtocolError("malformed finish");
    const std::uint64_t digest = hasher_.digest();
    if (finish->hash != digest) {
      std::error_code ignored;
      fs::remove(destination_.part_path, ignored);
      const std::string error = fmt::format(
          "the XXH3-64 digests differ (sent {:016x}, received {:016x}); the partial file was "
          "removed, copy again",
          finish->hash, digest);
      send_control(set_, CopyVerdict{error});
      return {false, fmt::format("copy of {} from {}: {}", destination_.shown, set_.peer(), error)};
    }
    if (auto error = put_in_place(); !error.empty()) {
      send_control(set_, CopyVerdict{error});
      return {false, fmt::format("copy of {} from {}: {}", destination_.shown, set_.peer(), error)};
    }
    send_control(set_, CopyVerdict{});
    return {true, fmt::format("received {} ({}) from {}, XXH3-64 {:016x}", destination_.shown,
                              approx_size(held), set_.peer(), digest)};
  }

  // Synced, then renamed over the destination (refusing to replace a file that appeared
  // meanwhile unless --force).
  std::string put_in_place() {
    if (::fdatasync(part_->get()) != 0) {
      return fmt::format("syncing {}{} failed: {}", destination_.shown, kPartSuffix,
                         std::strerror(errno));
    }
    ::close(part_->release());
    const unsigned flags = request_.force ? 0 : RENAME_NOREPLACE;
    if (::renameat2(AT_FDCWD, destination_.part_path.c_str(), AT_FDCWD,
                    destination_.final_path.c_str(), flags) != 0) {
      return fmt::format("renaming {}{} to {} failed: {}", destination_.shown, kPartSuffix,
                         destination_.shown, std::strerror(errno));
    }
    return {};
  }

  std::string interrupted(std::uint64_t held, const std::string& why) {
    return fmt::format(
        "copy of {} from {} interrupted after {} of {}: {}; the partial file {}{} is kept for a "
        "resume",
        destination_.shown, set_.peer(), approx_size(held), approx_size(request_.size), why,
        destination_.shown, kPartSuffix);
  }

  runtime::StreamSet& set_;
  fs::path root_;
  CopyRegistry& registry_;
  CopyRequest request_;
  Destination destination_;
  bool claimed_ = false;
  std::unique_ptr<Descriptor> part_;
  std::uint64_t have_ = 0;
  FileHasher hasher_;
};

}  // namespace

ReceiveOutcome receive_copy(runtime::StreamSet& set, const fs::path& root, CopyRegistry& registry) {
  try {
    Session session(set, root, registry);
    return session.run();
  } catch (const runtime::TransportError& e) {
    return {false, fmt::format("copy from {} failed: {}", set.peer(), e.what())};
  }
}

}  // namespace multilane::wan
