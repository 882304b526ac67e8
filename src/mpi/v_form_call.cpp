// mpi/v_form_call.cpp — MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv, MPI_Alltoallv and
// MPI_Reduce_scatter in multilane's terms (collective_call.hpp): which arguments are significant on
// which rank, the counts every rank's schedule needs, and the packed blocks.
#include <algorithm>
#include <span>

#include "mpi/collective_call.hpp"
#include "mpi/pmpi_check.hpp"
#include "mpi/reduction_types.hpp"

namespace multilane::mpi {

namespace {

using Use = ByteBuffer::Use;

std::span<const int> per_rank(const int* values, int size) {
  return {values, static_cast<std::size_t>(size)};
}

// A side given by per-rank counts and displacements: both arrays there, no negative count,
// a datatype.
bool usable_blocks(const int* counts, const int* displs, MPI_Datatype type, int size) {
  if (counts == nullptr || displs == nullptr || type == MPI_DATATYPE_NULL) return false;
  return std::none_of(counts, counts + size, [](int n) { return n < 0; });
}

// A side given by one count.
bool usable_block(std::int64_t count, MPI_Datatype type) {
  return count >= 0 && type != MPI_DATATYPE_NULL;
}

}  // namespace

// The v-forms' part of describe_call(): `c` already holds the call, its rank and size.
bool describe_v_form(const MpiArgs& a, CollectiveCall& c) {
  const bool root = rooted(c.call) && a.root == c.rank;
  const bool send_in_place = a.sendbuf == MPI_IN_PLACE, recv_in_place = a.recvbuf == MPI_IN_PLACE;
  c.block = 0;  // gatherv, scatterv, alltoallv: no size every rank knows (call_class.hpp)
  switch (c.call) {
    case WrappedCall::Gatherv:
      if (root) {
        if (recv_in_place || !usable_blocks(a.recvcounts, a.rdispls, a.recvtype, c.size)) {
          return false;
        }
        return send_in_place || usable_block(a.sendcount, a.sendtype);
      }
      return !send_in_place && usable_block(a.sendcount, a.sendtype);
    case WrappedCall::Scatterv:
      if (root) {
        if (send_in_place || !usable_blocks(a.sendcounts, a.sdispls, a.sendtype, c.size)) {
          return false;
        }
        return recv_in_place || usable_block(a.recvcount, a.recvtype);
      }
      return !recv_in_place && usable_block(a.recvcount, a.recvtype);
    case WrappedCall::Allgatherv: {
      if (recv_in_place || !usable_blocks(a.recvcounts, a.rdispls, a.recvtype, c.size)) {
        return false;
      }
      if (!send_in_place && !usable_block(a.sendcount, a.sendtype)) return false;
      const int largest = *std::max_element(a.recvcounts, a.recvcounts + c.size);
      c.block = data_bytes(static_cast<std::uint64_t>(largest), a.recvtype);
      return true;
    }
    case WrappedCall::Alltoallv:
      if (recv_in_place || !usable_blocks(a.recvcounts, a.rdispls, a.recvtype, c.size)) {
        return false;
      }
      return send_in_place || usable_blocks(a.sendcounts, a.sdispls, a.sendtype, c.size);
    case WrappedCall::ReduceScatter: {
      // One datatype and operation (the receive side's), a count per rank, no displacements:
      // the blocks lie in rank order.
      if (recv_in_place || a.recvcounts == nullptr ||
          std::any_of(a.recvcounts, a.recvcounts + c.size, [](int n) { return n < 0; })) {
        return false;
      }
      const auto reduction = reduction_of(a.recvtype, a.op);
      if (!reduction) return false;
      c.reduction = *reduction;
      const int largest = *std::max_element(a.recvcounts, a.recvcounts + c.size);
      c.block = data_bytes(static_cast<std::uint64_t>(largest), a.recvtype);
      return true;
    }
    default:
      return false;
  }
}

// A gatherv's or scatterv's root: every block's bytes.
void CollectiveCall::fill_root_counts() {
  const bool gather = call == WrappedCall::Gatherv;
  const int* counts = gather ? args.recvcounts : args.sendcounts;
  const std::uint64_t element = data_bytes(1, gather ? args.recvtype : args.sendtype);
  for (int i = 0; i < size; ++i) counts_[i] = static_cast<std::uint64_t>(counts[i]) * element;
}

// An alltoallv's row of this rank, what it sends to each rank (the receive side's, in place),
// at `row`.
void CollectiveCall::fill_own_row(std::uint64_t* row) const {
  const bool in_place = args.sendbuf == MPI_IN_PLACE;
  const int* counts = in_place ? args.recvcounts : args.sendcounts;
  const std::uint64_t element = data_bytes(1, in_place ? args.recvtype : args.sendtype);
  for (int j = 0; j < size; ++j) row[j] = static_cast<std::uint64_t>(counts[j]) * element;
}

// What this rank knows of the counts from its own arguments, the rest 0: all a rank's part of
// an own_counts_only algorithm's schedule reads.
void CollectiveCall::fill_own_counts() {
  const auto n = static_cast<std::size_t>(size);
  const auto own = static_cast<std::size_t>(rank);
  const bool root = rooted(call) && args.root == rank;
  switch (call) {
    case WrappedCall::Gatherv:
      counts_.assign(n, 0);
      if (root) return fill_root_counts();
      counts_[own] = static_cast<std::uint64_t>(args.sendcount) * data_bytes(1, args.sendtype);
      return;
    case WrappedCall::Scatterv:
      counts_.assign(n, 0);
      if (root) return fill_root_counts();
      counts_[own] = static_cast<std::uint64_t>(args.recvcount) * data_bytes(1, args.recvtype);
      return;
    case WrappedCall::Alltoallv: {
      counts_.assign(n * n, 0);
      fill_own_row(counts_.data() + own * n);
      const std::uint64_t element = data_bytes(1, args.recvtype);
      for (std::size_t i = 0; i < n; ++i) {
        counts_[i * n + own] = static_cast<std::uint64_t>(args.recvcounts[i]) * element;
      }
      return;
    }
    default:
      return exchange_counts();  // known everywhere: nothing travels
  }
}

void CollectiveCall::exchange_counts() {
  const auto n = static_cast<std::size_t>(size);
  const bool root = rooted(call) && args.root == rank;
  switch (call) {
    case WrappedCall::Gatherv:
    case WrappedCall::Scatterv:
      counts_.assign(n, 0);
      if (root) fill_root_counts();
      pmpi_check(PMPI_Bcast(counts_.data(), size, MPI_UINT64_T, args.root, comm),
                 "PMPI_Bcast of the v-form's counts");
      break;
    case WrappedCall::Allgatherv:
    case WrappedCall::ReduceScatter: {
      counts_.resize(n);
      const std::uint64_t element = data_bytes(1, args.recvtype);
      for (std::size_t i = 0; i < n; ++i) {
        counts_[i] = static_cast<std::uint64_t>(args.recvcounts[i]) * element;
      }
      break;
    }
    case WrappedCall::Alltoallv:
      counts_.resize(n * n + n);
      fill_own_row(counts_.data() + n * n);
      pmpi_check(PMPI_Allgather(counts_.data() + n * n, size, MPI_UINT64_T, counts_.data(), size,
                                MPI_UINT64_T, comm),
                 "PMPI_Allgather of the alltoallv's counts");
      counts_.resize(n * n);  // drop this rank's row's copy
      break;
    default:
      break;
  }
}

std::span<const std::uint64_t> CollectiveCall::known_counts() {
  counts_.clear();
  if (is_v_form(call)) exchange_counts();
  counts_exchanged = true;
  return counts_;
}

void CollectiveCall::prepare_v_form() {
  if (own_counts_only || counts_travel) {
    fill_own_counts();
  } else if (!counts_exchanged) {
    exchange_counts();
  }
  const bool root = rooted(call) && args.root == rank;
  auto* sendbuf = const_cast<void*>(args.sendbuf);
  const bool send_in_place = args.sendbuf == MPI_IN_PLACE,
             recv_in_place = args.recvbuf == MPI_IN_PLACE;
  const auto own = static_cast<std::size_t>(rank);
  // This rank's block of a receive side given by counts and displacements, copied out: the
  // input of an in-place gatherv or allgatherv.
  auto own_block_of_recv = [&] {
    const TypeLayout layout = layout_of(args.recvtype);
    scratch_.resize(static_cast<std::uint64_t>(args.recvcounts[own]) * layout.size);
    pack_elements(layout,
                  static_cast<char*>(args.recvbuf) +
                      static_cast<std::int64_t>(args.rdispls[own]) * layout.extent,
                  static_cast<std::uint64_t>(args.recvcounts[own]), scratch_.data());
    send_ = scratch_;
  };
  switch (call) {
    case WrappedCall::ReduceScatter:
      prepare_reduction();
      break;
    case WrappedCall::Gatherv:
      if (root) {
        recv_blocks_.assign(args.recvbuf, per_rank(args.recvcounts, size),
                            per_rank(args.rdispls, size), args.recvtype, Use::Output, keeps_types);
        recv_ = recv_blocks_.bytes();
        if (send_in_place) {
          own_block_of_recv();
          break;
        }
      }
      send_buffer_.assign(sendbuf, static_cast<std::uint64_t>(args.sendcount), args.sendtype,
                          Use::Input, keeps_types);
      send_ = send_buffer_.bytes();
      break;
    case WrappedCall::Scatterv:
      if (root) {
        send_blocks_.assign(sendbuf, per_rank(args.sendcounts, size), per_rank(args.sdispls, size),
                            args.sendtype, Use::Input, keeps_types);
        send_ = send_blocks_.bytes();
      }
      if (root && recv_in_place) {
        scratch_.resize(counts_[own]);  // the root's block stays where it is
        recv_ = scratch_;
      } else {
        recv_buffer_.assign(args.recvbuf, static_cast<std::uint64_t>(args.recvcount), args.recvtype,
                            Use::Output, keeps_types);
        recv_ = recv_buffer_.bytes();
      }
      break;
    case WrappedCall::Allgatherv:
      if (send_in_place) {
        own_block_of_recv();
      } else {
        send_buffer_.assign(sendbuf, static_cast<std::uint64_t>(args.sendcount), args.sendtype,
                            Use::Input, keeps_types);
        send_ = send_buffer_.bytes();
      }
      recv_blocks_.assign(args.recvbuf, per_rank(args.recvcounts, size),
                          per_rank(args.rdispls, size), args.recvtype, Use::Output, keeps_types);
      recv_ = recv_blocks_.bytes();
      break;
    case WrappedCall::Alltoallv:
      if (send_in_place) {
        // The input is the receive buffer, which the call overwrites: a copy of its own.
        send_blocks_.assign(args.recvbuf, per_rank(args.recvcounts, size),
                            per_rank(args.rdispls, size), args.recvtype, Use::Input, keeps_types);
        const std::span<std::byte> input = send_blocks_.bytes();
        scratch_.assign(input.begin(), input.end());
        send_blocks_.clear();
        send_ = scratch_;
      } else {
        send_blocks_.assign(sendbuf, per_rank(args.sendcounts, size), per_rank(args.sdispls, size),
                            args.sendtype, Use::Input, keeps_types);
        send_ = send_blocks_.bytes();
      }
      recv_blocks_.assign(args.recvbuf, per_rank(args.recvcounts, size),
                          per_rank(args.rdispls, size), args.recvtype, Use::Output, keeps_types);
      recv_ = recv_blocks_.bytes();
      break;
    default:
      break;
  }
}

}  // namespace multilane::mpi
