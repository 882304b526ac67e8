// tests/fuzz/targets/frame_stream.cpp — the frame reader (runtime/tcp/frame_reader.hpp) on a
// real loopback TCP stream carrying any bytes: it hands on exactly the frames that a plain walk
// over the bytes finds (each header as decoded, each read payload byte for byte), in order; it
// stops at the first header that does not decode (saying so once) or at the end of the stream
// (saying whether that fell between frames); and it never lands bytes outside a payload.
//
// Input: one byte choosing the prefix before every header (0 or the aggregate routers' 16),
// then the stream. The sink reads, drops or parks each frame by its message id (parked frames
// are resumed from a handler of their own), so all three paths run.
#include <asio.hpp>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.hpp"
#include "runtime/tcp/frame_reader.hpp"

using namespace multilane::runtime;

namespace {

constexpr FrameCheck kCheck{.job_id = 7, .max_message = 1 << 20};

struct Event {
  FrameHeader header;
  bool read = false;               // the payload was read (not dropped)
  std::vector<std::byte> payload;  // what was read
  friend bool operator==(const Event&, const Event&) = default;
};

struct Outcome {
  std::vector<Event> frames;
  bool bad_header = false;
  bool ended = false;
  bool between_frames = false;
};

enum class Choice { Read, Discard, Park };
Choice choice_for(const FrameHeader& header) {
  switch (header.message_id % 3) {
    case 0:
      return Choice::Read;
    case 1:
      return Choice::Discard;
    default:
      return Choice::Park;
  }
}

// What the reader should report: a walk over the bytes.
Outcome expected(std::span<const std::byte> stream, std::size_t prefix) {
  Outcome out;
  std::size_t at = 0;
  for (;;) {
    if (stream.size() - at < prefix + kFrameHeaderSize) {
      out.ended = true;
      out.between_frames = at == stream.size();
      return out;
    }
    const FrameDecode decoded =
        decode_frame_header(stream.subspan(at + prefix).first<kFrameHeaderSize>(), kCheck, "fuzz");
    if (!decoded.header) {
      out.bad_header = true;
      return out;
    }
    const FrameHeader& h = *decoded.header;
    at += prefix + kFrameHeaderSize;
    // A dropped frame is seen at its header; a read one once its payload is all there.
    const bool read = choice_for(h) != Choice::Discard;
    if (!read) out.frames.push_back({.header = h, .read = false, .payload = {}});
    if (stream.size() - at < h.length) {
      out.ended = true;  // inside the payload
      return out;
    }
    if (read) {
      out.frames.push_back(
          {.header = h,
           .read = true,
           .payload = {stream.begin() + static_cast<std::ptrdiff_t>(at),
                       stream.begin() + static_cast<std::ptrdiff_t>(at + h.length)}});
    }
    at += h.length;
  }
}

class RecordingSink final : public FrameSink {
 public:
  explicit RecordingSink(asio::io_context& io) : io_(io) {}
  Outcome outcome;
  FrameReader* reader = nullptr;

  FramePlacement place(FrameReader& r, const FrameHeader& header) override {
    const Choice choice = choice_for(header);
    if (choice == Choice::Discard) {
      outcome.frames.push_back({.header = header, .read = false, .payload = {}});
      return FramePlacement::discard();
    }
    if (choice == Choice::Park && !resumed_) {
      resumed_ = true;
      asio::post(io_, [&r] { r.resume(); });
      return FramePlacement::park();
    }
    resumed_ = false;
    into_.assign(header.length, std::byte{0});
    landed_ = 0;
    return FramePlacement::read(into_);
  }
  void landed(FrameReader&, const FrameHeader& header, std::uint64_t offset,
              std::size_t bytes) override {
    FUZZ_CHECK(offset + bytes <= header.length, "bytes land inside their payload");
    landed_ += bytes;
  }
  void frame_done(FrameReader&, const FrameHeader& header) override {
    FUZZ_CHECK(landed_ == header.length, "a frame is done once all its bytes landed");
    outcome.frames.push_back({.header = header, .read = true, .payload = into_});
  }
  void bad_header(FrameReader&, const std::string& error) override {
    FUZZ_CHECK(!outcome.bad_header && !outcome.ended, "the reader stops once");
    FUZZ_CHECK(error.rfind("frame from fuzz: ", 0) == 0, "a bad header names the stream");
    outcome.bad_header = true;
  }
  void ended(FrameReader&, const asio::error_code&, bool between_frames) override {
    FUZZ_CHECK(!outcome.bad_header && !outcome.ended, "the reader stops once");
    outcome.ended = true;
    outcome.between_frames = between_frames;
  }

 private:
  asio::io_context& io_;
  std::vector<std::byte> into_;
  std::uint64_t landed_ = 0;
  bool resumed_ = false;
};

// Runs a blocking socket call again while a signal interrupts it (libFuzzer's -timeout timer).
template <typename Call>
void until_done(Call call) {
  asio::error_code error;
  do {
    error.clear();
    call(error);
  } while (error == asio::error::interrupted);
  FUZZ_CHECK(!error, "the loopback connection works");
}

struct Loopback {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor{io, {asio::ip::address_v4::loopback(), 0}};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static Loopback loopback;
  const std::size_t prefix = data[0] % 2 == 0 ? 0 : 16;
  const std::span<const std::byte> stream(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  asio::ip::tcp::socket client(loopback.io);
  asio::ip::tcp::socket server(loopback.io);
  until_done([&](asio::error_code& e) { client.connect(loopback.acceptor.local_endpoint(), e); });
  until_done([&](asio::error_code& e) { loopback.acceptor.accept(server, e); });
  std::size_t written = 0;
  until_done([&](asio::error_code& e) {
    written += asio::write(
        client, asio::buffer(stream.subspan(written).data(), stream.size() - written), e);
  });
  client.shutdown(asio::ip::tcp::socket::shutdown_send);

  RecordingSink sink(loopback.io);
  std::vector<std::byte> scratch;
  {
    FrameReader reader(server, kCheck, "fuzz", sink, scratch, prefix);
    reader.start();
    loopback.io.restart();
    loopback.io.run();
    asio::error_code ignored;
    server.close(ignored);
  }
  const Outcome want = expected(stream, prefix);
  FUZZ_CHECK(sink.outcome.frames == want.frames, "the reader hands on the frames the bytes hold");
  FUZZ_CHECK(sink.outcome.bad_header == want.bad_header, "a bad header stops the reader");
  FUZZ_CHECK(sink.outcome.ended == want.ended, "the end of the stream ends the reader");
  FUZZ_CHECK(!want.ended || sink.outcome.between_frames == want.between_frames,
             "the end is between frames exactly when no frame was begun");
  return 0;
}
