// mpi/displaced_buffer.cpp — v-form buffers as packed blocks (displaced_buffer.hpp).
#include "mpi/displaced_buffer.hpp"

#include "mpi/pmpi_check.hpp"

namespace multilane::mpi {

namespace {

char* block_address(void* base, int displacement, const TypeLayout& layout) {
  return static_cast<char*>(base) + static_cast<std::int64_t>(displacement) * layout.extent;
}

}  // namespace

void DisplacedBuffer::assign(void* base, std::span<const int> counts, std::span<const int> displs,
                             MPI_Datatype type, Use use, bool keep_type) {
  clear();
  base_ = base;
  counts_.assign(counts.begin(), counts.end());
  displs_.assign(displs.begin(), displs.end());
  layout_ = layout_of(type);
  use_ = use;
  std::uint64_t total = 0;
  bool end_to_end = layout_.contiguous;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto elements = static_cast<std::uint64_t>(counts[i]);
    // In place only where every block lies at its packed offset (empty blocks anywhere).
    if (elements > 0 && static_cast<std::uint64_t>(displs[i]) * layout_.size != total) {
      end_to_end = false;
    }
    if (displs[i] < 0) end_to_end = false;
    total += elements * layout_.size;
  }
  copied_ = !end_to_end;
  if (!copied_) {
    bytes_ = {static_cast<std::byte*>(base), total};
    return;
  }
  packing_.resize(total);
  bytes_ = packing_;
  if (keep_type && use != Use::Input && !layout_.contiguous) {
    pmpi_check(PMPI_Type_dup(type, &layout_.type), "PMPI_Type_dup");
    owns_type_ = true;
  }
  if (use == Use::Output) return;
  std::byte* out = packing_.data();
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto elements = static_cast<std::uint64_t>(counts[i]);
    pack_elements(layout_, block_address(base, displs[i], layout_), elements, out);
    out += elements * layout_.size;
  }
}

void DisplacedBuffer::clear() {
  if (owns_type_) PMPI_Type_free(&layout_.type);
  owns_type_ = false;
  copied_ = false;
  bytes_ = {};
}

void DisplacedBuffer::finish() {
  if (!copied_ || use_ == Use::Input) return;
  const std::byte* in = packing_.data();
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    const auto elements = static_cast<std::uint64_t>(counts_[i]);
    unpack_elements(layout_, in, elements, block_address(base_, displs_[i], layout_));
    in += elements * layout_.size;
  }
}

}  // namespace multilane::mpi
