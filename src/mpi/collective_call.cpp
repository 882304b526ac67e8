// mpi/collective_call.cpp — MPI arguments to multilane buffers (collective_call.hpp).
#include "mpi/collective_call.hpp"

#include <cstring>

#include "mpi/reduction_types.hpp"

namespace multilane::mpi {

namespace {

bool usable_type(MPI_Datatype type) {
  return type != MPI_DATATYPE_NULL;
}

using Use = ByteBuffer::Use;

}  // namespace

bool describe_v_form(const MpiArgs& args, CollectiveCall& c);  // v_form_call.cpp

bool describe_call(WrappedCall call, MPI_Comm comm, const MpiArgs& args, int rank, int size,
                   CollectiveCall& c) {
  c.call = call;
  c.comm = comm;
  c.args = args;
  c.rank = rank;
  c.size = size;
  c.block = 0;
  c.counts_exchanged = false;
  const bool has_root = rooted(call);
  if (has_root && (args.root < 0 || args.root >= c.size)) return false;
  if (is_v_form(call)) return describe_v_form(args, c);
  const bool root = has_root && args.root == c.rank;
  // The side whose count and type are significant on this rank and fix the block.
  auto from_recv = [&]() -> bool {
    if (args.recvcount < 0 || !usable_type(args.recvtype)) return false;
    c.block = data_bytes(static_cast<std::uint64_t>(args.recvcount), args.recvtype);
    return true;
  };
  auto from_send = [&]() -> bool {
    if (args.sendcount < 0 || !usable_type(args.sendtype)) return false;
    c.block = data_bytes(static_cast<std::uint64_t>(args.sendcount), args.sendtype);
    return true;
  };
  // MPI_IN_PLACE in a significant argument where MPI does not allow it: erroneous, for the MPI
  // library to report.
  const bool send_in_place = args.sendbuf == MPI_IN_PLACE,
             recv_in_place = args.recvbuf == MPI_IN_PLACE;
  switch (call) {
    case WrappedCall::Bcast:
      if (recv_in_place) return false;
      break;
    case WrappedCall::Scatter:
      if ((send_in_place && root) || (recv_in_place && !root)) return false;
      break;
    case WrappedCall::Gather:
      if ((recv_in_place && root) || (send_in_place && !root)) return false;
      break;
    case WrappedCall::Allgather:
    case WrappedCall::Alltoall:
      if (recv_in_place) return false;
      break;
    case WrappedCall::Barrier:
      break;
    case WrappedCall::Reduce:
      if ((recv_in_place && root) || (send_in_place && !root)) return false;
      break;
    case WrappedCall::Allreduce:
    case WrappedCall::ReduceScatterBlock:
    case WrappedCall::Scan:
    case WrappedCall::Exscan:
      if (recv_in_place) return false;
      break;
    default:
      return false;  // the v-forms: describe_v_form()
  }
  bool ok = true;
  switch (call) {
    case WrappedCall::Bcast:
      ok = from_recv();
      break;  // the buffer is passed as recv
    case WrappedCall::Scatter:
      ok = root && args.recvbuf == MPI_IN_PLACE ? from_send() : from_recv();
      if (ok && root && !(args.sendcount >= 0 && usable_type(args.sendtype))) ok = false;
      break;
    case WrappedCall::Gather:
      ok = root ? from_recv() : from_send();
      if (ok && root && args.sendbuf != MPI_IN_PLACE &&
          !(args.sendcount >= 0 && usable_type(args.sendtype))) {
        ok = false;
      }
      break;
    case WrappedCall::Allgather:
    case WrappedCall::Alltoall:
      ok = from_recv();
      break;
    case WrappedCall::Barrier:
      c.block = 1;
      break;
    case WrappedCall::Reduce:
    case WrappedCall::Allreduce:
    case WrappedCall::ReduceScatterBlock:
    case WrappedCall::Scan:
    case WrappedCall::Exscan: {
      const auto reduction = reduction_of(args.recvtype, args.op);
      ok = reduction && from_recv();
      if (reduction) c.reduction = *reduction;
      break;
    }
    default:
      return false;  // the v-forms: describe_v_form()
  }
  return ok;
}

void CollectiveCall::prepare() {
  send_buffer_.clear();
  recv_buffer_.clear();
  send_blocks_.clear();
  recv_blocks_.clear();
  send_ = {};
  recv_ = {};
  if (is_v_form(call)) {
    prepare_v_form();
    return;
  }
  const bool root = args.root == rank;
  const auto n = static_cast<std::uint64_t>(size);
  auto* sendbuf = const_cast<void*>(args.sendbuf);
  const auto send_count = static_cast<std::uint64_t>(args.sendcount);
  const auto recv_count = static_cast<std::uint64_t>(args.recvcount);
  switch (call) {
    case WrappedCall::Bcast:
      recv_buffer_.assign(args.recvbuf, recv_count, args.recvtype, root ? Use::Input : Use::Output,
                          keeps_types);
      recv_ = recv_buffer_.bytes();
      break;
    case WrappedCall::Scatter:
      if (root) {
        send_buffer_.assign(sendbuf, send_count * n, args.sendtype, Use::Input, keeps_types);
        send_ = send_buffer_.bytes();
      }
      if (root && args.recvbuf == MPI_IN_PLACE) {
        scratch_.resize(block);
        recv_ = scratch_;
      } else {
        recv_buffer_.assign(args.recvbuf, recv_count, args.recvtype, Use::Output, keeps_types);
        recv_ = recv_buffer_.bytes();
      }
      break;
    case WrappedCall::Gather:
      if (root) {
        const bool in_place = args.sendbuf == MPI_IN_PLACE;
        recv_buffer_.assign(args.recvbuf, recv_count * n, args.recvtype,
                            in_place ? Use::Both : Use::Output, keeps_types);
        recv_ = recv_buffer_.bytes();
        if (in_place) {
          scratch_.assign(
              recv_.begin() + static_cast<std::ptrdiff_t>(block * static_cast<std::uint64_t>(rank)),
              recv_.begin() +
                  static_cast<std::ptrdiff_t>(block * static_cast<std::uint64_t>(rank + 1)));
          send_ = scratch_;
          break;
        }
      }
      send_buffer_.assign(sendbuf, send_count, args.sendtype, Use::Input, keeps_types);
      send_ = send_buffer_.bytes();
      break;
    case WrappedCall::Allgather:
    case WrappedCall::Alltoall: {
      const bool in_place = args.sendbuf == MPI_IN_PLACE;
      recv_buffer_.assign(args.recvbuf, recv_count * n, args.recvtype,
                          in_place ? Use::Both : Use::Output, keeps_types);
      recv_ = recv_buffer_.bytes();
      if (in_place && call == WrappedCall::Allgather) {
        const auto first = static_cast<std::ptrdiff_t>(block * static_cast<std::uint64_t>(rank));
        scratch_.assign(recv_.begin() + first,
                        recv_.begin() + first + static_cast<std::ptrdiff_t>(block));
        send_ = scratch_;
      } else if (in_place) {
        scratch_.assign(recv_.begin(), recv_.end());
        send_ = scratch_;
      } else {
        send_buffer_.assign(sendbuf, send_count * (call == WrappedCall::Alltoall ? n : 1),
                            args.sendtype, Use::Input, keeps_types);
        send_ = send_buffer_.bytes();
      }
      break;
    }
    case WrappedCall::Barrier:
      scratch_.assign(n + 1, std::byte{1});
      send_ = std::span<const std::byte>(scratch_).first(1);
      recv_ = std::span<std::byte>(scratch_).subspan(1);
      break;
    case WrappedCall::Reduce:
    case WrappedCall::Allreduce:
    case WrappedCall::ReduceScatterBlock:
    case WrappedCall::Scan:
    case WrappedCall::Exscan:
      prepare_reduction();
      break;
    default:
      break;  // the v-forms: prepare_v_form()
  }
}

void CollectiveCall::prepare_reduction() {
  const bool in_place = args.sendbuf == MPI_IN_PLACE;
  // A reduce's non-roots and an exscan's rank 0 get nothing (multilane leaves rank 0's
  // receive buffer untouched, where MPI leaves it undefined).
  const bool gets_result = call == WrappedCall::Reduce   ? args.root == rank
                           : call == WrappedCall::Exscan ? rank > 0
                                                         : true;
  // Every rank's result is `count` elements; its input is as many, or every rank's block of
  // a reduce-scatter.
  const auto own = static_cast<std::size_t>(rank);
  const std::uint64_t count = call == WrappedCall::ReduceScatter
                                  ? static_cast<std::uint64_t>(args.recvcounts[own])
                                  : static_cast<std::uint64_t>(args.recvcount);
  std::uint64_t input = count;
  if (call == WrappedCall::ReduceScatterBlock) input = count * static_cast<std::uint64_t>(size);
  if (call == WrappedCall::ReduceScatter) {
    input = 0;
    for (int i = 0; i < size; ++i) input += static_cast<std::uint64_t>(args.recvcounts[i]);
  }
  const std::uint64_t result_bytes = gets_result ? data_bytes(count, args.recvtype) : 0;
  if (in_place) {
    recv_buffer_.assign(args.recvbuf, input, args.recvtype, Use::Both, keeps_types);
    const std::span<std::byte> whole = recv_buffer_.bytes();
    scratch_.assign(whole.begin(), whole.end());
    send_ = scratch_;
    recv_ = whole.first(result_bytes);
    return;
  }
  send_buffer_.assign(const_cast<void*>(args.sendbuf), input, args.recvtype, Use::Input,
                      keeps_types);
  send_ = send_buffer_.bytes();
  if (gets_result) {
    recv_buffer_.assign(args.recvbuf, count, args.recvtype, Use::Output, keeps_types);
    recv_ = recv_buffer_.bytes();
  }
}

void CollectiveCall::finish() {
  recv_buffer_.finish();
  recv_blocks_.finish();
}

}  // namespace multilane::mpi
