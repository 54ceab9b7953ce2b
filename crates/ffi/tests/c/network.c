/*
 * Three nodes in one process, through the C interface only: datagrams carried in memory
 * with a delay, a simulated clock in microseconds. For each algorithm run: every node asks
 * once, enters once, never two inside at once, and the fences of each lane increase in entry
 * order. Then the misuse cases: each returns its code and changes nothing.
 *
 * Prints "ok" lines; exits 0 when every check passed, 1 at the first failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manet_mutex.h"

#define NODES 3
#define AIR 4096
#define DELAY_US 700u

static int failures = 0;

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      char why_[256];                                                                \
      size_t len_ = 0;                                                               \
      manet_mutex_last_error_message(why_, sizeof why_, &len_);                      \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, \
              #cond, why_);                                                          \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

#define EXPECT(call, code)                                                           \
  do {                                                                               \
    int32_t rc_ = (call);                                                            \
    if (rc_ != (code)) {                                                             \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call, \
              manet_mutex_status_name(rc_), manet_mutex_status_name(code));          \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

typedef struct {
  uint64_t at;
  uint32_t from, to;
  size_t len;
  uint8_t bytes[MANET_MUTEX_MAX_DATAGRAM];
} datagram;

static datagram air[AIR];
static size_t in_air = 0;

typedef struct {
  manet_mutex_node *node;
  uint64_t ask_at;  /* when the application asks */
  uint64_t leave_at; /* when it leaves, once inside (0: not inside) */
  int entries;
  int asked;
} host;

static void send_to(uint64_t now, uint32_t from, uint32_t to, const uint8_t *bytes, size_t len) {
  CHECK(in_air < AIR);
  air[in_air].at = now + DELAY_US;
  air[in_air].from = from;
  air[in_air].to = to;
  air[in_air].len = len;
  memcpy(air[in_air].bytes, bytes, len);
  in_air++;
}

/* The host's events and datagrams, after any input. */
static void drain(host *hosts, uint32_t i, uint64_t now, int *inside, uint64_t *last_fence,
                  int *entries_total) {
  manet_mutex_event ev;
  int32_t rc;
  uint8_t buf[MANET_MUTEX_MAX_DATAGRAM];
  size_t len;
  uint32_t to;
  bool broadcast;
  while ((rc = manet_mutex_poll_event(hosts[i].node, &ev)) == MANET_MUTEX_OK) {
    if (ev.kind == MANET_MUTEX_EVENT_ENTERED) {
      CHECK(*inside < 0); /* never two inside */
      CHECK(ev.resources == 1);
      CHECK(ev.fence_lane == 0);
      CHECK(*entries_total == 0 || ev.fence_value > *last_fence); /* fences increase */
      *last_fence = ev.fence_value;
      *inside = (int)i;
      hosts[i].entries++;
      (*entries_total)++;
      hosts[i].leave_at = now + 3000;
    }
    CHECK(ev.kind != MANET_MUTEX_EVENT_ANOMALY);
    CHECK(ev.kind != MANET_MUTEX_EVENT_UNKNOWN);
  }
  CHECK(rc == MANET_MUTEX_EMPTY);
  while ((rc = manet_mutex_poll_transmit(hosts[i].node, buf, sizeof buf, &len, &to, &broadcast)) ==
         MANET_MUTEX_OK) {
    if (broadcast) {
      uint32_t j;
      CHECK(to == MANET_MUTEX_BROADCAST);
      for (j = 0; j < NODES; j++)
        if (j != i) send_to(now, i, j, buf, len);
    } else {
      CHECK(to < NODES && to != i);
      send_to(now, i, to, buf, len);
    }
  }
  CHECK(rc == MANET_MUTEX_EMPTY);
}

