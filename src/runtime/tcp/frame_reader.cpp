// runtime/tcp/frame_reader.cpp — see frame_reader.hpp.
#include "runtime/tcp/frame_reader.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

#include "runtime/tcp/stream_progress.hpp"

namespace multilane::runtime {

namespace {

// Dropped payload is read in pieces of at most this size.
constexpr std::size_t kDiscardBytes = 64 * 1024;

}  // namespace

bool FrameSink::admit(FrameReader&, const FrameHeader&) {
  return true;
}

void FrameSink::landed(FrameReader&, const FrameHeader&, std::uint64_t, std::size_t) {}

std::shared_ptr<void> FrameSink::keep_alive() {
  return {};
}

FrameReader::FrameReader(asio::ip::tcp::socket& socket, const FrameCheck& check, std::string name,
                         FrameSink& sink, std::vector<std::byte>& scratch, std::size_t prefix,
                         PolledReaders* polled)
    : socket_(socket),
      check_(check),
      name_(std::move(name)),
      sink_(sink),
      scratch_(scratch),
      prefix_(std::min(prefix, kMaxPrefix)),
      polled_(polled) {}

FrameReader::~FrameReader() {
  if (listed_) polled_->forget(*this);
  if (socket_.is_open()) signal_arrivals();  // for whoever reads the socket next
}

void FrameReader::start() {
  if (phase_ != Phase::Idle || !socket_.is_open()) return;
  read_header();
}

void FrameReader::resume() {
  if (phase_ != Phase::Parked || !socket_.is_open()) return;
  place();
}

void FrameReader::stop_payload() {
  if (phase_ != Phase::Payload || stopping_) return;
  stopping_ = true;
  if (reading_) stop_read_.emit(asio::cancellation_type::terminal);
  if (listed_) {  // no read outstanding: the rest is dropped from a handler of its own
    polled_->forget(*this);
    listed_ = false;
    continue_with([this] { discard(into_.size() - done_); });
  }
}

std::span<std::byte> FrameReader::take_staged(std::size_t most) {
  const std::size_t n = std::min(most, staged());
  const std::span<std::byte> bytes(stage_.data() + stage_begin_, n);
  stage_begin_ += n;
  return bytes;
}

template <typename Step>
void FrameReader::continue_with(Step step) {
  if (in_handler_) return step();
  reading_ = true;
  asio::post(socket_.get_executor(), asio::bind_allocator(handler_memory_.allocator(),
                                                          [this, step, keep = sink_.keep_alive()] {
                                                            reading_ = false;
                                                            if (!socket_.is_open()) return;
                                                            in_handler_ = true;
                                                            step();
                                                            in_handler_ = false;
                                                          }));
}

void FrameReader::read_header() {
  phase_ = Phase::Header;
  if (staged() >= prefix_ + kFrameHeaderSize) return continue_with([this] { header_arrived(); });
  // The header's first bytes to the front, and the rest of the stage filled from the socket.
  std::copy(stage_.begin() + static_cast<std::ptrdiff_t>(stage_begin_),
            stage_.begin() + static_cast<std::ptrdiff_t>(stage_end_), stage_.begin());
  stage_end_ = staged();
  stage_begin_ = 0;
  if (drained_ && list_for_polling()) {
    drained_ = false;  // the socket is empty: the spinning caller reads it next
    return;
  }
  reading_ = true;
  if (drained_) return read_header_later();
  read_stage_through_reactor();
}

// asio reads at once when its last read did not empty the socket or readiness was reported
// since, and otherwise waits for the next report without re-arming the socket (async_wait
// re-arms it, a system call of its own).
void FrameReader::read_stage_through_reactor() {
  signal_arrivals();
  const std::span<std::byte> room = stage_room();
  socket_.async_read_some(
      asio::buffer(room.data(), room.size()),
      asio::bind_allocator(handler_memory_.allocator(),
                           [this, room, keep = sink_.keep_alive()](const asio::error_code& error,
                                                                   std::size_t bytes) {
                             in_handler_ = true;
                             on_staged(error, bytes, emptied({error, bytes}, room));
                             in_handler_ = false;
                           }));
}

std::span<std::byte> FrameReader::polled_stage_room() {
  const std::span<std::byte> room = stage_room();
  if (demand_ == nullptr || !answered_ || last_frame_ <= staged()) return room;
  return room.first(std::min(room.size(), last_frame_ - staged()));
}

// The last read took all the kernel had. asio would try the next read at once, before it
// waits, and fail with EAGAIN: a system call between a small message's arrival and its answer,
// since the owner completes a receive within this handler. So the read starts from a handler
// of its own, after the owner's caller has moved on: what is there is taken within that
// handler, and an empty socket is left to a spinning caller or waited on through the reactor.
void FrameReader::read_header_later() {
  drained_ = false;
  asio::post(socket_.get_executor(),
             asio::bind_allocator(handler_memory_.allocator(), [this, keep = sink_.keep_alive()] {
               if (!socket_.is_open()) {
                 reading_ = false;
                 return;
               }
               in_handler_ = true;
               stage_now();
               in_handler_ = false;
             }));
}

void FrameReader::stage_now() {
  if (polled_ == nullptr || !polled_->has_room()) return read_stage_through_reactor();
  if (!awaited() && list_for_polling()) return;  // read when a receive waits for it
  const std::span<std::byte> room = polled_stage_room();
  if (const auto read = receive_now(room))
    return on_staged(read->error, read->bytes, emptied(*read, room));
  list_for_polling();
}

// Leaves the empty socket to a spinning caller, if one polls (polled_readers.hpp).
bool FrameReader::list_for_polling() {
  if (polled_ == nullptr || !polled_->list(*this)) return false;
  reading_ = false;
  listed_ = true;
  if (!quiet_) quiet_ = set_receive_low_water(socket_.native_handle(), kQuietLowWater);
  return true;
}

void FrameReader::signal_arrivals() {
  if (quiet_) set_receive_low_water(socket_.native_handle(), 1);
  quiet_ = false;
}

void FrameReader::wait_readable() {
  listed_ = false;
  if (!socket_.is_open()) return;
  signal_arrivals();
  reading_ = true;
  socket_.async_wait(
      asio::socket_base::wait_read,
      asio::bind_allocator(handler_memory_.allocator(),
                           [this, keep = sink_.keep_alive()](const asio::error_code& error) {
                             in_handler_ = true;
                             if (phase_ == Phase::Payload) {
                               reading_ = false;
                               error ? on_payload(error, 0, false) : read_payload();
                             } else if (error) {
                               on_staged(error, 0, false);
                             } else {
                               stage_now();
                             }
                             in_handler_ = false;
                           }));
}

bool FrameReader::read_polled() {
  if (!socket_.is_open()) {
    polled_->forget(*this);  // the owner closed the socket, and knows why
    listed_ = false;
    return true;
  }
  const bool payload = phase_ == Phase::Payload;
  const std::span<std::byte> into = payload ? into_.subspan(done_) : polled_stage_room();
  const auto read = receive_now(into);
  if (!read) return false;
  const auto keep = sink_.keep_alive();  // the sink may let go of its owner meanwhile
  polled_->forget(*this);
  listed_ = false;
  in_handler_ = true;
  if (payload) {
    on_payload(read->error, read->bytes, emptied(*read, into));
  } else {
    on_staged(read->error, read->bytes, emptied(*read, into));
  }
  in_handler_ = false;
  return true;
}

// What a non-blocking recv() into `into` read, as a read's handler would hear it (errno as
// recv() left it); nothing when the socket was empty. `into` is never empty.
std::optional<FrameReader::Read> FrameReader::receive_now(std::span<std::byte> into) {
  const ssize_t got = ::recv(socket_.native_handle(), into.data(), into.size(), MSG_DONTWAIT);
  if (got > 0) return Read{{}, static_cast<std::size_t>(got)};
  if (got == 0) return Read{asio::error::eof, 0};
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return std::nullopt;
  return Read{asio::error_code(errno, asio::system_category()), 0};
}

// A read into the stage that asked for less than its room (polled_stage_room()) counts as one
// that emptied the socket: the rest waits for the spinning caller.
bool FrameReader::emptied(const Read& read, std::span<std::byte> asked) const {
  if (read.error) return false;
  if (phase_ == Phase::Payload) return read.bytes < asked.size();
  return read.bytes < asked.size() || asked.size() < stage_.size() - stage_end_;
}

void FrameReader::on_staged(const asio::error_code& error, std::size_t bytes, bool emptied) {
  reading_ = false;
  if (!socket_.is_open()) return;
  drained_ = emptied;
  stage_end_ += bytes;
  if (staged() >= prefix_ + kFrameHeaderSize) return header_arrived();
  if (error) return end(error, staged() == 0);
  read_header();
}

void FrameReader::header_arrived() {
  const auto prefix = take_staged(prefix_);
  std::copy(prefix.begin(), prefix.end(), prefix_bytes_.begin());
  const auto bytes = take_staged(kFrameHeaderSize);
  std::copy(bytes.begin(), bytes.end(), header_bytes_.begin());
  const FrameDecode decoded = decode_frame_header(header_bytes_, check_, name_);
  if (!decoded.header) {
    phase_ = Phase::Ended;  // the stream is out of step: nothing after it can be read
    return sink_.bad_header(*this, decoded.error);
  }
  header_ = *decoded.header;
  last_frame_ = prefix_ + kFrameHeaderSize +
                static_cast<std::size_t>(std::min<std::uint64_t>(header_.length, kStageBytes));
  if (demand_ != nullptr) {
    answered_ = demand_->sends != sends_seen_;
    sends_seen_ = demand_->sends;
  }
  phase_ = Phase::Placing;
  if (!sink_.admit(*this, header_) || !socket_.is_open()) {
    phase_ = Phase::Idle;  // the owner refused the frame
    return;
  }
  place();
}

void FrameReader::place() {
  phase_ = Phase::Placing;
  const FramePlacement placement = sink_.place(*this, header_);
  if (!socket_.is_open()) {
    phase_ = Phase::Idle;
    return;
  }
  switch (placement.action()) {
    case FramePlacement::Action::Park:
      phase_ = Phase::Parked;
      return;
    case FramePlacement::Action::Stop:
      phase_ = Phase::Idle;
      return;
    case FramePlacement::Action::Discard:
      return discard(header_.length);
    case FramePlacement::Action::Read:
      into_ = placement.into();
      done_ = 0;
      stopping_ = false;
      if (into_.empty()) return finish_frame();
      if (into_.size() >= kQuickAcknowledgedPayload) acknowledge_now(socket_.native_handle());
      phase_ = Phase::Payload;
      if (staged() > 0) return continue_with([this] { payload_from_stage(); });
      return read_payload();
  }
}

// The payload's first bytes came with its header.
void FrameReader::payload_from_stage() {
  const std::size_t left = into_.size() - done_;
  if (stopping_) return discard(left);
  const auto bytes = take_staged(left);
  std::copy(bytes.begin(), bytes.end(), into_.begin() + static_cast<std::ptrdiff_t>(done_));
  on_payload({}, bytes.size(), drained_);  // drained_: the stage's read took all the kernel had
}

// Each read offers everything left of the span (not asio::async_read's 64 KiB at a time) and
// reports what it got, so the owner counts bytes as they come. A read that took all the kernel
// had leaves the empty socket to a spinning caller, as a header read does: bytes that arrive
// meanwhile are read by the next recv() instead of after the reactor's epoll_wait().
void FrameReader::read_payload() {
  phase_ = Phase::Payload;
  if (stopping_) return discard(into_.size() - done_);  // stopped while waiting for readiness
  if (std::exchange(payload_drained_, false) && list_for_polling()) return;
  signal_arrivals();
  reading_ = true;
  const std::span<std::byte> asked = into_.subspan(done_);
  socket_.async_read_some(
      asio::buffer(asked.data(), asked.size()),
      asio::bind_cancellation_slot(
          stop_read_.slot(),
          asio::bind_allocator(handler_memory_.allocator(),
                               [this, asked, keep = sink_.keep_alive()](
                                   const asio::error_code& error, std::size_t bytes) {
                                 in_handler_ = true;
                                 on_payload(error, bytes, emptied({error, bytes}, asked));
                                 in_handler_ = false;
                               })));
}

void FrameReader::on_payload(const asio::error_code& error, std::size_t bytes,
                             bool socket_emptied) {
  reading_ = false;
  if (!socket_.is_open()) return;
  payload_drained_ = socket_emptied;
  const std::size_t at = done_;
  done_ += bytes;
  if (bytes > 0) {
    sink_.landed(*this, header_, at, bytes);
    if (!socket_.is_open()) return;
  }
  if (done_ == into_.size()) return finish_frame();
  if (stopping_ && (!error || error == asio::error::operation_aborted)) {
    return discard(into_.size() - done_);
  }
  if (error) return end(error, false);
  read_payload();
}

// Reads and drops `bytes` bytes (the staged ones first), then goes on with the next header.
void FrameReader::discard(std::uint64_t bytes) {
  bytes -= take_staged(static_cast<std::size_t>(std::min<std::uint64_t>(bytes, staged()))).size();
  if (bytes == 0) return read_header();
  phase_ = Phase::Discard;
  if (scratch_.empty()) scratch_.resize(kDiscardBytes);
  const std::size_t piece =
      static_cast<std::size_t>(std::min<std::uint64_t>(bytes, scratch_.size()));
  signal_arrivals();
  reading_ = true;
  asio::async_read(
      socket_, asio::buffer(scratch_.data(), piece),
      [this, bytes, keep = sink_.keep_alive()](const asio::error_code& error, std::size_t n) {
        reading_ = false;
        if (!socket_.is_open()) return;
        in_handler_ = true;
        if (error) {
          end(error, false);
        } else {
          discard(bytes - n);
        }
        in_handler_ = false;
      });
}

void FrameReader::finish_frame() {
  phase_ = Phase::Delivering;
  sink_.frame_done(*this, header_);
  if (socket_.is_open()) read_header();
}

void FrameReader::end(const asio::error_code& error, bool between_frames) {
  phase_ = Phase::Ended;
  sink_.ended(*this, error, between_frames);
}

}  // namespace multilane::runtime
