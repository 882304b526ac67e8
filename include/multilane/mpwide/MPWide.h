/* multilane/mpwide/MPWide.h — MPWide 1.x's calls, on multilane's WAN paths.
 *
 * A program written for MPWide (djgroen/MPWide) compiles unchanged against this header when
 * it finds it as "MPWide.h" (add -I<prefix>/include/multilane/mpwide, or put a link named
 * MPWide.h where the program includes it from) and links with multilane (multilane::wan in
 * the build tree, -lmultilane installed). Every declaration of MPWide's header is here with
 * its signature. What the calls mean (docs/mpwide.md lists every difference from MPWide):
 *
 *   - A path (MPW_CreatePath...) is one multilane path of N authenticated TCP streams on the
 *     server's base port; a message sent on it is striped over the streams, and the receiver
 *     gets it whole. One thread may send on a path while another receives on it.
 *   - A channel (MPW_Init) is a path of one stream on its own port. Channels and the streams
 *     of paths share one numbering, as in MPWide: MPW_Init and MPW_CreatePath take the next
 *     free numbers, and channel calls given exactly the streams of a path use that path.
 *   - Calls over n channels split the buffer into n even parts (the first size % n one byte
 *     longer), one per channel, as MPWide does. Messages are matched call for call: a receive
 *     takes exactly what the matching send sent (the D-calls: any size up to the limit).
 *     A size of 0 moves nothing in that direction.
 *   - Connecting (MPW_ConnectPath(path, true), MPW_CreatePath, MPW_Init): as in MPWide, an end
 *     first tries the peer and, when nothing listens there, listens itself; host "0" (or
 *     "0.0.0.0") only listens; MPW_ConnectPath(path, false) only connects. A listening end
 *     binds every address unless MULTILANE_BIND names one.
 *
 * Authentication, without changing the program: every stream is authenticated with the job's
 * secret, from MULTILANE_SECRET or else the first line of ~/.config/multilane/secret (which
 * must not be readable by others: mode 0600), and MULTILANE_JOB_ID (default 0); the same at
 * both ends. Without a secret the first call that connects fails, saying what to set. Nothing
 * unauthenticated is accepted.
 *
 * Errors: calls that return int return -1 (MPW_CreatePath...: a negative path) on failure
 * after printing "MPW_<call>: <reason>" to stderr; MPW_LastError() returns the reason of the
 * calling thread's last failure. A communication call declared void that fails prints the
 * reason and ends the process with status 1, as MPWide does on a send or receive error. Every
 * wait is bounded: a call whose path makes no progress for the timeout fails; the timeout is
 * 60 s unless MULTILANE_TIMEOUT (seconds) or MPW_setTimeout says otherwise, so a program that
 * computes longer than that between two exchanges sets MULTILANE_TIMEOUT.
 */
#ifndef MULTILANE_MPWIDE_MPWIDE_H
#define MULTILANE_MPWIDE_MPWIDE_H

#include <cassert>
#include <iostream>
#include <string>

/* MPWide's programs test this to use MPW_setPacingRate / MPW_getPacingRate. */
#define MPW_PacingMode 1

/* The IPv4 address of a host name as text, the name itself when it starts with a digit, NULL
 * when it does not resolve. The text lives until the calling thread's next call. */
char* MPW_DNSResolve(char* host);
char* MPW_DNSResolve(std::string host);

/* On (the default): paths set up later use only as many of their streams as they carry without
 * stalls (multilane's stream governor), but every stream through `multilane relay`; off: every
 * stream, always (docs/mpwide.md). */
void MPW_setAutoTuning(bool b);
bool MPW_AutoTuning();

/* Prints every channel (number, port, peer) to stderr. */
void MPW_Print();

/* Channel numbers in use: the highest plus one. */
int MPW_NumChannels();

/* Paths: the id (>= 0) or -1. */
int MPW_CreatePathWithoutConnect(std::string host, int server_side_base_port, int streams_in_path);
int MPW_ConnectPath(int path_id, bool server_wait);
int MPW_CreatePath(std::string host, int server_side_base_port, int num_streams);
int MPW_DestroyPath(int path);

