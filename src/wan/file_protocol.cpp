// wan/file_protocol.cpp — encoding of the copy conversation (see file_protocol.hpp).
#include "wan/file_protocol.hpp"

#include <algorithm>
#include <array>

#include "runtime/tcp/le_bytes.hpp"

namespace multilane::wan {

namespace {

constexpr std::uint32_t kMagic = 0x434c4d31;  // "1MLC" on the wire
enum class Kind : std::uint16_t { Request = 1, Offer, Start, Ack, Finish, Verdict };

class Writer {
 public:
  explicit Writer(Kind kind) {
    u32(kMagic);
    u16(static_cast<std::uint16_t>(kind));
  }
  Writer& u16(std::uint16_t v) { return put(v); }
  Writer& u32(std::uint32_t v) { return put(v); }
  Writer& u64(std::uint64_t v) { return put(v); }
  Writer& text(const std::string& s) {
    const std::string cut = s.substr(0, kControlLimit / 2);
    u32(static_cast<std::uint32_t>(cut.size()));
    const auto* b = reinterpret_cast<const std::byte*>(cut.data());
    bytes_.insert(bytes_.end(), b, b + cut.size());
    return *this;
  }
  std::vector<std::byte> done() { return std::move(bytes_); }

 private:
  template <typename T>
  Writer& put(T v) {
    std::array<std::byte, sizeof(T)> raw{};
    std::size_t pos = 0;
    runtime::put_le<T>(raw, pos, v);
    bytes_.insert(bytes_.end(), raw.begin(), raw.end());
    return *this;
  }
  std::vector<std::byte> bytes_;
};

// Reads fields in order; once anything is out of bounds or wrong, ok() is false for good.
class Reader {
 public:
  Reader(std::span<const std::byte> bytes, Kind kind) : bytes_(bytes) {
    ok_ = bytes.size() <= kControlLimit && u32() == kMagic &&
          u16() == static_cast<std::uint16_t>(kind);
  }
  std::uint16_t u16() { return get<std::uint16_t>(); }
  std::uint32_t u32() { return get<std::uint32_t>(); }
  std::uint64_t u64() { return get<std::uint64_t>(); }
  std::string text() {
    const std::uint32_t length = u32();
    if (!ok_ || length > bytes_.size() - pos_) {
      ok_ = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), length);
    pos_ += length;
    return s;
  }
  bool ok() const { return ok_ && pos_ == bytes_.size(); }

 private:
  template <typename T>
  T get() {
    if (!ok_) return 0;
    if (sizeof(T) > bytes_.size() - pos_) {
      ok_ = false;
      pos_ = bytes_.size();
      return 0;
    }
    return runtime::get_le<T>(bytes_, pos_);
  }
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

template <typename T>
std::optional<T> checked(const Reader& reader, T value) {
  if (!reader.ok()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<std::byte> encode(const CopyRequest& m) {
  return Writer(Kind::Request)
      .u16(m.force ? 1 : 0)
      .u64(m.size)
      .u64(m.block_size)
      .text(m.path)
      .text(m.name)
      .done();
}

std::vector<std::byte> encode(const CopyOffer& m) {
  return Writer(Kind::Offer).text(m.refusal).u64(m.have).u64(m.prefix_hash).done();
}

std::vector<std::byte> encode(const CopyStart& m) {
  return Writer(Kind::Start).u64(m.offset).done();
}

std::vector<std::byte> encode(const CopyAck& m) {
  return Writer(Kind::Ack).u64(m.held).text(m.error).done();
}

std::vector<std::byte> encode(const CopyFinish& m) {
  return Writer(Kind::Finish).u64(m.hash).done();
}

std::vector<std::byte> encode(const CopyVerdict& m) {
  return Writer(Kind::Verdict).text(m.error).done();
}

std::optional<CopyRequest> decode_request(std::span<const std::byte> bytes) {
  Reader r(bytes, Kind::Request);
  CopyRequest m;
  const std::uint16_t flags = r.u16();
  m.force = (flags & 1) != 0;
  m.size = r.u64();
  m.block_size = r.u64();
  m.path = r.text();
  m.name = r.text();
  if (flags > 1) return std::nullopt;
  return checked(r, m);
}

std::optional<CopyOffer> decode_offer(std::span<const std::byte> bytes) {
  Reader r(bytes, Kind::Offer);
  CopyOffer m;
  m.refusal = r.text();
  m.have = r.u64();
  m.prefix_hash = r.u64();
  return checked(r, m);
}

std::optional<CopyStart> decode_start(std::span<const std::byte> bytes) {
  Reader r(bytes, Kind::Start);
  CopyStart m;
  m.offset = r.u64();
  return checked(r, m);
}

std::optional<CopyAck> decode_ack(std::span<const std::byte> bytes) {
  Reader r(bytes, Kind::Ack);
  CopyAck m;
  m.held = r.u64();
  m.error = r.text();
  return checked(r, m);
}

std::optional<CopyFinish> decode_finish(std::span<const std::byte> bytes) {
  Reader r(bytes, Kind::Finish);
  CopyFinish m;
  m.hash = r.u64();
  return checked(r, m);
}

std::optional<CopyVerdict> decode_verdict(std::span<const std::byte> bytes) {
  Reader r(bytes, Kind::Verdict);
  CopyVerdict m;
  m.error = r.text();
  return checked(r, m);
}

}  // namespace multilane::wan
