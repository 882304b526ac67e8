// mpi/collectives.cpp — the intercepted MPI collectives: each hands its arguments to the
// dispatcher (dispatch.hpp) and, when the route is the MPI library's, calls PMPI_* with them
// untouched.
#include <mpi.h>

#include "mpi/dispatch.hpp"

using multilane::mpi::MpiArgs;
using multilane::mpi::run_blocking;
using multilane::mpi::start_nonblocking;
using multilane::mpi::WrappedCall;

// Reductions: one count and datatype, carried as the receive side's (collective_call.hpp).
namespace {

MpiArgs reduction_args(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, int root) {
  return {.sendbuf = sendbuf,
          .sendcount = count,
          .sendtype = datatype,
          .recvbuf = recvbuf,
          .recvcount = count,
          .recvtype = datatype,
          .root = root,
          .op = op};
}
}  // namespace

extern "C" {

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  const MpiArgs args{nullptr, 0, MPI_DATATYPE_NULL, buffer, count, datatype, root, MPI_OP_NULL};
  if (auto code = run_blocking(WrappedCall::Bcast, comm, args)) return *code;
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const MpiArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, MPI_OP_NULL};
  if (auto code = run_blocking(WrappedCall::Scatter, comm, args)) return *code;
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const MpiArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, MPI_OP_NULL};
  if (auto code = run_blocking(WrappedCall::Gather, comm, args)) return *code;
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const MpiArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, MPI_OP_NULL};
  if (auto code = run_blocking(WrappedCall::Allgather, comm, args)) return *code;
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const MpiArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, MPI_OP_NULL};
  if (auto code = run_blocking(WrappedCall::Alltoall, comm, args)) return *code;
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Barrier(MPI_Comm comm) {
  if (auto code = run_blocking(WrappedCall::Barrier, comm, MpiArgs{})) return *code;
  return PMPI_Barrier(comm);
}

int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request* request) {
  const MpiArgs args{nullptr, 0, MPI_DATATYPE_NULL, buffer, count, datatype, root, MPI_OP_NULL};
  if (auto code = start_nonblocking(WrappedCall::Bcast, comm, args, request)) return *code;
  return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  const MpiArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, MPI_OP_NULL};
  if (auto code = start_nonblocking(WrappedCall::Scatter, comm, args, request)) return *code;
  return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       request);
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  const MpiArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, MPI_OP_NULL};
  if (auto code = start_nonblocking(WrappedCall::Gather, comm, args, request)) return *code;
  return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      request);
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const MpiArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, MPI_OP_NULL};
  if (auto code = start_nonblocking(WrappedCall::Allgather, comm, args, request)) return *code;
  return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const MpiArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, MPI_OP_NULL};
  if (auto code = start_nonblocking(WrappedCall::Alltoall, comm, args, request)) return *code;
  return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  if (auto code = start_nonblocking(WrappedCall::Barrier, comm, MpiArgs{}, request)) return *code;
  return PMPI_Ibarrier(comm, request);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  const MpiArgs args = reduction_args(sendbuf, recvbuf, count, datatype, op, root);
  if (auto code = run_blocking(WrappedCall::Reduce, comm, args)) return *code;
  return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  const MpiArgs args = reduction_args(sendbuf, recvbuf, count, datatype, op, 0);
  if (auto code = run_blocking(WrappedCall::Allreduce, comm, args)) return *code;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const MpiArgs args = reduction_args(sendbuf, recvbuf, recvcount, datatype, op, 0);
  if (auto code = run_blocking(WrappedCall::ReduceScatterBlock, comm, args)) return *code;
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  const MpiArgs args = reduction_args(sendbuf, recvbuf, count, datatype, op, root);
  if (auto code = start_nonblocking(WrappedCall::Reduce, comm, args, request)) return *code;
  return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  const MpiArgs args = reduction_args(sendbuf, recvbuf, count, datatype, op, 0);
  if (auto code = start_nonblocking(WrappedCall::Allreduce, comm, args, request)) return *code;
  return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  const MpiArgs args = reduction_args(sendbuf, recvbuf, recvcount, datatype, op, 0);
  if (auto code = start_nonblocking(WrappedCall::ReduceScatterBlock, comm, args, request)) {
    return *code;
  }
  return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}

}  // extern "C"
