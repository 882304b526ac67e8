#include "emu/delay_line/counters.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "multilane/emu.hpp"

namespace multilane::emu {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::int64_t>::is_always_lock_free);

namespace {
CounterBlock* map_file(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) throw EmuError(fmt::format("{}: {}", path, std::strerror(errno)));
  struct stat st {};
  if ((flags & O_CREAT) && ftruncate(fd, sizeof(CounterBlock)) != 0) {
    const int e = errno;
    close(fd);
    throw EmuError(fmt::format("{}: {}", path, std::strerror(e)));
  }
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(CounterBlock))) {
    close(fd);
    throw EmuError(fmt::format("{}: not a delay-line counters file (too short)", path));
  }
  void* p = mmap(nullptr, sizeof(CounterBlock), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int e = errno;
  close(fd);
  if (p == MAP_FAILED) throw EmuError(fmt::format("{}: mmap: {}", path, std::strerror(e)));
  return static_cast<CounterBlock*>(p);
}
}  // namespace

CounterFile CounterFile::create(const std::string& path) {
  CounterBlock* block = map_file(path, O_CREAT | O_TRUNC);
  new (block) CounterBlock();  // the file is zeros; give it its magic and zeroed atomics
  return CounterFile(block);
}

CounterFile CounterFile::open(const std::string& path) {
  CounterBlock* block = map_file(path, 0);
  if (block->magic != CounterBlock::kMagic) {
    munmap(block, sizeof(CounterBlock));
    throw EmuError(fmt::format("{}: not a delay-line counters file (bad magic)", path));
  }
  return CounterFile(block);
}

CounterFile::CounterFile(CounterFile&& other) noexcept : block_(other.block_) {
  other.block_ = nullptr;
}

CounterFile::~CounterFile() {
  if (block_) munmap(block_, sizeof(CounterBlock));
}

std::uint64_t queue_bytes_at(const DirectionCounters& counters, std::int64_t now_ns) {
  const std::int64_t busy = counters.busy_until_ns.load(std::memory_order_relaxed);
  const double bps = static_cast<double>(counters.bps.load(std::memory_order_relaxed));
  if (busy <= now_ns || bps <= 0) return 0;
  return static_cast<std::uint64_t>(static_cast<double>(busy - now_ns) * 1e-9 * bps);
}

std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace multilane::emu
