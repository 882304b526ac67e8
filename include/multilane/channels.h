/* multilane/channels.h — the channels API for C (see channels.hpp for the full contract).
 *
 * An `ml_channels` handle is one process's end of a set of paths; a path joins it to one other
 * process with N parallel TCP streams, every stream authenticated with the job secret. Paths
 * are added with ml_channels_add_path() (a listening path binds its port at once; read it back
 * with ml_channels_local_port()) and set up together with ml_channels_establish().
 *
 * Every function returning int returns 0 on success and -1 on failure; the failure's text
 * (naming the path, the peer and what was awaited) is then ml_channels_error(handle). A call
 * blocks until done; a path that makes no progress for its timeout fails the call. No thread is
 * created per call. Not thread-safe: one call at a time per handle.
 */
#ifndef MULTILANE_CHANNELS_H
#define MULTILANE_CHANNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ml_channels ml_channels;

typedef struct ml_path_spec {
  const char* host;         /* peer to connect to; NULL, "", "0", "0.0.0.0": listen on port */
  int port;                 /* the peer's port, or ours when listening (0: any free port) */
  const char* relay;        /* "host:port" of a multilane relay to go through, or NULL */
  const char* bind_address; /* listening only: local address, NULL for every IPv4 address */
  int streams;              /* parallel TCP streams, 1..1024 (0: 1) */
  int send_buffer;          /* SO_SNDBUF of each stream in bytes, 0: the system's default */
  int receive_buffer;       /* SO_RCVBUF of each stream in bytes, 0: the system's default */
  double pacing_rate;       /* bytes/s per stream (SO_MAX_PACING_RATE), 0: unpaced */
  uint64_t chunk_size;      /* largest chunk of a split message, 0: 1 MiB */
  double timeout;           /* seconds without progress before a call fails, 0: 60 */
} ml_path_spec;

/* One buffer of a scatter/gather call. For receives, `size` is the exact size, or the limit
 * when `up_to` is non-zero, and `received` is set to the message's size. */
typedef struct ml_part {
  int path;
  void* buffer; /* const data for sends */
  size_t size;
  int up_to;
  size_t received;
} ml_part;

/* A handle for job `job_id` with the job's secret text (at least 16 characters); NULL when the
 * secret is too short (the reason is written to stderr). With secret == NULL the environment
 * (MULTILANE_SECRET, MULTILANE_JOB_ID) is read instead and job_id is ignored. */
ml_channels* ml_channels_create(uint64_t job_id, const char* secret);
void ml_channels_destroy(ml_channels* channels);
const char* ml_channels_error(const ml_channels* channels);

/* Returns the new path's id (>= 0), or -1. */
int ml_channels_add_path(ml_channels* channels, const ml_path_spec* spec);
int ml_channels_establish(ml_channels* channels);
int ml_channels_close(ml_channels* channels, int path);
int ml_channels_local_port(const ml_channels* channels, int path); /* -1 if no such path */

int ml_channels_send(ml_channels* channels, int path, const void* data, size_t size);
int ml_channels_recv(ml_channels* channels, int path, void* buffer, size_t size);
int ml_channels_sendrecv(ml_channels* channels, int path, const void* data, size_t size,
                         void* buffer, size_t buffer_size);
int ml_channels_cycle(ml_channels* channels, int to, const void* data, size_t size, int from,
                      void* buffer, size_t buffer_size);
/* Receives a message of unknown size, at most `limit` bytes; its size goes to *received. */
int ml_channels_dsendrecv(ml_channels* channels, int path, const void* data, size_t size,
                          void* buffer, size_t limit, size_t* received);
int ml_channels_barrier(ml_channels* channels, int path);
int ml_channels_psend(ml_channels* channels, const ml_part* parts, int count);
int ml_channels_precv(ml_channels* channels, ml_part* parts, int count);
int ml_channels_psendrecv(ml_channels* channels, const ml_part* out, int out_count, ml_part* in,
                          int in_count);
/* Forwards messages between paths[2i] and paths[2i+1] (both directions, all pairs at once)
 * until a peer ends its side; messages up to max_message bytes (0: 64 MiB). */
int ml_channels_relay(ml_channels* channels, const int* paths, int pair_count, size_t max_message);

#ifdef __cplusplus
}
#endif

#endif /* MULTILANE_CHANNELS_H */
