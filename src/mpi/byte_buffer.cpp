// mpi/byte_buffer.cpp — datatypes to bytes (byte_buffer.hpp).
#include "mpi/byte_buffer.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "mpi/pmpi_check.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

std::uint64_t data_bytes(std::uint64_t count, MPI_Datatype type) {
  MPI_Count size = 0;
  pmpi_check(PMPI_Type_size_x(type, &size), "PMPI_Type_size_x");
  return count * static_cast<std::uint64_t>(size);
}

namespace {

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  pmpi_check(PMPI_Type_get_extent(type, &lb, &extent), "PMPI_Type_get_extent");
  return extent;
}

bool dense(MPI_Datatype type) {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS) return false;
  if (PMPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS) return false;
  if (PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent) != MPI_SUCCESS) return false;
  return lb == 0 && true_lb == 0 && extent == size && true_extent == size;
}

}  // namespace

bool is_contiguous(MPI_Datatype type) {
  if (!dense(type)) return false;
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  if (PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner) != MPI_SUCCESS) {
    return false;
  }
  if (combiner == MPI_COMBINER_NAMED) return true;
  if (combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP) return false;
  // The element type, which must be contiguous in turn (an indexed type may reorder its bytes).
  std::vector<int> ints(static_cast<std::size_t>(std::max(integers, 1)));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(std::max(addresses, 1)));
  std::vector<MPI_Datatype> inner(static_cast<std::size_t>(std::max(types, 1)));
  if (types != 1 || PMPI_Type_get_contents(type, integers, addresses, types, ints.data(),
                                           addrs.data(), inner.data()) != MPI_SUCCESS) {
    return false;
  }
  const bool result = is_contiguous(inner[0]);
  int inner_integers = 0, inner_addresses = 0, inner_types = 0, inner_combiner = 0;
  PMPI_Type_get_envelope(inner[0], &inner_integers, &inner_addresses, &inner_types,
                         &inner_combiner);
  if (inner_combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&inner[0]);
  return result;
}

ByteBuffer::~ByteBuffer() {
  clear();
}

void ByteBuffer::clear() {
  if (owns_type_) PMPI_Type_free(&type_);
  owns_type_ = false;
  packed_ = false;
  type_ = MPI_DATATYPE_NULL;
  bytes_ = {};
}

TypeLayout layout_of(MPI_Datatype type) {
  TypeLayout layout{.type = type};
  MPI_Count size = 0;
  pmpi_check(PMPI_Type_size_x(type, &size), "PMPI_Type_size_x");
  MPI_Aint lb = 0;
  pmpi_check(PMPI_Type_get_extent(type, &lb, &layout.extent), "PMPI_Type_get_extent");
  layout.size = static_cast<std::uint64_t>(size);
  layout.contiguous = is_contiguous(type);
  return layout;
}

namespace {

// Calls `piece(first, n)` for runs of `count` elements whose counts and byte sizes fit the int
// arguments of PMPI_Pack and PMPI_Unpack.
template <typename Piece>
void in_pieces(const TypeLayout& layout, std::uint64_t count, Piece piece) {
  const std::uint64_t step = std::max<std::uint64_t>(
      1, (std::uint64_t{1} << 30) / std::max<std::uint64_t>(1, layout.size));
  for (std::uint64_t first = 0; first < count; first += step) {
    piece(first, std::min(step, count - first));
  }
}

char* element_at(const TypeLayout& layout, const void* base, std::uint64_t index) {
  return static_cast<char*>(const_cast<void*>(base)) +
         static_cast<std::int64_t>(index) * layout.extent;
}

}  // namespace

void pack_elements(const TypeLayout& layout, const void* base, std::uint64_t count,
                   std::byte* out) {
  if (count == 0 || layout.size == 0) return;
  if (layout.contiguous) {
    std::memcpy(out, base, count * layout.size);
    return;
  }
  in_pieces(layout, count, [&](std::uint64_t first, std::uint64_t n) {
    int position = 0;
    pmpi_check(PMPI_Pack(element_at(layout, base, first), static_cast<int>(n), layout.type,
                         out + first * layout.size, static_cast<int>(n * layout.size), &position,
                         MPI_COMM_SELF),
               "PMPI_Pack");
    if (static_cast<std::uint64_t>(position) != n * layout.size) {
      throw CommunicationError(ErrorKind::internal,
                               "PMPI_Pack wrote another size than the datatype's");
    }
  });
}

void unpack_elements(const TypeLayout& layout, const std::byte* in, std::uint64_t count,
                     void* base) {
  if (count == 0 || layout.size == 0) return;
  if (layout.contiguous) {
    std::memcpy(base, in, count * layout.size);
    return;
  }
  in_pieces(layout, count, [&](std::uint64_t first, std::uint64_t n) {
    int position = 0;
    pmpi_check(PMPI_Unpack(in + first * layout.size, static_cast<int>(n * layout.size), &position,
                           element_at(layout, base, first), static_cast<int>(n), layout.type,
                           MPI_COMM_SELF),
               "PMPI_Unpack");
  });
}

void ByteBuffer::assign(void* base, std::uint64_t count, MPI_Datatype type, Use use,
                        bool keep_type) {
  clear();
  base_ = base;
  count_ = count;
  type_ = type;
  use_ = use;
  const std::uint64_t bytes = data_bytes(count, type);
  if (bytes == 0) return;
  if (is_contiguous(type)) {
    bytes_ = {static_cast<std::byte*>(base), bytes};
    return;
  }
  packing_.resize(bytes);
  bytes_ = packing_;
  packed_ = true;
  if (keep_type && use != Use::Input) {
    pmpi_check(PMPI_Type_dup(type, &type_), "PMPI_Type_dup");
    owns_type_ = true;
  }
  if (use == Use::Output) return;
  pack_elements(
      {.type = type, .size = bytes / count, .extent = extent_of(type), .contiguous = false}, base,
      count, packing_.data());
}

void ByteBuffer::finish() {
  if (!packed_ || use_ == Use::Input) return;
  unpack_elements({.type = type_,
                   .size = bytes_.size() / count_,
                   .extent = extent_of(type_),
                   .contiguous = false},
                  packing_.data(), count_, base_);
}

}  // namespace multilane::mpi