static int run(uint32_t algorithm, const char *name, const uint8_t *key) {
  host hosts[NODES];
  uint32_t i;
  uint64_t now = 0;
  int inside = -1, entries_total = 0;
  uint64_t last_fence = 0, messages = 0;
  manet_mutex_stats stats;
  in_air = 0;
  for (i = 0; i < NODES; i++) {
    manet_mutex_options o;
    EXPECT(manet_mutex_options_default(algorithm, i, NODES, &o), MANET_MUTEX_OK);
    if (algorithm == MANET_MUTEX_KRL) CHECK(o.discovery); /* token algorithms: discovery on */
    o.key = key;
    hosts[i].node = NULL;
    EXPECT(manet_mutex_new(&o, now, &hosts[i].node), MANET_MUTEX_OK);
    CHECK(hosts[i].node != NULL);
    /* Token algorithms find each other by hellos first (100 ms apart). */
    hosts[i].ask_at = (algorithm == MANET_MUTEX_KRL ? 1000000u : 1000u) + 250u * i;
    hosts[i].leave_at = 0;
    hosts[i].entries = 0;
    hosts[i].asked = 0;
  }
  for (now = 0; now <= 20000000u && entries_total < NODES; now += 100) {
    size_t a = 0, kept = 0;
    /* Deliver what is due (in order of sending). */
    for (a = 0; a < in_air; a++) {
      if (air[a].at <= now) {
        EXPECT(manet_mutex_handle_datagram(hosts[air[a].to].node, now, air[a].from, air[a].bytes,
                                           air[a].len),
               MANET_MUTEX_OK);
      } else {
        air[kept++] = air[a];
      }
    }
    in_air = kept;
    for (i = 0; i < NODES; i++) {
      uint64_t deadline = 0;
      bool armed = false;
      EXPECT(manet_mutex_poll_timeout(hosts[i].node, &deadline, &armed), MANET_MUTEX_OK);
      if (armed && deadline <= now) EXPECT(manet_mutex_handle_timeout(hosts[i].node, now), MANET_MUTEX_OK);
      if (!hosts[i].asked && hosts[i].ask_at <= now) {
        EXPECT(manet_mutex_request(hosts[i].node, now, 1, 0), MANET_MUTEX_OK);
        hosts[i].asked = 1;
      }
      if (hosts[i].leave_at != 0 && hosts[i].leave_at <= now) {
        uint32_t status = 99;
        EXPECT(manet_mutex_get_status(hosts[i].node, &status), MANET_MUTEX_OK);
        CHECK(status == MANET_MUTEX_STATUS_CRITICAL);
        EXPECT(manet_mutex_release(hosts[i].node, now), MANET_MUTEX_OK);
        hosts[i].leave_at = 0;
        CHECK(inside == (int)i);
        inside = -1;
      }
      drain(hosts, i, now, &inside, &last_fence, &entries_total);
    }
  }
  for (i = 0; i < NODES; i++) {
    CHECK(hosts[i].entries == 1);
    EXPECT(manet_mutex_get_stats(hosts[i].node, &stats), MANET_MUTEX_OK);
    CHECK(stats.datagrams_in > 0 && stats.datagrams_out > 0);
    CHECK(stats.messages_sent > 0);
    messages += stats.messages_sent;
    CHECK(stats.dropped_checksum + stats.dropped_malformed + stats.dropped_auth == 0);
    CHECK(stats.core_errors == 0);
    EXPECT(manet_mutex_free(hosts[i].node), MANET_MUTEX_OK);
  }
  /* Ricart-Agrawala without loss or late timers: 2(n - 1) messages per entry, exactly. */
  if (algorithm == MANET_MUTEX_RICART_AGRAWALA) CHECK(messages == NODES * 2 * (NODES - 1));
  printf("ok %s: %d entries, fences up to %llu, %llu messages, %.1f s simulated\n", name,
         entries_total, (unsigned long long)last_fence, (unsigned long long)messages,
         (double)now / 1e6);
  return 0;
}

static manet_mutex_node *make(uint32_t algorithm, uint32_t id) {
  manet_mutex_options o;
  manet_mutex_node *node = NULL;
  EXPECT(manet_mutex_options_default(algorithm, id, NODES, &o), MANET_MUTEX_OK);
  EXPECT(manet_mutex_new(&o, 0, &node), MANET_MUTEX_OK);
  return node;
}

