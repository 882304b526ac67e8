// mpi/byte_buffer.hpp — an MPI buffer (address, count, datatype) as the bytes multilane moves.
//
// multilane moves bytes; MPI describes data by datatypes. A datatype whose elements lie end to
// end without holes (a predefined type, or a contiguous / dup derived type of one, with lower
// bound 0 and extent equal to size) is used in place: its bytes are the data. Any other datatype
// is packed into a temporary buffer (PMPI_Pack, in the MPI library's own order of the basic
// elements) and unpacked after the call. Packing rather than handing such calls to PMPI_* keeps
// the route the same on every rank: MPI lets ranks use different datatypes with the same type
// signature (a vector on the root, MPI_INT elsewhere), so a route chosen by the local datatype
// could send one rank to PMPI_Bcast and another to multilane: a deadlock. Packed bytes of equal
// signatures are equal on one machine architecture (the only case the library serves).
//
// Sizes are 64-bit throughout: count * size may exceed 2^31 bytes.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace multilane::mpi {

// Bytes of `count` elements of `type` (its size, not extent, times count).
std::uint64_t data_bytes(std::uint64_t count, MPI_Datatype type);
// Whether `type`'s data are exactly the bytes of [address, address + count * size).
bool is_contiguous(MPI_Datatype type);

// What copying elements of a datatype needs, looked up once.
struct TypeLayout {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::uint64_t size = 0;  // bytes of data per element
  MPI_Aint extent = 0;     // bytes from one element to the next in memory
  bool contiguous = false;
};
TypeLayout layout_of(MPI_Datatype type);
// `count` elements at `base` as their packed bytes at `out` (count * size of them), and back:
// a copy for a contiguous type, PMPI_Pack / PMPI_Unpack (in pieces that fit their int
// arguments) for any other.
void pack_elements(const TypeLayout& layout, const void* base, std::uint64_t count, std::byte* out);
void unpack_elements(const TypeLayout& layout, const std::byte* in, std::uint64_t count,
                     void* base);

// A buffer that packs keeps its packing memory from one assign() to the next. With
// `keep_type`, a packed buffer holds its own duplicate of the datatype (PMPI_Type_dup) until
// clear() or destruction, so the program may free its handle before finish().
class ByteBuffer {
 public:
  enum class Use { Input, Output, Both };
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ~ByteBuffer();
  // `count` elements of `type` at `base`; an Input or Both buffer is packed now when needed.
  void assign(void* base, std::uint64_t count, MPI_Datatype type, Use use, bool keep_type);
  std::span<std::byte> bytes() { return bytes_; }
  // Unpacks an Output or Both buffer into the user's memory (nothing when used in place).
  void finish();
  // Forgets the buffer (and frees a kept datatype); the packing memory stays for reuse.
  void clear();

 private:
  void* base_ = nullptr;
  std::uint64_t count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool owns_type_ = false;
  bool packed_ = false;
  Use use_ = Use::Input;
  std::vector<std::byte> packing_;
  std::span<std::byte> bytes_;
};

}  // namespace multilane::mpi
