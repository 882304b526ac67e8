// mpi/collectives.cpp — the intercepted MPI collectives: each hands its arguments to the
// dispatcher (dispatch.hpp) with the PMPI_* call that runs them with the MPI library untouched.
// They are hot: their pass-through is inline, and the linker keeps hot functions together, so
// that a call that passes reads few pages of code when caches are cold.
#include <mpi.h>

#include "mpi/dispatch.hpp"

using multilane::mpi::MpiArgs;
using multilane::mpi::run_blocking;
using multilane::mpi::start_nonblocking;
using multilane::mpi::WrappedCall;

namespace {

// The counts came from int arguments: they go back unchanged.
int count(std::int64_t value) {
  return static_cast<int>(value);
}

MpiArgs data_args(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root) {
  return {.sendbuf = sendbuf,
          .sendcount = sendcount,
          .sendtype = sendtype,
          .recvbuf = recvbuf,
          .recvcount = recvcount,
          .recvtype = recvtype,
          .root = root};
}

// Reductions: one count and datatype, carried as the receive side's (collective_call.hpp).
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

MpiArgs bcast_args(void* buffer, int count, MPI_Datatype datatype, int root) {
  return {.recvbuf = buffer, .recvcount = count, .recvtype = datatype, .root = root};
}

}  // namespace

extern "C" {

[[gnu::hot]] int MPI_Bcast(void* buffer, int n, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return run_blocking(WrappedCall::Bcast, comm, bcast_args(buffer, n, datatype, root),
                      [](const MpiArgs& a, MPI_Comm c) {
                        return PMPI_Bcast(a.recvbuf, count(a.recvcount), a.recvtype, a.root, c);
                      });
}

[[gnu::hot]] int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm) {
  return run_blocking(WrappedCall::Scatter, comm,
                      data_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root),
                      [](const MpiArgs& a, MPI_Comm c) {
                        return PMPI_Scatter(a.sendbuf, count(a.sendcount), a.sendtype, a.recvbuf,
                                            count(a.recvcount), a.recvtype, a.root, c);
                      });
}

[[gnu::hot]] int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  return run_blocking(WrappedCall::Gather, comm,
                      data_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root),
                      [](const MpiArgs& a, MPI_Comm c) {
                        return PMPI_Gather(a.sendbuf, count(a.sendcount), a.sendtype, a.recvbuf,
                                           count(a.recvcount), a.recvtype, a.root, c);
                      });
}

[[gnu::hot]] int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return run_blocking(WrappedCall::Allgather, comm,
                      data_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0),
                      [](const MpiArgs& a, MPI_Comm c) {
                        return PMPI_Allgather(a.sendbuf, count(a.sendcount), a.sendtype, a.recvbuf,
                                              count(a.recvcount), a.recvtype, c);
                      });
}

[[gnu::hot]] int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return run_blocking(WrappedCall::Alltoall, comm,
                      data_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0),
                      [](const MpiArgs& a, MPI_Comm c) {
                        return PMPI_Alltoall(a.sendbuf, count(a.sendcount), a.sendtype, a.recvbuf,
                                             count(a.recvcount), a.recvtype, c);
                      });
}

[[gnu::hot]] int MPI_Barrier(MPI_Comm comm) {
  return run_blocking(WrappedCall::Barrier, comm, MpiArgs{},
                      [](const MpiArgs&, MPI_Comm c) { return PMPI_Barrier(c); });
}

[[gnu::hot]] int MPI_Reduce(const void* sendbuf, void* recvbuf, int n, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm) {
  return run_blocking(
      WrappedCall::Reduce, comm, reduction_args(sendbuf, recvbuf, n, datatype, op, root),
      [](const MpiArgs& a, MPI_Comm c) {
        return PMPI_Reduce(a.sendbuf, a.recvbuf, count(a.recvcount), a.recvtype, a.op, a.root, c);
      });
}

[[gnu::hot]] int MPI_Allreduce(const void* sendbuf, void* recvbuf, int n, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm) {
  return run_blocking(
      WrappedCall::Allreduce, comm, reduction_args(sendbuf, recvbuf, n, datatype, op, 0),
      [](const MpiArgs& a, MPI_Comm c) {
        return PMPI_Allreduce(a.sendbuf, a.recvbuf, count(a.recvcount), a.recvtype, a.op, c);
      });
}

[[gnu::hot]] int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return run_blocking(WrappedCall::ReduceScatterBlock, comm,
                      reduction_args(sendbuf, recvbuf, recvcount, datatype, op, 0),
                      [](const MpiArgs& a, MPI_Comm c) {
                        return PMPI_Reduce_scatter_block(a.sendbuf, a.recvbuf, count(a.recvcount),
                                                         a.recvtype, a.op, c);
                      });
}