static void misuse(void) {
  manet_mutex_node *ra = make(MANET_MUTEX_RICART_AGRAWALA, 0);
  manet_mutex_node *krl = make(MANET_MUTEX_KRL, 1);
  manet_mutex_node *stale, *untouched = (manet_mutex_node *)0x1;
  manet_mutex_options o;
  manet_mutex_stats before, after;
  manet_mutex_event ev;
  uint8_t small[4] = {0, 0, 0, 0}, big[MANET_MUTEX_MAX_DATAGRAM];
  size_t len = 0, len2 = 0;
  uint32_t to = 0, status = 0;
  bool broadcast = false;
  char msg[128];

  CHECK(manet_mutex_abi_version() == MANET_MUTEX_ABI_VERSION);

  /* A NULL handle, everywhere. */
  EXPECT(manet_mutex_request(NULL, 0, 1, 0), MANET_MUTEX_ERR_NULL_HANDLE);
  EXPECT(manet_mutex_release(NULL, 0), MANET_MUTEX_ERR_NULL_HANDLE);
  EXPECT(manet_mutex_handle_timeout(NULL, 0), MANET_MUTEX_ERR_NULL_HANDLE);
  EXPECT(manet_mutex_poll_event(NULL, &ev), MANET_MUTEX_ERR_NULL_HANDLE);
  EXPECT(manet_mutex_free(NULL), MANET_MUTEX_ERR_NULL_HANDLE);
  EXPECT(manet_mutex_last_error_message(msg, sizeof msg, &len), MANET_MUTEX_OK);
  CHECK(strstr(msg, "NULL") != NULL && len == strlen(msg));
  /* A truncated message says so, and is still NUL-terminated. */
  EXPECT(manet_mutex_last_error_message(msg, 5, &len2), MANET_MUTEX_ERR_BUFFER_TOO_SMALL);
  CHECK(strlen(msg) == 4 && len2 == len);

  /* A value that was never a handle. */
  EXPECT(manet_mutex_request((manet_mutex_node *)0x12345, 0, 1, 0), MANET_MUTEX_ERR_INVALID_HANDLE);
  EXPECT(manet_mutex_handle_timeout(untouched, 0), MANET_MUTEX_ERR_INVALID_HANDLE);

  /* NULL out-parameters. */
  EXPECT(manet_mutex_poll_event(ra, NULL), MANET_MUTEX_ERR_NULL_POINTER);
  EXPECT(manet_mutex_poll_transmit(ra, big, sizeof big, NULL, &to, NULL), MANET_MUTEX_ERR_NULL_POINTER);
  EXPECT(manet_mutex_get_stats(ra, NULL), MANET_MUTEX_ERR_NULL_POINTER);
  EXPECT(manet_mutex_new(NULL, 0, &stale), MANET_MUTEX_ERR_NULL_POINTER);
  EXPECT(manet_mutex_handle_datagram(ra, 0, 1, NULL, 10), MANET_MUTEX_ERR_NULL_POINTER);

  /* Bad options: nothing created, *out untouched. */
  stale = untouched;
  EXPECT(manet_mutex_options_default(99, 0, NODES, &o), MANET_MUTEX_ERR_INVALID_ARGUMENT);
  EXPECT(manet_mutex_options_default(MANET_MUTEX_KRL, 0, NODES, &o), MANET_MUTEX_OK);
  o.id = NODES;
  EXPECT(manet_mutex_new(&o, 0, &stale), MANET_MUTEX_ERR_INVALID_ARGUMENT);
  o.id = 0;
  o.k = 0;
  EXPECT(manet_mutex_new(&o, 0, &stale), MANET_MUTEX_ERR_INVALID_ARGUMENT);
  o.k = 1;
  o.session_liveness_us = o.session_retransmit_us; /* must exceed it */
  EXPECT(manet_mutex_new(&o, 0, &stale), MANET_MUTEX_ERR_INVALID_CONFIG);
  CHECK(stale == untouched);

  /* Release when not inside, cancel when not waiting: codes, and nothing changed. */
  EXPECT(manet_mutex_get_stats(ra, &before), MANET_MUTEX_OK);
  EXPECT(manet_mutex_release(ra, 10), MANET_MUTEX_ERR_NOT_IN_CRITICAL);
  EXPECT(manet_mutex_cancel(ra, 10), MANET_MUTEX_ERR_NOT_WAITING);
  EXPECT(manet_mutex_request(ra, 10, 2, 0), MANET_MUTEX_ERR_INVALID_RESOURCES);
  EXPECT(manet_mutex_poll_event(ra, &ev), MANET_MUTEX_EMPTY);
  EXPECT(manet_mutex_poll_transmit(ra, big, sizeof big, &len, &to, &broadcast), MANET_MUTEX_EMPTY);
  EXPECT(manet_mutex_get_stats(ra, &after), MANET_MUTEX_OK);
  CHECK(memcmp(&before, &after, sizeof before) == 0);
  EXPECT(manet_mutex_get_status(ra, &status), MANET_MUTEX_OK);
  CHECK(status == MANET_MUTEX_STATUS_REMAINDER);

  /* Wrong algorithm: links for a permission algorithm, look-ahead's doze for KRL, a
   * priority for anything but prioritized. */
  EXPECT(manet_mutex_connect(ra, 10, 1), MANET_MUTEX_ERR_WRONG_ALGORITHM);
  EXPECT(manet_mutex_core_event(krl, 10, MANET_MUTEX_CORE_DOZE, 0), MANET_MUTEX_ERR_WRONG_ALGORITHM);
  EXPECT(manet_mutex_request(ra, 10, 1, 7), MANET_MUTEX_ERR_WRONG_ALGORITHM);
  EXPECT(manet_mutex_core_event(ra, 10, 1000, 0), MANET_MUTEX_ERR_INVALID_ARGUMENT);
  EXPECT(manet_mutex_connect(krl, 10, 1), MANET_MUTEX_ERR_INVALID_ARGUMENT); /* itself */

  /* A request: REQUESTs to nodes 1 and 2. A buffer too small gets the size needed and
   * keeps the datagram for the next call. */
  EXPECT(manet_mutex_request(ra, 20, 1, 0), MANET_MUTEX_OK);
  EXPECT(manet_mutex_request(ra, 20, 1, 0), MANET_MUTEX_ERR_ALREADY_REQUESTED);
  EXPECT(manet_mutex_get_status(ra, &status), MANET_MUTEX_OK);
  CHECK(status == MANET_MUTEX_STATUS_WAITING);
  len = 0;
  EXPECT(manet_mutex_poll_transmit(ra, small, sizeof small, &len, &to, &broadcast),
         MANET_MUTEX_ERR_BUFFER_TOO_SMALL);
  CHECK(len > sizeof small && len <= MANET_MUTEX_MAX_DATAGRAM);
  EXPECT(manet_mutex_poll_transmit(ra, NULL, 0, &len2, &to, NULL), MANET_MUTEX_ERR_BUFFER_TOO_SMALL);
  CHECK(len2 == len);
  EXPECT(manet_mutex_poll_transmit(ra, big, sizeof big, &len2, &to, &broadcast), MANET_MUTEX_OK);
  CHECK(len2 == len && to == 1 && !broadcast);
  EXPECT(manet_mutex_poll_transmit(ra, big, sizeof big, &len2, &to, &broadcast), MANET_MUTEX_OK);
  CHECK(to == 2);
  EXPECT(manet_mutex_poll_transmit(ra, big, sizeof big, &len2, &to, &broadcast), MANET_MUTEX_EMPTY);
  EXPECT(manet_mutex_cancel(ra, 30), MANET_MUTEX_OK);
  /* Garbage from a peer is counted and dropped, not an error; an unknown sender is one. */
  EXPECT(manet_mutex_handle_datagram(ra, 40, 1, small, sizeof small), MANET_MUTEX_OK);
  EXPECT(manet_mutex_handle_datagram(ra, 40, NODES, small, sizeof small), MANET_MUTEX_ERR_INVALID_ARGUMENT);
  EXPECT(manet_mutex_get_stats(ra, &after), MANET_MUTEX_OK);
  CHECK(after.dropped_malformed == 1 && after.datagrams_in == 1);

  /* Free, then use: refused, double free included. */
  stale = ra;
  EXPECT(manet_mutex_free(ra), MANET_MUTEX_OK);
  EXPECT(manet_mutex_free(stale), MANET_MUTEX_ERR_INVALID_HANDLE);
  EXPECT(manet_mutex_request(stale, 50, 1, 0), MANET_MUTEX_ERR_INVALID_HANDLE);
  EXPECT(manet_mutex_poll_event(stale, &ev), MANET_MUTEX_ERR_INVALID_HANDLE);
  EXPECT(manet_mutex_free(krl), MANET_MUTEX_OK);

  CHECK(strcmp(manet_mutex_status_name(MANET_MUTEX_ERR_NOT_IN_CRITICAL),
               "MANET_MUTEX_ERR_NOT_IN_CRITICAL") == 0);
  CHECK(strcmp(manet_mutex_status_name(-12345), "unknown status") == 0);
  printf("ok misuse\n");
}

