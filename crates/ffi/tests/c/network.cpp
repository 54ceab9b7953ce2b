// The header from C++17: handles owned by std::unique_ptr, a std::deque for the air, three
// prioritized nodes over discovery asking for 1 or 2 of k = 2 resources, then three
// look-ahead nodes; every request is served, the fences increase, a misuse throws nothing.
// Exits 0 when every check passed.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "manet_mutex.h"

namespace {

struct Free {
  void operator()(manet_mutex_node *node) const {
    if (manet_mutex_free(node) != MANET_MUTEX_OK) std::abort();
  }
};
using Node = std::unique_ptr<manet_mutex_node, Free>;

[[noreturn]] void fail(int line, const char *what) {
  char why[256] = {};
  manet_mutex_last_error_message(why, sizeof why, nullptr);
  std::fprintf(stderr, "network.cpp:%d: check failed: %s (last error: %s)\n", line, what, why);
  std::exit(1);
}
#define CHECK(cond) \
  if (!(cond)) fail(__LINE__, #cond)

struct Datagram {
  uint64_t at;
  uint32_t from, to;
  std::vector<uint8_t> bytes;
};

constexpr uint32_t kNodes = 3;

void run(uint32_t algorithm, const char *name, uint32_t k) {
  std::vector<Node> nodes;
  for (uint32_t i = 0; i < kNodes; ++i) {
    manet_mutex_options o{};
    CHECK(manet_mutex_options_default(algorithm, i, kNodes, &o) == MANET_MUTEX_OK);
    o.k = k;
    manet_mutex_node *raw = nullptr;
    CHECK(manet_mutex_new(&o, 0, &raw) == MANET_MUTEX_OK);
    nodes.emplace_back(raw);
  }
  std::deque<Datagram> air;
  std::vector<int> entries(kNodes, 0);
  std::vector<uint64_t> leave_at(kNodes, 0);
  std::vector<uint32_t> held(kNodes, 0);
  uint32_t in_use = 0;
  bool any_fence = false;
  uint64_t last_fence = 0;
  std::vector<uint64_t> fences;
  int total = 0;
  uint64_t now = 0;
  for (; now <= 20'000'000 && total < static_cast<int>(kNodes); now += 100) {
    while (!air.empty() && air.front().at <= now) {
      const Datagram &d = air.front();
      CHECK(manet_mutex_handle_datagram(nodes[d.to].get(), now, d.from, d.bytes.data(),
                                        d.bytes.size()) == MANET_MUTEX_OK);
      air.pop_front();
    }
    for (uint32_t i = 0; i < kNodes; ++i) {
      manet_mutex_node *n = nodes[i].get();
      uint64_t deadline = 0;
      bool armed = false;
      CHECK(manet_mutex_poll_timeout(n, &deadline, &armed) == MANET_MUTEX_OK);
      if (armed && deadline <= now) CHECK(manet_mutex_handle_timeout(n, now) == MANET_MUTEX_OK);
      if (entries[i] == 0 && leave_at[i] == 0 && now == 1'000'000 + 300 * i) {
        uint32_t want = (algorithm == MANET_MUTEX_PRIORITIZED) ? 1 + i % 2 : 1;
        CHECK(manet_mutex_request(n, now, want, 0) == MANET_MUTEX_OK);
      }
      if (leave_at[i] != 0 && leave_at[i] <= now) {
        CHECK(manet_mutex_release(n, now) == MANET_MUTEX_OK);
        in_use -= held[i];
        held[i] = 0;
        leave_at[i] = 0;
      }
      manet_mutex_event ev{};
      int32_t rc;
      while ((rc = manet_mutex_poll_event(n, &ev)) == MANET_MUTEX_OK) {
        if (ev.kind == MANET_MUTEX_EVENT_ENTERED) {
          in_use += ev.resources;
          CHECK(in_use <= k);  // never more than k resources in use
          CHECK(ev.fence_lane == 0);
          // Look-ahead: every entry's fence is above those of the entries before it.
          // Prioritized: grants are numbered at the token, and two concurrent grants may
          // reach their holders in either order: the fences are distinct.
          if (algorithm == MANET_MUTEX_PRIORITIZED) {
            for (uint64_t f : fences) CHECK(f != ev.fence_value);
          } else {
            CHECK(!any_fence || ev.fence_value > last_fence);
          }
          fences.push_back(ev.fence_value);
          any_fence = true;
          last_fence = ev.fence_value;
          held[i] = ev.resources;
          leave_at[i] = now + 3000;
          ++entries[i];
          ++total;
        }
        CHECK(ev.kind != MANET_MUTEX_EVENT_ANOMALY && ev.kind != MANET_MUTEX_EVENT_UNKNOWN);
      }
      CHECK(rc == MANET_MUTEX_EMPTY);
      uint8_t buf[MANET_MUTEX_MAX_DATAGRAM];
      size_t len = 0;
      uint32_t to = 0;
      bool broadcast = false;
      while ((rc = manet_mutex_poll_transmit(n, buf, sizeof buf, &len, &to, &broadcast)) ==
             MANET_MUTEX_OK) {
        for (uint32_t j = 0; j < kNodes; ++j) {
          if (j != i && (broadcast || j == to))
            air.push_back(Datagram{now + 700, i, j, std::vector<uint8_t>(buf, buf + len)});
        }
      }
      CHECK(rc == MANET_MUTEX_EMPTY);
    }
  }
  for (uint32_t i = 0; i < kNodes; ++i) CHECK(entries[i] == 1);
  // Misuse from C++: codes, no exception, no abort.
  CHECK(manet_mutex_release(nodes[0].get(), now) == MANET_MUTEX_ERR_NOT_IN_CRITICAL);
  CHECK(manet_mutex_request(nullptr, now, 1, 0) == MANET_MUTEX_ERR_NULL_HANDLE);
  CHECK(std::string(manet_mutex_status_name(MANET_MUTEX_ERR_WRONG_ALGORITHM)) ==
        "MANET_MUTEX_ERR_WRONG_ALGORITHM");
  std::printf("ok %s: %d entries, fences up to %llu\n", name, total,
              static_cast<unsigned long long>(last_fence));
}

}  // namespace

int main() {
  CHECK(manet_mutex_abi_version() == MANET_MUTEX_ABI_VERSION);
  run(MANET_MUTEX_PRIORITIZED, "prioritized 2-of-k over discovery (C++)", 2);
  run(MANET_MUTEX_LOOK_AHEAD, "look-ahead (C++)", 1);
  return 0;
}