[[gnu::hot]] int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  MpiArgs args = reduction_args(sendbuf, recvbuf, 0, datatype, op, 0);
  args.recvcounts = recvcounts;
  return run_blocking(WrappedCall::ReduceScatter, comm, args, [](const MpiArgs& a, MPI_Comm c) {
    return PMPI_Reduce_scatter(a.sendbuf, a.recvbuf, a.recvcounts, a.recvtype, a.op, c);
  });
}

[[gnu::hot]] int MPI_Scan(const void* sendbuf, void* recvbuf, int n, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm) {
  return run_blocking(WrappedCall::Scan, comm, reduction_args(sendbuf, recvbuf, n, datatype, op, 0),
                      [](const MpiArgs& a, MPI_Comm c) {
                        return PMPI_Scan(a.sendbuf, a.recvbuf, count(a.recvcount), a.recvtype, a.op,
                                         c);
                      });
}

[[gnu::hot]] int MPI_Exscan(const void* sendbuf, void* recvbuf, int n, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm) {
  return run_blocking(
      WrappedCall::Exscan, comm, reduction_args(sendbuf, recvbuf, n, datatype, op, 0),
      [](const MpiArgs& a, MPI_Comm c) {
        return PMPI_Exscan(a.sendbuf, a.recvbuf, count(a.recvcount), a.recvtype, a.op, c);
      });
}

[[gnu::hot]] int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  MpiArgs args = data_args(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, root);
  args.recvcounts = recvcounts;
  args.rdispls = displs;
  return run_blocking(WrappedCall::Gatherv, comm, args, [](const MpiArgs& a, MPI_Comm c) {
    return PMPI_Gatherv(a.sendbuf, count(a.sendcount), a.sendtype, a.recvbuf, a.recvcounts,
                        a.rdispls, a.recvtype, a.root, c);
  });
}

[[gnu::hot]] int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm) {
  MpiArgs args = data_args(sendbuf, 0, sendtype, recvbuf, recvcount, recvtype, root);
  args.sendcounts = sendcounts;
  args.sdispls = displs;
  return run_blocking(WrappedCall::Scatterv, comm, args, [](const MpiArgs& a, MPI_Comm c) {
    return PMPI_Scatterv(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf,
                         count(a.recvcount), a.recvtype, a.root, c);
  });
}

[[gnu::hot]] int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm) {
  MpiArgs args = data_args(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, 0);
  args.recvcounts = recvcounts;
  args.rdispls = displs;
  return run_blocking(WrappedCall::Allgatherv, comm, args, [](const MpiArgs& a, MPI_Comm c) {
    return PMPI_Allgatherv(a.sendbuf, count(a.sendcount), a.sendtype, a.recvbuf, a.recvcounts,
                           a.rdispls, a.recvtype, c);
  });
}

[[gnu::hot]] int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  MpiArgs args = data_args(sendbuf, 0, sendtype, recvbuf, 0, recvtype, 0);
  args.sendcounts = sendcounts;
  args.sdispls = sdispls;
  args.recvcounts = recvcounts;
  args.rdispls = rdispls;
  return run_blocking(WrappedCall::Alltoallv, comm, args, [](const MpiArgs& a, MPI_Comm c) {
    return PMPI_Alltoallv(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf, a.recvcounts,
                          a.rdispls, a.recvtype, c);
  });
}

[[gnu::hot]] int MPI_Ibcast(void* buffer, int n, MPI_Datatype datatype, int root, MPI_Comm comm,
                            MPI_Request* request) {
  return start_nonblocking(WrappedCall::Bcast, comm, bcast_args(buffer, n, datatype, root), request,
                           [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
                             return PMPI_Ibcast(a.recvbuf, count(a.recvcount), a.recvtype, a.root,
                                                c, r);
                           });
}

[[gnu::hot]] int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking(
      WrappedCall::Scatter, comm,
      data_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root), request,
      [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
        return PMPI_Iscatter(a.sendbuf, count(a.sendcount), a.sendtype, a.recvbuf,
                             count(a.recvcount), a.recvtype, a.root, c, r);
      });
}

[[gnu::hot]] int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking(
      WrappedCall::Gather, comm,
      data_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root), request,
      [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
        return PMPI_Igather(a.sendbuf, count(a.sendcount), a.sendtype, a.recvbuf,
                            count(a.recvcount), a.recvtype, a.root, c, r);
      });
}

[[gnu::hot]] int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request* request) {
  return start_nonblocking(WrappedCall::Allgather, comm,
                           data_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0),
                           request, [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
                             return PMPI_Iallgather(a.sendbuf, count(a.sendcount), a.sendtype,
                                                    a.recvbuf, count(a.recvcount), a.recvtype, c,
                                                    r);
                           });
}

[[gnu::hot]] int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  return start_nonblocking(WrappedCall::Alltoall, comm,
                           data_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0),
                           request, [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
                             return PMPI_Ialltoall(a.sendbuf, count(a.sendcount), a.sendtype,
                                                   a.recvbuf, count(a.recvcount), a.recvtype, c, r);
                           });
}