extern "C" {
int MPW_Send(char* sendbuf, long long int sendsize, int path);
int MPW_Recv(char* recvbuf, long long int recvsize, int path);
int MPW_SendRecv(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                 int path);
/* Returns the size of the received message. */
int MPW_DSendRecv(char* sendbuf, long long int sendsize, char* recvbuf, long long int maxrecvsize,
                  int path);
}

/* Channels: 0 or -1. client_side_ports must be -1 (or 0): see docs/mpwide.md. */
int MPW_Init(std::string* url, int* server_side_ports, int* client_side_ports, int num_channels);
int MPW_Init(std::string* url, int* server_side_ports, int num_channels);
int MPW_Init(std::string url, int port);

/* SO_SNDBUF and SO_RCVBUF of a channel or path (all its streams), for a path that connects
 * later; an established one keeps its windows (docs/mpwide.md). */
void MPW_setWin(int channel, int size);
void MPW_setPathWin(int path, int size);

/* Closes the channels (a stream of a path closes its whole path). */
void MPW_CloseChannels(int* channels, int num_channels);

/* Closes every channel and path; returns 1, as MPWide does. */
int MPW_Finalize();

int MPW_PSendRecv(char** sendbuf, long long int* sendsize, char** recvbuf, long long int* recvsize,
                  int* channel, int num_channels);
int MPW_SendRecv(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                 int* channel, int num_channels);
long long int MPW_DSendRecv(char* sendbuf, long long int sendsize, char* recvbuf,
                            long long int maxrecvsize, int* channel, int num_channels);

/* Forwards every message arriving on channels[i] to channels2[i] and back, all at once, until
 * a peer ends its side (MPWide's Forwarder). */
void MPW_Relay(int* channels, int* channels2, int num_channels);

void MPW_Send(char* buf, long long int size, int* channels, int num_channels);
void MPW_Recv(char* buf, long long int size, int* channels, int num_channels);

/* Sends over one set of channels while receiving over another; the D form returns the
 * received size. */
long long int MPW_DCycle(char* sendbuf, long long int sendsize, char* recvbuf,
                         long long int recvsize, int* ch_send, int num_ch_send, int* ch_recv,
                         int num_ch_recv);
void MPW_Cycle(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
               int* ch_send, int num_ch_send, int* ch_recv, int num_ch_recv);

/* Splits buf into num_chunks even parts (the first bsize % num_chunks one byte longer). */
void MPW_splitBuf(char* buf, long long int bsize, int num_chunks, char** split_buf,
                  long long int* chunk_sizes);

/* Returns once the other end of the channel called it too. */
void MPW_Barrier(int channel);

/* Kept and reported; multilane sizes its pieces itself (docs/mpwide.md). */
void MPW_setChunkSize(int sending, int receiving);

/* Non-blocking MPW_SendRecv on a path: an id for MPW_Has_NBE_Finished and MPW_Wait, or -1. */
int MPW_ISendRecv(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                  int path);
bool MPW_Has_NBE_Finished(int NBE_id);
void MPW_Wait(int NBE_id);

#if MPW_PacingMode == 1
extern "C" {
/* Bytes per second per stream for paths that connect later; 0: unpaced. */
double MPW_getPacingRate();
void MPW_setPacingRate(double rate);
}
#endif

/* The C entry points of MPWide's Python bindings. */
extern "C" {
int MPW_CreatePath_c(char* host, int server_side_base_port, int streams_in_path);
int MPW_Init_c(char** url, int* ports, int numsockets);
int MPW_Init1_c(char* url, int port);
void MPW_SendRecv1_c(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                     int base_channel);
void MPW_SendRecv_c(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                    int* base_channel, int num_channels);
void MPW_PSendRecv_c(char** sendbuf, long long int* sendsize, char** recvbuf,
                     long long int* recvsize, int* channel, int num_channels);
}

/* multilane's additions. */
extern "C" {
/* The reason of the calling thread's last failed call ("" when none). */
const char* MPW_LastError(void);
/* Longest wait without progress, in seconds, for paths and channels set up later; > 0. */
int MPW_setTimeout(double seconds);
}

#endif /* MULTILANE_MPWIDE_MPWIDE_H */