/* argv[1]: "auth" when the library should take keys (the test's cargo features), else
 * "noauth"; a library of the other kind is a stale build, reported as such. */
int main(int argc, char **argv) {
  int auth = argc > 1 && strcmp(argv[1], "auth") == 0;
  static const uint8_t key[32] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
                                  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  run(MANET_MUTEX_RICART_AGRAWALA, "ricart-agrawala", NULL);
  run(MANET_MUTEX_KRL, "krl over discovery", NULL);
  run(MANET_MUTEX_LOOK_AHEAD, "look-ahead", NULL);
  if (((manet_mutex_features() & MANET_MUTEX_FEATURE_AUTH) != 0) != auth) {
    fprintf(stderr, "the library was built %s the auth feature, the test %s: a stale build\n",
            auth ? "without" : "with", auth ? "with" : "without");
    return 1;
  }
  if (auth) {
    run(MANET_MUTEX_RICART_AGRAWALA, "ricart-agrawala, keyed", key);
  } else {
    manet_mutex_options o;
    manet_mutex_node *node = NULL;
    EXPECT(manet_mutex_options_default(MANET_MUTEX_RICART_AGRAWALA, 0, NODES, &o), MANET_MUTEX_OK);
    o.key = key;
    EXPECT(manet_mutex_new(&o, 0, &node), MANET_MUTEX_ERR_INVALID_ARGUMENT);
    CHECK(node == NULL);
    printf("ok ricart-agrawala, keyed: a key is refused without the auth feature\n");
  }
  misuse();
  return failures;
}