// The nonblocking v-forms: an allgatherv's counts are known on every rank; a gatherv's,
// scatterv's and alltoallv's only at the root or in each rank's row, and multilane's engine
// sends them before the call where its algorithm needs them all (dispatch.cpp).
[[gnu::hot]] int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  MpiArgs args = data_args(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, 0);
  args.recvcounts = recvcounts;
  args.rdispls = displs;
  return start_nonblocking(WrappedCall::Allgatherv, comm, args, request,
                           [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
                             return PMPI_Iallgatherv(a.sendbuf, count(a.sendcount), a.sendtype,
                                                     a.recvbuf, a.recvcounts, a.rdispls, a.recvtype,
                                                     c, r);
                           });
}

[[gnu::hot]] int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request* request) {
  MpiArgs args = data_args(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, root);
  args.recvcounts = recvcounts;
  args.rdispls = displs;
  return start_nonblocking(
      WrappedCall::Gatherv, comm, args, request, [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
        return PMPI_Igatherv(a.sendbuf, count(a.sendcount), a.sendtype, a.recvbuf, a.recvcounts,
                             a.rdispls, a.recvtype, a.root, c, r);
      });
}

[[gnu::hot]] int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                               MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm,
                               MPI_Request* request) {
  MpiArgs args = data_args(sendbuf, 0, sendtype, recvbuf, recvcount, recvtype, root);
  args.sendcounts = sendcounts;
  args.sdispls = displs;
  return start_nonblocking(
      WrappedCall::Scatterv, comm, args, request, [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
        return PMPI_Iscatterv(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf,
                              count(a.recvcount), a.recvtype, a.root, c, r);
      });
}

[[gnu::hot]] int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request* request) {
  MpiArgs args = data_args(sendbuf, 0, sendtype, recvbuf, 0, recvtype, 0);
  args.sendcounts = sendcounts;
  args.sdispls = sdispls;
  args.recvcounts = recvcounts;
  args.rdispls = rdispls;
  return start_nonblocking(WrappedCall::Alltoallv, comm, args, request,
                           [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
                             return PMPI_Ialltoallv(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype,
                                                    a.recvbuf, a.recvcounts, a.rdispls, a.recvtype,
                                                    c, r);
                           });
}

[[gnu::hot]] int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking(
      WrappedCall::Barrier, comm, MpiArgs{}, request,
      [](const MpiArgs&, MPI_Comm c, MPI_Request* r) { return PMPI_Ibarrier(c, r); });
}

[[gnu::hot]] int MPI_Ireduce(const void* sendbuf, void* recvbuf, int n, MPI_Datatype datatype,
                             MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking(WrappedCall::Reduce, comm,
                           reduction_args(sendbuf, recvbuf, n, datatype, op, root), request,
                           [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
                             return PMPI_Ireduce(a.sendbuf, a.recvbuf, count(a.recvcount),
                                                 a.recvtype, a.op, a.root, c, r);
                           });
}

[[gnu::hot]] int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int n, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking(
      WrappedCall::Allreduce, comm, reduction_args(sendbuf, recvbuf, n, datatype, op, 0), request,
      [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
        return PMPI_Iallreduce(a.sendbuf, a.recvbuf, count(a.recvcount), a.recvtype, a.op, c, r);
      });
}

[[gnu::hot]] int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                           MPI_Request* request) {
  return start_nonblocking(WrappedCall::ReduceScatterBlock, comm,
                           reduction_args(sendbuf, recvbuf, recvcount, datatype, op, 0), request,
                           [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
                             return PMPI_Ireduce_scatter_block(
                                 a.sendbuf, a.recvbuf, count(a.recvcount), a.recvtype, a.op, c, r);
                           });
}

[[gnu::hot]] int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                     MPI_Request* request) {
  MpiArgs args = reduction_args(sendbuf, recvbuf, 0, datatype, op, 0);
  args.recvcounts = recvcounts;
  return start_nonblocking(WrappedCall::ReduceScatter, comm, args, request,
                           [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
                             return PMPI_Ireduce_scatter(a.sendbuf, a.recvbuf, a.recvcounts,
                                                         a.recvtype, a.op, c, r);
                           });
}

[[gnu::hot]] int MPI_Iscan(const void* sendbuf, void* recvbuf, int n, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking(
      WrappedCall::Scan, comm, reduction_args(sendbuf, recvbuf, n, datatype, op, 0), request,
      [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
        return PMPI_Iscan(a.sendbuf, a.recvbuf, count(a.recvcount), a.recvtype, a.op, c, r);
      });
}

[[gnu::hot]] int MPI_Iexscan(const void* sendbuf, void* recvbuf, int n, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking(
      WrappedCall::Exscan, comm, reduction_args(sendbuf, recvbuf, n, datatype, op, 0), request,
      [](const MpiArgs& a, MPI_Comm c, MPI_Request* r) {
        return PMPI_Iexscan(a.sendbuf, a.recvbuf, count(a.recvcount), a.recvtype, a.op, c, r);
      });
}

}  // extern "C"
