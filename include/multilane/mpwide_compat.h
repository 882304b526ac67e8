/* multilane/mpwide_compat.h — the MPWide calls on top of multilane's channels.
 *
 * A program written against MPWide's channel calls (Groen et al., "A light-weight
 * communication library for distributed computing") recompiles unchanged against this header
 * and links with multilane::wan. What the calls mean here:
 *
 *   - A channel is one authenticated TCP stream between two processes. MPW_Init(hosts, ports,
 *     n) opens channels 0..n-1 (numbered from 0, like C arrays): channel i connects to
 *     hosts[i]:ports[i], or, when hosts[i] is "0", "" or "0.0.0.0", listens on ports[i] for
 *     its peer. All n are set up at once, so the two ends may list listening and connecting
 *     channels in any order. It returns when every channel is up (or failed).
 *   - MPW_Send(buf, size, channels, n) splits the buffer evenly over the n channels (the first
 *     size % n parts one byte longer) and sends every part at once; MPW_Recv merges the parts
 *     into the buffer in place. The channels may lead to different hosts: one call then
 *     scatters or gathers. MPW_SendRecv does both at once on the same channels.
 *   - MPW_Cycle sends over one set of channels while receiving over another (a ring step).
 *   - MPW_DSendRecv / MPW_DCycle receive a message whose size the receiver does not know, at
 *     most max_recv_size bytes (split the same way), and return its size.
 *   - MPW_PSend / MPW_PRecv / MPW_PSendRecv take one buffer and size per channel (scatter and
 *     gather of unequal parts).
 *   - MPW_Relay(a, n, b, n) forwards every message arriving on channel a[i] to b[i] and back,
 *     for all i at once, until a peer ends its side (the Forwarder's job).
 *   - MPW_Barrier(channel) returns once the other end of the channel called it too.
 *   - Tunables (MPW_setChunkSize, MPW_setPacingRate, MPW_setWin, MPW_setTimeout) apply to the
 *     channels opened by later MPW_Init calls.
 *
 * Every channel is authenticated with the job's secret: MULTILANE_SECRET (at least 16
 * characters, the same at both ends) and MULTILANE_JOB_ID (default 0) are read from the
 * environment by MPW_Init; without them MPW_Init fails. Nothing unauthenticated is accepted.
 * Listening channels bind every address unless MULTILANE_BIND names one (e.g. 127.0.0.1).
 *
 * Errors: the calls return 0 (MPW_DSendRecv / MPW_DCycle: the received size) on success and -1
 * on failure, after printing "MPW_<call>: <reason>" to stderr; MPW_LastError() returns the
 * reason. A call blocks until done; a channel that makes no progress for the timeout (60 s
 * unless MPW_setTimeout) fails it. No thread is created per call. Not thread-safe.
 */
#ifndef MULTILANE_MPWIDE_COMPAT_H
#define MULTILANE_MPWIDE_COMPAT_H

#ifdef __cplusplus
extern "C" {
#endif

int MPW_Init(const char* const* hosts, const int* ports, int num_channels);
int MPW_Finalize(void);
int MPW_NumChannels(void);

int MPW_Send(const char* buf, long long size, const int* channels, int num_channels);
int MPW_Recv(char* buf, long long size, const int* channels, int num_channels);
int MPW_SendRecv(const char* send_buf, long long send_size, char* recv_buf, long long recv_size,
                 const int* channels, int num_channels);
int MPW_Cycle(const char* send_buf, long long send_size, char* recv_buf, long long recv_size,
              const int* send_channels, int num_send, const int* recv_channels, int num_recv);
long long MPW_DSendRecv(const char* send_buf, long long send_size, char* recv_buf,
                        long long max_recv_size, const int* channels, int num_channels);
long long MPW_DCycle(const char* send_buf, long long send_size, char* recv_buf,
                     long long max_recv_size, const int* send_channels, int num_send,
                     const int* recv_channels, int num_recv);
int MPW_PSend(char* const* bufs, const long long* sizes, const int* channels, int num_channels);
int MPW_PRecv(char* const* bufs, const long long* sizes, const int* channels, int num_channels);
int MPW_PSendRecv(char* const* send_bufs, const long long* send_sizes, char* const* recv_bufs,
                  const long long* recv_sizes, const int* channels, int num_channels);
int MPW_Relay(const int* channels_a, int num_a, const int* channels_b, int num_b);
int MPW_Barrier(int channel);

int MPW_setChunkSize(long long bytes);          /* largest chunk of a split part; default 1 MiB */
int MPW_setPacingRate(double bytes_per_second); /* per channel; 0: unpaced (the default) */
int MPW_setWin(int bytes);                      /* SO_SNDBUF and SO_RCVBUF; 0: the system's */
int MPW_setTimeout(double seconds);             /* longest wait without progress; default 60 */
const char* MPW_LastError(void);

#ifdef __cplusplus
}

#include <string>
#include <vector>

/* MPWide's C++ programs pass the hosts as std::string. */
inline int MPW_Init(const std::string* hosts, const int* ports, int num_channels) {
  std::vector<const char*> names;
  for (int i = 0; hosts != nullptr && i < num_channels; ++i) names.push_back(hosts[i].c_str());
  return MPW_Init(hosts != nullptr ? names.data() : nullptr, ports, num_channels);
}
#endif

#endif /* MULTILANE_MPWIDE_COMPAT_H */
