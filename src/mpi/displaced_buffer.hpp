// mpi/displaced_buffer.hpp — a v-form's buffer (base, counts, displacements, datatype) as the
// packed blocks multilane moves: block i right after block i - 1 (collective.hpp).
//
// Block i is counts[i] elements of the datatype at base + displs[i] extents. MPI allows the
// displacements in any order and with gaps. When the datatype is contiguous and the
// displacements already lay the blocks end to end in rank order, the program's memory is used
// in place; otherwise the blocks are copied (packed, for a derived datatype with holes) into
// one buffer of the object's own, and finish() copies an output's blocks back to where the
// displacements say. The object keeps its memory from one assign() to the next.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "mpi/byte_buffer.hpp"

namespace multilane::mpi {

class DisplacedBuffer {
 public:
  using Use = ByteBuffer::Use;
  // An Input or Both buffer is copied now when it is not used in place. The counts and
  // displacements are copied; with `keep_type`, a buffer that finish() unpacks holds its own
  // duplicate of the datatype (PMPI_Type_dup), since a nonblocking call's program may free it.
  void assign(void* base, std::span<const int> counts, std::span<const int> displs,
              MPI_Datatype type, Use use, bool keep_type);
  std::span<std::byte> bytes() { return bytes_; }
  // Copies an Output or Both buffer's blocks to the program's memory (nothing in place).
  void finish();
  // Forgets the buffer (and frees a kept datatype): finish() does nothing until the next
  // assign().
  void clear();

  DisplacedBuffer() = default;
  DisplacedBuffer(const DisplacedBuffer&) = delete;
  DisplacedBuffer& operator=(const DisplacedBuffer&) = delete;
  ~DisplacedBuffer() { clear(); }

 private:
  void* base_ = nullptr;
  std::vector<int> counts_;
  std::vector<int> displs_;
  bool owns_type_ = false;
  TypeLayout layout_;
  Use use_ = Use::Input;
  bool copied_ = false;
  std::vector<std::byte> packing_;
  std::span<std::byte> bytes_;
};

}  // namespace multilane::mpi
