/* tests/wan/programs/channels_c_example.c — the channels API from C: a parent listens on a
 * 4-stream path, a forked child connects; they exchange odd-sized messages (plain, dynamic
 * size, scatter/gather) and a barrier. Prints "channels_c_example: ok" when every byte
 * arrived as sent; a wrong secret must be refused. Exit status 0 on success. */
#include <multilane/channels.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* kSecret = "a secret of the C example job";

static void fill(unsigned char* bytes, size_t size, int seed) {
  for (size_t i = 0; i < size; ++i) bytes[i] = (unsigned char)((i * 13 + (size_t)seed * 7) & 0xff);
}

static int same(const unsigned char* bytes, size_t size, int seed) {
  for (size_t i = 0; i < size; ++i) {
    if (bytes[i] != (unsigned char)((i * 13 + (size_t)seed * 7) & 0xff)) return 0;
  }
  return 1;
}

static int failed(ml_channels* ch, const char* what) {
  fprintf(stderr, "channels_c_example: %s failed: %s\n", what, ml_channels_error(ch));
  return 1;
}

static ml_path_spec spec(const char* host, int port) {
  ml_path_spec s;
  memset(&s, 0, sizeof s);
  s.host = host;
  s.port = port;
  s.bind_address = "127.0.0.1";
  s.streams = 4;
  s.chunk_size = 16384;
  s.timeout = 10;
  return s;
}

/* The connecting side: receives, answers, takes a message of unknown size. */
static int child(int port) {
  enum { kSize = 100003 };
  static unsigned char buffer[kSize], reply[kSize];
  ml_channels* ch = ml_channels_create(7, kSecret);
  ml_path_spec s = spec("127.0.0.1", port);
  int path = ch ? ml_channels_add_path(ch, &s) : -1;
  if (path < 0 || ml_channels_establish(ch) != 0) return failed(ch, "establish");
  if (ml_channels_recv(ch, path, buffer, kSize) != 0) return failed(ch, "recv");
  if (!same(buffer, kSize, 1)) return failed(ch, "recv data");
  fill(reply, kSize, 2);
  if (ml_channels_send(ch, path, reply, kSize) != 0) return failed(ch, "send");
  size_t got = 0;
  if (ml_channels_dsendrecv(ch, path, reply, 5, buffer, kSize, &got) != 0) {
    return failed(ch, "dsendrecv");
  }
  if (got != 777 || !same(buffer, 777, 3)) return failed(ch, "dsendrecv size");
  if (ml_channels_barrier(ch, path) != 0) return failed(ch, "barrier");
  ml_channels_destroy(ch);
  return 0;
}

/* A stranger (forked) without the secret is refused, and the listener says so. */
static int wrong_secret(void) {
  ml_channels* listener = ml_channels_create(7, kSecret);
  ml_path_spec s = spec(NULL, 0);
  s.streams = 1;
  s.timeout = 0.5;
  int path = ml_channels_add_path(listener, &s);
  int port = ml_channels_local_port(listener, path);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    ml_channels* stranger = ml_channels_create(7, "not the secret of this job!");
    ml_path_spec c = spec("127.0.0.1", port);
    c.streams = 1;
    ml_channels_add_path(stranger, &c);
    int refused = ml_channels_establish(stranger) != 0 &&
                  strstr(ml_channels_error(stranger), "peer failed authentication") != NULL;
    _exit(refused ? 0 : 1);
  }
  int listener_refused = ml_channels_establish(listener) != 0 &&
                         strstr(ml_channels_error(listener), "refused 1 connection") != NULL;
  int status = 0;
  waitpid(pid, &status, 0);
  ml_channels_destroy(listener);
  return listener_refused && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void) {
  enum { kSize = 100003 };
  static unsigned char message[kSize], back[kSize];
  if (ml_channels_create(7, "short") != NULL) return 1;
  ml_channels* ch = ml_channels_create(7, kSecret);
  ml_path_spec s = spec(NULL, 0);
  int path = ml_channels_add_path(ch, &s);
  if (path < 0) return failed(ch, "add_path");
  int port = ml_channels_local_port(ch, path);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(child(port)); /* the child never touches the parent's handle */
  if (ml_channels_establish(ch) != 0) return failed(ch, "establish");
  fill(message, kSize, 1);
  if (ml_channels_send(ch, path, message, kSize) != 0) return failed(ch, "send");
  if (ml_channels_recv(ch, path, back, kSize) != 0) return failed(ch, "recv");
  if (!same(back, kSize, 2)) return failed(ch, "recv data");
  fill(message, 777, 3);
  size_t got = 0;
  if (ml_channels_dsendrecv(ch, path, message, 777, back, 10, &got) != 0 || got != 5) {
    return failed(ch, "dsendrecv");
  }
  if (ml_channels_barrier(ch, path) != 0) return failed(ch, "barrier");
  int status = 0;
  waitpid(pid, &status, 0);
  ml_channels_destroy(ch);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "channels_c_example: the child failed\n");
    return 1;
  }
  if (!wrong_secret()) {
    fprintf(stderr, "channels_c_example: a wrong secret was not refused\n");
    return 1;
  }
  printf("channels_c_example: ok\n");
  return 0;
}
