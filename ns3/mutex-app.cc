#include "mutex-app.h"

#include "ns3/double.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-packet-info-tag.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace ns3;

namespace manetmutex {

NS_LOG_COMPONENT_DEFINE("ManetMutexApp");

bool FenceResource::Admit(uint32_t node, uint32_t resources, uint32_t lane, uint64_t value,
                          uint64_t* newest) {
  admitted_++;
  auto it = last_.find(lane);
  if (it != last_.end() && value <= it->second) {
    violations_++;
    *newest = it->second;
    return false;
  }
  last_[lane] = value;
  inside_[node] += resources;
  held_ += resources;
  if (held_ > max_inside_) max_inside_ = held_;
  if (held_ > capacity_) overlaps_++;
  return true;
}

void FenceResource::Leave(uint32_t node) {
  auto it = inside_.find(node);
  if (it == inside_.end()) return;
  held_ -= it->second;
  inside_.erase(it);
}

TypeId MutexApp::GetTypeId() {
  static TypeId tid = TypeId("manetmutex::MutexApp")
                          .SetParent<Application>()
                          .SetGroupName("Applications")
                          .AddConstructor<MutexApp>();
  return tid;
}

MutexApp::MutexApp() { think_ = CreateObject<ExponentialRandomVariable>(); }

MutexApp::~MutexApp() {
  if (node_ != nullptr) {
    manet_mutex_free(node_);
    node_ = nullptr;
  }
}

void MutexApp::DoDispose() {
  socket_ = nullptr;
  Application::DoDispose();
}

uint64_t MutexApp::NowUs() {
  int64_t us = Simulator::Now().GetMicroSeconds();
  return us < 0 ? 0 : static_cast<uint64_t>(us);
}

void MutexApp::Check(int32_t rc, const char* what) {
  if (rc >= 0) return;
  counters_.ffi_errors++;
  char msg[256];
  size_t len = 0;
  manet_mutex_last_error_message(msg, sizeof msg, &len);
  std::fprintf(stderr, "node %u: %s: %s (%s)\n", id_, what, manet_mutex_status_name(rc), msg);
}

bool MutexApp::Setup(const MutexConfig* config, uint32_t id, std::string* error) {
  cfg_ = config;
  id_ = id;
  manet_mutex_options o;
  int32_t rc = manet_mutex_options_default(config->algorithm, id, config->nodes, &o);
  if (rc == MANET_MUTEX_OK) {
    o.k = config->k;
    if (config->recovery) {
      o.recovery = true;
      o.lease_us = config->lease_us;
    } else if (config->lease_us > 0 && (config->algorithm == MANET_MUTEX_LOOK_AHEAD ||
                                        config->algorithm == MANET_MUTEX_RICART_AGRAWALA)) {
      o.lease_us = config->lease_us;
    }
    if (config->retransmit_us > 0 && !(config->algorithm == MANET_MUTEX_KRL ||
        config->algorithm == MANET_MUTEX_KRLF || config->algorithm == MANET_MUTEX_PRIORITIZED)) {
      o.retransmit_us = config->retransmit_us;
    }
    if (config->idle_pause_us >= 0 && config->algorithm == MANET_MUTEX_KRLF)
      o.idle_pause_us = static_cast<uint64_t>(config->idle_pause_us);
    if (config->keepalive_us > 0) o.session_keepalive_us = config->keepalive_us;
    if (config->liveness_us > 0) o.session_liveness_us = config->liveness_us;
    if (config->hello_us > 0) {
      o.hello_interval_us = config->hello_us;
      o.hello_jitter_us = config->hello_us / 4;
    }
    o.seed = 1;  // look-ahead's Info_set seed: the same on every node
    o.hello_seed = 0x6e73332d6d757478ULL;
    rc = manet_mutex_new(&o, NowUs(), &node_);
  }
  if (rc != MANET_MUTEX_OK) {
    char msg[256];
    size_t len = 0;
    manet_mutex_last_error_message(msg, sizeof msg, &len);
    *error = std::string(manet_mutex_status_name(rc)) + ": " + msg;
    node_ = nullptr;
    return false;
  }
  for (uint32_t i = 0; i < config->addresses.size(); i++) {
    by_address_[config->addresses[i].Get()] = i;
  }
  think_->SetAttribute("Mean", DoubleValue(1.0 / config->lambda));
  return true;
}

void MutexApp::StartApplication() {
  running_ = true;
  socket_ = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
  socket_->SetAllowBroadcast(true);
  socket_->SetIpRecvTtl(true);
  socket_->SetRecvPktInfo(true);
  if (socket_->Bind(InetSocketAddress(Ipv4Address::GetAny(), cfg_->port)) != 0) {
    std::fprintf(stderr, "node %u: cannot bind UDP port %u\n", id_, cfg_->port);
    return;
  }
  socket_->SetRecvCallback(MakeCallback(&MutexApp::Receive, this));
  // The driver was created at time 0; a timeout now starts discovery's hellos.
  Check(manet_mutex_handle_timeout(node_, NowUs()), "handle_timeout");
  Pump();
  // The first request after the warm-up (discovery, routes) plus an exponential think time.
  request_event_ = Simulator::Schedule(Seconds(cfg_->warmup + think_->GetValue()),
                                       &MutexApp::DoRequest, this);
}

void MutexApp::StopApplication() {
  running_ = false;
  Simulator::Cancel(timer_);
  Simulator::Cancel(request_event_);
  Simulator::Cancel(release_event_);
  if (socket_) {
    socket_->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
    socket_->Close();
  }
  Snapshot();
}

void MutexApp::Snapshot() {
  if (node_ != nullptr) manet_mutex_get_stats(node_, &counters_.stats);
}

void MutexApp::Receive(Ptr<Socket> socket) {
  Address from;
  Ptr<Packet> packet;
  uint8_t buf[MANET_MUTEX_MAX_DATAGRAM];
  while ((packet = socket->RecvFrom(from))) {
    if (!running_) continue;
    if (!InetSocketAddress::IsMatchingType(from)) continue;
    Ipv4Address ip = InetSocketAddress::ConvertFrom(from).GetIpv4();
    auto it = by_address_.find(ip.Get());
    if (it == by_address_.end() || it->second == id_) continue;
    uint32_t size = packet->GetSize();
    if (size > sizeof buf) continue;  // never from a manet-mutex node
    SocketIpTtlTag ttl;
    bool has_ttl = packet->RemovePacketTag(ttl);
    Ipv4PacketInfoTag info;
    bool has_info = packet->RemovePacketTag(info);
    packet->CopyData(buf, size);
    int32_t rc = manet_mutex_handle_datagram(node_, NowUs(), it->second, buf, size);
    Check(rc, "handle_datagram");
    if (rc == MANET_MUTEX_OK) {
      counters_.received++;
      // A unicast datagram made 64 - TTL + 1 IP hops (ns-3's default TTL is 64); broadcasts
      // (discovery hellos) are not counted.
      if (has_ttl && has_info && !info.GetAddress().IsBroadcast() && ttl.GetTtl() <= 64) {
        counters_.unicast_received++;
        counters_.hops += 64u - ttl.GetTtl() + 1u;
      }
    }
  }
  Pump();
}

void MutexApp::OnTimer() {
  timer_at_ = UINT64_MAX;
  if (!running_) return;
  Check(manet_mutex_handle_timeout(node_, NowUs()), "handle_timeout");
  Pump();
}

void MutexApp::Pump() {
  if (!running_ || node_ == nullptr) return;
  manet_mutex_event ev;
  int32_t rc;
  while ((rc = manet_mutex_poll_event(node_, &ev)) == MANET_MUTEX_OK) {
    switch (ev.kind) {
      case MANET_MUTEX_EVENT_ENTERED: {
        waiting_ = false;
        inside_ = true;
        counters_.entries++;
        counters_.waits.push_back((Simulator::Now() - requested_at_).GetSeconds());
        uint64_t newest = 0;
        if (cfg_->resource->Admit(id_, ev.resources, ev.fence_lane, ev.fence_value, &newest)) {
          release_event_ =
              Simulator::Schedule(Seconds(cfg_->cs_time), &MutexApp::DoRelease, this);
        } else {
          // Refused by the resource: tell a token node (it moves its token above the
          // newest fence), and leave at once without using the resource.
          counters_.violations++;
          if (cfg_->algorithm == MANET_MUTEX_KRL || cfg_->algorithm == MANET_MUTEX_KRLF ||
              cfg_->algorithm == MANET_MUTEX_PRIORITIZED) {
            Check(manet_mutex_refused(node_, NowUs(), ev.fence_lane, ev.fence_value,
                                      ev.fence_lane, newest),
                  "refused");
          }
          release_event_ = Simulator::ScheduleNow(&MutexApp::DoRelease, this);
        }
        break;
      }
      case MANET_MUTEX_EVENT_LEASE_EXPIRED:
        counters_.lease_expired++;
        if (inside_) {
          Simulator::Cancel(release_event_);
          release_event_ = Simulator::ScheduleNow(&MutexApp::DoRelease, this);
        }
        break;
      case MANET_MUTEX_EVENT_LOST:
        counters_.lost_events++;
        counters_.precious_lost += ev.precious;
        break;
      case MANET_MUTEX_EVENT_LINK_UP: counters_.link_up++; break;
      case MANET_MUTEX_EVENT_LINK_DOWN: counters_.link_down++; break;
      case MANET_MUTEX_EVENT_NEIGHBOUR_UP: counters_.neighbour_up++; break;
      case MANET_MUTEX_EVENT_NEIGHBOUR_DOWN: counters_.neighbour_down++; break;
      case MANET_MUTEX_EVENT_TOKEN_REGENERATED: counters_.token_regenerated++; break;
      case MANET_MUTEX_EVENT_ANOMALY: counters_.anomalies++; break;
      default: break;  // PERSIST needs no storage here (no restarts); the rest: counted by the driver
    }
  }
  Check(rc, "poll_event");
  uint8_t buf[MANET_MUTEX_MAX_DATAGRAM];
  size_t len = 0;
  uint32_t to = 0;
  bool broadcast = false;
  while ((rc = manet_mutex_poll_transmit(node_, buf, sizeof buf, &len, &to, &broadcast)) ==
         MANET_MUTEX_OK) {
    Ptr<Packet> p = Create<Packet>(buf, static_cast<uint32_t>(len));
    Ipv4Address dest;
    if (broadcast || to == MANET_MUTEX_BROADCAST) {
      dest = Ipv4Address("255.255.255.255");
      counters_.broadcast_sent++;
    } else if (to < cfg_->addresses.size()) {
      dest = cfg_->addresses[to];
      counters_.unicast_sent++;
    } else {
      counters_.ffi_errors++;
      continue;
    }
    counters_.bytes_sent += len;
    if (socket_->SendTo(p, 0, InetSocketAddress(dest, cfg_->port)) < 0) {
      counters_.send_failures++;
    }
  }
  Check(rc, "poll_transmit");
  uint64_t deadline = 0;
  bool armed = false;
  Check(manet_mutex_poll_timeout(node_, &deadline, &armed), "poll_timeout");
  if (armed) {
    uint64_t now = NowUs();
    if (deadline < now) deadline = now;
    if (deadline != timer_at_) {
      Simulator::Cancel(timer_);
      timer_at_ = deadline;
      // A far deadline (the driver may answer "never" with a huge value) must not overflow
      // ns-3's signed nanoseconds: cap the wait at a day, then ask again.
      uint64_t wait = std::min<uint64_t>(deadline - now, 86400ULL * 1000000ULL);
      timer_ = Simulator::Schedule(MicroSeconds(static_cast<int64_t>(wait)), &MutexApp::OnTimer,
                                   this);
    }
  } else if (timer_at_ != UINT64_MAX) {
    Simulator::Cancel(timer_);
    timer_at_ = UINT64_MAX;
  }
}

void MutexApp::ScheduleRequest() {
  request_event_ = Simulator::Schedule(Seconds(think_->GetValue()), &MutexApp::DoRequest, this);
}

void MutexApp::DoRequest() {
  if (!running_ || waiting_ || inside_) return;
  uint32_t units = cfg_->algorithm == MANET_MUTEX_PRIORITIZED ? cfg_->resources : 1;
  int32_t rc = manet_mutex_request(node_, NowUs(), units, 0);
  Check(rc, "request");
  if (rc == MANET_MUTEX_OK) {
    counters_.requests++;
    waiting_ = true;
    requested_at_ = Simulator::Now();
  } else {
    ScheduleRequest();
  }
  Pump();
}

void MutexApp::DoRelease() {
  if (!running_ || !inside_) return;
  inside_ = false;
  cfg_->resource->Leave(id_);
  int32_t rc = manet_mutex_release(node_, NowUs());
  Check(rc, "release");
  if (rc == MANET_MUTEX_OK) counters_.releases++;
  ScheduleRequest();
  Pump();
}

}  // namespace manetmutex
