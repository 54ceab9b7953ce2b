// An ns-3 Application that runs one manet-mutex node (any algorithm) through the C interface
// of crates/ffi over a UDP socket, with a Poisson workload and a fence-checking resource.
#ifndef MANET_MUTEX_NS3_MUTEX_APP_H
#define MANET_MUTEX_NS3_MUTEX_APP_H

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/random-variable-stream.h"
#include "ns3/socket.h"

#include "manet_mutex.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace manetmutex {

// The protected resource, one for the whole simulation. It keeps the highest fence admitted
// per lane and counts violations (a fence not above the last admitted one of its lane) and
// overlaps (more holders, or resources held, than `capacity` at once).
class FenceResource {
 public:
  explicit FenceResource(uint32_t capacity) : capacity_(capacity) {}
  // An entry with `resources` units and fence (lane, value). Returns false on a violation:
  // the entry is refused (not counted as holding) and *newest gets the lane's last fence.
  bool Admit(uint32_t node, uint32_t resources, uint32_t lane, uint64_t value,
             uint64_t* newest);
  // The node left (or lost its lease); its units are given back.
  void Leave(uint32_t node);
  uint64_t violations() const { return violations_; }
  uint64_t overlaps() const { return overlaps_; }
  uint64_t admitted() const { return admitted_; }
  uint32_t max_inside() const { return max_inside_; }

 private:
  uint32_t capacity_;
  std::map<uint32_t, uint64_t> last_;    // lane -> highest fence admitted
  std::map<uint32_t, uint32_t> inside_;  // node -> units held
  uint32_t held_ = 0;
  uint32_t max_inside_ = 0;
  uint64_t violations_ = 0;
  uint64_t overlaps_ = 0;
  uint64_t admitted_ = 0;
};

// What every node of a run shares.
struct MutexConfig {
  uint32_t algorithm = MANET_MUTEX_KRL;
  uint32_t nodes = 0;
  uint32_t k = 1;
  uint32_t resources = 1;      // units per request (prioritized h), else 1
  double lambda = 1.0;         // requests per second per node (Poisson, from release)
  double cs_time = 0.01;       // seconds in the critical section
  double warmup = 1.0;         // seconds before the first request may be drawn
  bool recovery = false;       // token recovery with leases
  uint64_t lease_us = 0;       // lease of recovery (token) or entries (permission)
  uint64_t retransmit_us = 0;  // permission: REQUEST resent after this long (0: default)
  uint64_t keepalive_us = 0;   // token: link keepalive (0: default 100 ms)
  uint64_t liveness_us = 0;    // token: link liveness (0: default 400 ms)
  uint64_t hello_us = 0;       // token: discovery hello interval (0: default 100 ms)
  int64_t idle_pause_us = -1;  // KRLF: hold an idle token this long (-1: default 5 ms)
  uint16_t port = 9999;
  std::vector<ns3::Ipv4Address> addresses;  // node id -> its address
  FenceResource* resource = nullptr;
};

// Per-node counters.
struct MutexCounters {
  uint64_t requests = 0;
  uint64_t entries = 0;
  uint64_t releases = 0;
  uint64_t lease_expired = 0;
  uint64_t violations = 0;     // entries the resource refused (fence not above the last)
  uint64_t unicast_sent = 0;   // datagrams sent to one peer
  uint64_t broadcast_sent = 0; // datagrams broadcast (discovery hellos)
  uint64_t bytes_sent = 0;
  uint64_t received = 0;       // datagrams received and handed to the node
  uint64_t unicast_received = 0;
  uint64_t hops = 0;           // IP hops of the unicast datagrams received (from the TTL)
  uint64_t send_failures = 0;  // Socket::SendTo refused
  uint64_t lost_events = 0;    // LOST events (link failed with messages in flight)
  uint64_t precious_lost = 0;  // tokens / resources in them
  uint64_t link_up = 0, link_down = 0, neighbour_up = 0, neighbour_down = 0;
  uint64_t token_regenerated = 0;
  uint64_t anomalies = 0;
  uint64_t ffi_errors = 0;     // calls that returned an error code
  std::vector<double> waits;   // seconds from request to entry, per entry
  manet_mutex_stats stats{};   // the driver's own counters at the end
};

class MutexApp : public ns3::Application {
 public:
  static ns3::TypeId GetTypeId();
  MutexApp();
  ~MutexApp() override;

  // Must be called before the application starts. Returns false (with `error`) if the
  // driver refuses the options.
  bool Setup(const MutexConfig* config, uint32_t id, std::string* error);
  const MutexCounters& counters() const { return counters_; }
  uint32_t id() const { return id_; }
  // Copies the driver's stats into the counters (call at the end of the run).
  void Snapshot();

 protected:
  void DoDispose() override;

 private:
  void StartApplication() override;
  void StopApplication() override;

  static uint64_t NowUs();
  void Check(int32_t rc, const char* what);
  void Receive(ns3::Ptr<ns3::Socket> socket);
  void OnTimer();
  void Pump();
  void ScheduleRequest();
  void DoRequest();
  void DoRelease();

  const MutexConfig* cfg_ = nullptr;
  uint32_t id_ = 0;
  manet_mutex_node* node_ = nullptr;
  ns3::Ptr<ns3::Socket> socket_;
  ns3::Ptr<ns3::ExponentialRandomVariable> think_;
  std::map<uint32_t, uint32_t> by_address_;  // Ipv4Address::Get() -> node id
  ns3::EventId timer_;
  uint64_t timer_at_ = UINT64_MAX;
  ns3::EventId request_event_;
  ns3::EventId release_event_;
  bool running_ = false;
  bool waiting_ = false;
  bool inside_ = false;
  ns3::Time requested_at_;
  MutexCounters counters_;
};

}  // namespace manetmutex

#endif
