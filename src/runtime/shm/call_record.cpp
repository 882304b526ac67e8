#include "runtime/shm/call_record.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "multilane/units.hpp"

namespace multilane::runtime::shm {
namespace {

constexpr std::uint64_t kBarrierKind = 0xff;
constexpr std::uint64_t kSingleCopyBit = 1ull << 48;  // in `shape`, above the collective
constexpr int kRootShareShift = 49;                   // and the root's share above it
constexpr std::uint64_t kRootShareMask = 0x7ff;       // up to kShareUnits (1024)

constexpr int kTimeShift = 24;
constexpr std::uint64_t kSerialMask = (std::uint64_t{1} << kTimeShift) - 1;
constexpr std::uint64_t kLongestTime = (std::uint64_t{1} << (64 - kTimeShift)) - 1;

std::atomic_ref<std::uint64_t> atomic(std::uint64_t& field) {
  return std::atomic_ref<std::uint64_t>(field);
}

// splitmix64's finaliser: every input bit affects every output bit.
std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

CallRecord pack(const CallInfo& call) {
  CallRecord record;
  record.serial = call.serial;
  const std::uint64_t kind =
      call.collective ? static_cast<std::uint64_t>(*call.collective) : kBarrierKind;
  record.shape = kind << 32 | static_cast<std::uint32_t>(call.root) |
                 (call.single_copy ? kSingleCopyBit : 0) |
                 (call.root_share & kRootShareMask) << kRootShareShift;
  record.size = call.size;
  record.geometry = call.geometry.buffer_size << 16 | call.geometry.buffers;
  return record;
}

CallInfo unpack(const CallRecord& record) {
  CallInfo call;
  call.serial = record.serial;
  const std::uint64_t kind = record.shape >> 32 & 0xffff;
  call.single_copy = (record.shape & kSingleCopyBit) != 0;
  call.root_share = static_cast<std::uint16_t>(record.shape >> kRootShareShift & kRootShareMask);
  if (kind != kBarrierKind) call.collective = static_cast<Collective>(kind);
  call.root = static_cast<int>(static_cast<std::uint32_t>(record.shape));
  call.size = record.size;
  call.geometry.buffer_size = record.geometry >> 16;
  call.geometry.buffers = static_cast<std::uint32_t>(record.geometry & 0xffff);
  return call;
}

bool same_but_serial(const CallInfo& a, const CallInfo& b) {
  return a.collective == b.collective && a.root == b.root && a.size == b.size &&
         a.geometry == b.geometry && a.single_copy == b.single_copy && a.root_share == b.root_share;
}

std::string describe(const CallInfo& call) {
  if (call.serial == 0) return "no call yet";
  if (!call.collective) return fmt::format("call {} (barrier)", call.serial);
  const bool rooted = *call.collective == Collective::Bcast ||
                      *call.collective == Collective::Scatter ||
                      *call.collective == Collective::Gather;
  const std::string root = rooted ? fmt::format(" from root {}", call.root) : "";
  if (call.single_copy) {
    const std::string share = call.root_share == 0 ? ""
                                                   : fmt::format(", root's share {:.1f}%",
                                                                 call.root_share * 100.0 / 1024);
    return fmt::format("call {} ({} of {}{}, single copy{})", call.serial,
                       to_string(*call.collective), format_size(call.size), root, share);
  }
  return fmt::format("call {} ({} of {}{}, {} buffers of {})", call.serial,
                     to_string(*call.collective), format_size(call.size), root,
                     call.geometry.buffers, format_size(call.geometry.buffer_size));
}

void store_record(RankRecord& rank, const CallRecord& call) {
  atomic(rank.call.serial).store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  atomic(rank.call.shape).store(call.shape, std::memory_order_relaxed);
  atomic(rank.call.size).store(call.size, std::memory_order_relaxed);
  atomic(rank.call.geometry).store(call.geometry, std::memory_order_relaxed);
  atomic(rank.call.serial).store(call.serial, std::memory_order_release);
}

void store_serial(RankRecord& rank, std::uint64_t serial) {
  // The other fields stay as they are, so a reader sees them consistent with either serial.
  atomic(rank.call.serial).store(serial, std::memory_order_release);
}

namespace {

// One read of the record; nullopt if it was being rewritten (or never written).
std::optional<CallRecord> try_load_record(RankRecord& rank) {
  CallRecord call;
  call.serial = atomic(rank.call.serial).load(std::memory_order_acquire);
  call.shape = atomic(rank.call.shape).load(std::memory_order_relaxed);
  call.size = atomic(rank.call.size).load(std::memory_order_relaxed);
  call.geometry = atomic(rank.call.geometry).load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (call.serial == 0 || atomic(rank.call.serial).load(std::memory_order_relaxed) != call.serial) {
    return std::nullopt;
  }
  return call;
}

}  // namespace

std::optional<CallRecord> load_record(RankRecord& rank) {
  // A rank preempted between the stores of store_record() leaves the serial 0 for as long as
  // it is off its core; error messages read records, so they wait a little for it.
  constexpr auto kRewriteWait = std::chrono::milliseconds(5);
  const auto deadline = std::chrono::steady_clock::now() + kRewriteWait;
  for (;;) {
    if (auto call = try_load_record(rank)) return call;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    sched_yield();
  }
}

std::uint64_t pack_call_time(std::uint64_t serial, std::chrono::nanoseconds took) {
  const auto nanos = static_cast<std::uint64_t>(std::max<std::int64_t>(took.count(), 0));
  return (serial & kSerialMask) | std::min(nanos, kLongestTime) << kTimeShift;
}

std::optional<std::chrono::nanoseconds> call_time_of(std::uint64_t packed, std::uint64_t serial) {
  if ((packed & kSerialMask) != (serial & kSerialMask)) return std::nullopt;
  return std::chrono::nanoseconds(packed >> kTimeShift);
}

std::uint64_t digest_but_serial(const CallInfo& call) {
  // Odd multipliers keep every field's bits; fingerprint()'s final mix spreads them over the
  // whole word.
  const CallRecord record = pack(call);
  return record.shape * 0xc2b2ae3d27d4eb4fULL ^ record.size * 0x165667b19e3779f9ULL ^
         record.geometry * 0xd6e8feb86659fd93ULL;
}

std::uint64_t fingerprint(std::uint64_t serial, std::uint64_t digest_but_serial) {
  const std::uint64_t digest = mix(serial * 0x9e3779b97f4a7c15ULL ^ digest_but_serial);
  return digest == 0 ? 1 : digest;
}

std::uint64_t fingerprint(const CallInfo& call) {
  return fingerprint(call.serial, digest_but_serial(call));
}

}  // namespace multilane::runtime::shm
