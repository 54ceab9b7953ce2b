// manet-mutex inside ns-3: every node of an 802.11b ad hoc network runs one algorithm of
// manet-mutex (KRL, KRLF, prioritized h-out-of-k, look-ahead, Ricart–Agrawala) through the C
// interface of crates/ffi, over UDP; a Poisson workload; a fence-checking resource; one CSV
// row per run (and per node) in the columns of `simulate --csv`. See ns3/README.md.

#include "mutex-app.h"

#include "ns3/aodv-helper.h"
#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-interface-container.h"
#include "ns3/ipv4-list-routing-helper.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/mobility-helper.h"
#include "ns3/mobility-model.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/ns2-mobility-helper.h"
#include "ns3/olsr-helper.h"
#include "ns3/pointer.h"
#include "ns3/position-allocator.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "ns3/wifi-helper.h"
#include "ns3/wifi-mac-helper.h"
#include "ns3/yans-wifi-helper.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;
using manetmutex::MutexApp;
using manetmutex::MutexConfig;
using manetmutex::MutexCounters;

namespace {

struct Flags {
  std::string algorithm = "krl";
  uint32_t nodes = 0;  // 0: 10, or the trace's node count
  uint32_t k = 0;      // 0: 1 (permission, KRL), 2 (prioritized)
  uint32_t resources = 1;
  double time = 20.0;
  double warmup = 1.0;
  double lambda = 1.0;
  double cs = 0.01;
  uint32_t seed = 1;
  std::string mobility = "none";
  std::string placement = "random";
  double area = 150.0;
  double spacing = 50.0;
  double speed = 5.0;
  double min_speed = 1.0;
  double pause = 2.0;
  std::string trace;
  std::string routing = "auto";
  bool recovery = false;
  double lease = 0.0;
  double retransmit = 0.0;  // 0: the driver's 20 ms
  double keepalive = 0.0, liveness = 0.0, hello = 0.0;  // 0: the driver's defaults
  double idle_pause = -1;  // KRLF; negative: the driver's 5 ms
  double range = 0.0;  // 0: the measured default of ns3/README.md
  std::string csv = "-";
  bool per_node = true;
  uint16_t port = 9999;
};

// The transmission range of the PHY below: 802.11b at 11 Mbit/s, log-distance exponent 3,
// 16.02 dBm; two nodes exchange datagrams at 50 m and none at 52 m (ns3/README.md).
const double kDefaultRange = 51.0;

int Fail(const std::string& msg) {
  std::cerr << "manet-mutex-sim: " << msg << "\n(see --help)\n";
  return 2;
}

bool IsToken(uint32_t a) {
  return a == MANET_MUTEX_KRL || a == MANET_MUTEX_KRLF || a == MANET_MUTEX_PRIORITIZED;
}

// The node count of an ns-2 trace (highest $node_(i) + 1), or -1 if unreadable / none.
int TraceNodes(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read the ns-2 trace `" + path + "`";
    return -1;
  }
  std::regex re("\\$node_\\((\\d+)\\)");
  std::string line;
  int most = -1;
  while (std::getline(in, line)) {
    for (std::sregex_iterator it(line.begin(), line.end(), re), end; it != end; ++it) {
      most = std::max(most, std::stoi((*it)[1].str()));
    }
  }
  if (most < 0) {
    *error = "the ns-2 trace `" + path + "` names no $node_(i)";
    return -1;
  }
  return most + 1;
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::string Short(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Connectivity sampled once per simulated second: the fraction of node pairs within `range`.
struct ConnectivitySampler {
  NodeContainer nodes;
  double range = 0;
  double sum = 0;
  uint64_t samples = 0;
  void Sample() {
    uint32_t n = nodes.GetN();
    if (n >= 2) {
      uint64_t links = 0, pairs = 0;
      for (uint32_t i = 0; i < n; i++) {
        Vector a = nodes.Get(i)->GetObject<MobilityModel>()->GetPosition();
        for (uint32_t j = i + 1; j < n; j++) {
          Vector b = nodes.Get(j)->GetObject<MobilityModel>()->GetPosition();
          pairs++;
          if (CalculateDistance(a, b) <= range) links++;
        }
      }
      sum += static_cast<double>(links) / static_cast<double>(pairs);
      samples++;
    }
    Simulator::Schedule(Seconds(1.0), &ConnectivitySampler::Sample, this);
  }
  double Mean() const { return samples ? sum / static_cast<double>(samples) : 1.0; }
};

double Percentile99(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t idx = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(v.size())));
  if (idx > 0) idx--;
  return v[std::min(idx, v.size() - 1)];
}

}  // namespace

int main(int argc, char* argv[]) {
  auto wall_start = std::chrono::steady_clock::now();
  Flags f;
  CommandLine cmd(__FILE__);
  cmd.Usage("manet-mutex inside ns-3: one algorithm of manet-mutex on every node of an "
            "802.11b ad hoc network (see ns3/README.md).");
  cmd.AddValue("algorithm", "krl | krlf | prioritized | look-ahead | ra", f.algorithm);
  cmd.AddValue("nodes", "number of nodes (default 10, or the ns-2 trace's node count)", f.nodes);
  cmd.AddValue("k", "KRL/KRLF tokens, prioritized resources (default 1; 2 for prioritized); "
                    "permission algorithms: 1", f.k);
  cmd.AddValue("resources", "prioritized: resources per request (h, 1..k)", f.resources);
  cmd.AddValue("time", "simulated seconds", f.time);
  cmd.AddValue("warmup", "seconds before the first request may be drawn (discovery, routes)",
               f.warmup);
  cmd.AddValue("lambda", "requests per second per node (Poisson, from each release)", f.lambda);
  cmd.AddValue("cs", "seconds in the critical section", f.cs);
  cmd.AddValue("seed", "run number of ns-3's random streams (>= 1)", f.seed);
  cmd.AddValue("mobility", "none | rwp (random waypoint) | ns2 (--trace)", f.mobility);
  cmd.AddValue("placement", "mobility none: random (uniform in --area) | line (--spacing apart)",
               f.placement);
  cmd.AddValue("area", "side of the square (m) for random placement and random waypoint",
               f.area);
  cmd.AddValue("spacing", "placement line: metres between neighbours", f.spacing);
  cmd.AddValue("speed", "random waypoint: highest speed (m/s)", f.speed);
  cmd.AddValue("min-speed", "random waypoint: lowest speed (m/s)", f.min_speed);
  cmd.AddValue("pause", "random waypoint: pause at each waypoint (s)", f.pause);
  cmd.AddValue("trace", "mobility ns2: the ns-2 movement file (e.g. examples/data/waypoint-20.ns2)",
               f.trace);
  cmd.AddValue("routing", "auto | aodv | olsr | none (permission algorithms; token algorithms "
                          "are one hop: none). auto: none for token, aodv for permission",
               f.routing);
  cmd.AddValue("recovery", "token algorithms: recovery of lost tokens (needs --lease)",
               f.recovery);
  cmd.AddValue("retransmit", "permission: seconds before a REQUEST is resent (0: the driver's "
                             "20 ms)", f.retransmit);
  cmd.AddValue("keepalive", "token: seconds before an idle link gets a keepalive (0: 0.1)",
               f.keepalive);
  cmd.AddValue("liveness", "token: seconds of silence that fail a link (0: 0.4)", f.liveness);
  cmd.AddValue("hello", "token: seconds between discovery hellos (0: 0.1; jitter a quarter)",
               f.hello);
  cmd.AddValue("idle-pause", "KRLF: seconds an idle token is held before it is forwarded "
                             "(default: the driver's 0.005; 0 forwards at once, the paper)",
               f.idle_pause);
  cmd.AddValue("lease", "seconds of lease per entry (token recovery; permission leases)", f.lease);
  cmd.AddValue("range", "metres counted as a link for the connectivity column (0: 51, the "
                        "measured range of the PHY)", f.range);
  cmd.AddValue("csv", "output CSV path (- for stdout)", f.csv);
  cmd.AddValue("per-node", "also write one row per node (node column = id)", f.per_node);
  cmd.AddValue("port", "UDP port", f.port);
  cmd.Parse(argc, argv);

  // ---- Validate every flag before anything starts.
  uint32_t algorithm;
  std::string name;
  if (f.algorithm == "krl") algorithm = MANET_MUTEX_KRL, name = "KRL";
  else if (f.algorithm == "krlf") algorithm = MANET_MUTEX_KRLF, name = "KRLF";
  else if (f.algorithm == "prioritized") algorithm = MANET_MUTEX_PRIORITIZED, name = "prioritized";
  else if (f.algorithm == "look-ahead" || f.algorithm == "look_ahead")
    algorithm = MANET_MUTEX_LOOK_AHEAD, name = "look_ahead";
  else if (f.algorithm == "ra" || f.algorithm == "ricart-agrawala")
    algorithm = MANET_MUTEX_RICART_AGRAWALA, name = "ricart_agrawala";
  else
    return Fail("unknown --algorithm `" + f.algorithm +
                "` (known: krl, krlf, prioritized, look-ahead, ra)");
  bool token = IsToken(algorithm);

  if (f.mobility != "none" && f.mobility != "rwp" && f.mobility != "ns2")
    return Fail("unknown --mobility `" + f.mobility + "` (known: none, rwp, ns2)");
  int trace_nodes = 0;
  if (f.mobility == "ns2") {
    if (f.trace.empty()) return Fail("--mobility=ns2 needs --trace=FILE");
    std::string err;
    trace_nodes = TraceNodes(f.trace, &err);
    if (trace_nodes < 0) return Fail(err);
    if (f.nodes == 0) f.nodes = static_cast<uint32_t>(trace_nodes);
    if (f.nodes > static_cast<uint32_t>(trace_nodes))
      return Fail("--nodes=" + std::to_string(f.nodes) + " but the trace moves only " +
                  std::to_string(trace_nodes) + " nodes");
  } else if (!f.trace.empty()) {
    return Fail("--trace is for --mobility=ns2");
  }
  if (f.nodes == 0) f.nodes = 10;
  if (f.nodes < 2 || f.nodes > 1000) return Fail("--nodes must be in 2..1000");
  if (f.k == 0) f.k = algorithm == MANET_MUTEX_PRIORITIZED ? 2 : 1;
  if (!token && f.k != 1) return Fail("--k must be 1 for look-ahead and ra");
  if ((algorithm == MANET_MUTEX_KRL || algorithm == MANET_MUTEX_KRLF) && f.k > f.nodes)
    return Fail("--k (tokens) must be in 1..nodes");
  if (algorithm == MANET_MUTEX_PRIORITIZED && (f.resources < 1 || f.resources > f.k))
    return Fail("--resources must be in 1..k");
  if (algorithm != MANET_MUTEX_PRIORITIZED && f.resources != 1)
    return Fail("--resources is for prioritized");
  if (!(f.time > 0) || f.time > 1e6) return Fail("--time must be in (0, 1e6] seconds");
  if (!(f.warmup >= 0) || f.warmup >= f.time) return Fail("--warmup must be in [0, time)");
  if (!(f.lambda > 0) || !std::isfinite(f.lambda)) return Fail("--lambda must be > 0");
  if (!(f.cs > 0) || f.cs > f.time) return Fail("--cs must be in (0, time] seconds");
  if (f.seed < 1) return Fail("--seed must be >= 1");
  if (f.placement != "random" && f.placement != "line")
    return Fail("unknown --placement `" + f.placement + "` (known: random, line)");
  if (!(f.area > 0) || !std::isfinite(f.area)) return Fail("--area must be > 0 metres");
  if (!(f.spacing > 0) || !std::isfinite(f.spacing)) return Fail("--spacing must be > 0 metres");
  if (f.mobility == "rwp") {
    if (!(f.min_speed > 0) || !(f.speed >= f.min_speed) || !std::isfinite(f.speed))
      return Fail("random waypoint needs 0 < --min-speed <= --speed");
    if (!(f.pause >= 0) || !std::isfinite(f.pause)) return Fail("--pause must be >= 0");
  }
  if (f.routing == "auto") f.routing = token ? "none" : "aodv";
  if (f.routing != "none" && f.routing != "aodv" && f.routing != "olsr")
    return Fail("unknown --routing `" + f.routing + "` (known: auto, aodv, olsr, none)");
  if (token && f.routing != "none")
    return Fail("token algorithms talk one hop to the neighbours discovery finds: --routing "
                "must be none (routing is for look-ahead and ra)");
  if (f.recovery && !token) return Fail("--recovery is for token algorithms");
  if (f.recovery && !(f.lease > 0)) return Fail("--recovery needs --lease > 0 seconds");
  if (!(f.lease >= 0) || f.lease > 1e6) return Fail("--lease must be in [0, 1e6] seconds");
  if (f.lease > 0 && token && !f.recovery) return Fail("token leases come with --recovery");
  if (!(f.retransmit >= 0) || f.retransmit > 1e3) return Fail("--retransmit must be in [0, 1000] seconds");
  if (f.retransmit > 0 && token) return Fail("--retransmit is for look-ahead and ra");
  for (double v : {f.keepalive, f.liveness, f.hello})
    if (!(v >= 0) || v > 1e3) return Fail("--keepalive, --liveness, --hello must be in [0, 1000] s");
  if ((f.keepalive > 0 || f.liveness > 0 || f.hello > 0) && !token)
    return Fail("--keepalive, --liveness, --hello are for the token algorithms");
  if (f.idle_pause >= 0 && algorithm != MANET_MUTEX_KRLF)
    return Fail("--idle-pause is for krlf");
  if (f.idle_pause > 1e3) return Fail("--idle-pause must be at most 1000 s");
  if (f.range == 0) f.range = kDefaultRange;
  if (!(f.range > 0)) return Fail("--range must be > 0 metres");
  if (f.port == 0) return Fail("--port must be in 1..65535");
  std::ofstream csv_file;
  if (f.csv != "-") {
    csv_file.open(f.csv);
    if (!csv_file) return Fail("cannot write --csv `" + f.csv + "`");
  }
  std::ostream& csv = f.csv == "-" ? std::cout : csv_file;

  // ---- Randomness: one run number per seed.
  RngSeedManager::SetSeed(12345);
  RngSeedManager::SetRun(f.seed);
  int64_t stream = 0;

  NodeContainer nodes;
  nodes.Create(f.nodes);

  // ---- 802.11b ad hoc: Yans PHY, log-distance loss, every frame at 11 Mbit/s DSSS.
  Config::SetDefault("ns3::WifiRemoteStationManager::NonUnicastMode",
                     StringValue("DsssRate11Mbps"));
  WifiHelper wifi;
  wifi.SetStandard(WIFI_STANDARD_80211b);
  wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode",
                               StringValue("DsssRate11Mbps"), "ControlMode",
                               StringValue("DsssRate11Mbps"));
  YansWifiChannelHelper channel;
  channel.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel");
  channel.AddPropagationLoss("ns3::LogDistancePropagationLossModel", "Exponent",
                             DoubleValue(3.0), "ReferenceDistance", DoubleValue(1.0),
                             "ReferenceLoss", DoubleValue(46.6777));
  YansWifiPhyHelper phy;
  phy.Set("TxPowerStart", DoubleValue(16.0206));
  phy.Set("TxPowerEnd", DoubleValue(16.0206));
  phy.SetChannel(channel.Create());
  WifiMacHelper mac;
  mac.SetType("ns3::AdhocWifiMac");
  NetDeviceContainer devices = wifi.Install(phy, mac, nodes);
  stream += wifi.AssignStreams(devices, stream);

  // ---- Mobility.
  std::string mobility_label = f.mobility;
  if (f.mobility == "ns2") {
    Ns2MobilityHelper ns2(f.trace);
    ns2.Install(nodes.Begin(), nodes.End());
    std::string base = f.trace.substr(f.trace.find_last_of('/') + 1);
    mobility_label = "ns2:" + base;
  } else {
    MobilityHelper mobility;
    std::string u = "ns3::UniformRandomVariable[Min=0.0|Max=" + Short(f.area) + "]";
    Ptr<PositionAllocator> alloc;
    if (f.placement == "line") {
      Ptr<ListPositionAllocator> list = CreateObject<ListPositionAllocator>();
      for (uint32_t i = 0; i < f.nodes; i++) list->Add(Vector(f.spacing * i, 0, 0));
      alloc = list;
    } else {
      Ptr<RandomRectanglePositionAllocator> rect = CreateObject<RandomRectanglePositionAllocator>();
      rect->SetAttribute("X", StringValue(u));
      rect->SetAttribute("Y", StringValue(u));
      stream += rect->AssignStreams(stream);
      alloc = rect;
    }
    mobility.SetPositionAllocator(alloc);
    if (f.mobility == "rwp") {
      Ptr<RandomRectanglePositionAllocator> way = CreateObject<RandomRectanglePositionAllocator>();
      way->SetAttribute("X", StringValue(u));
      way->SetAttribute("Y", StringValue(u));
      stream += way->AssignStreams(stream);
      mobility.SetMobilityModel(
          "ns3::RandomWaypointMobilityModel", "Speed",
          StringValue("ns3::UniformRandomVariable[Min=" + Short(f.min_speed) +
                      "|Max=" + Short(f.speed) + "]"),
          "Pause", StringValue("ns3::ConstantRandomVariable[Constant=" + Short(f.pause) + "]"),
          "PositionAllocator", PointerValue(way));
      mobility_label = "rwp:" + Short(f.min_speed) + "-" + Short(f.speed) + "/" + Short(f.pause);
    } else {
      mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
      mobility_label = f.placement == "line" ? "none:line" + Short(f.spacing) : "none";
    }
    mobility.Install(nodes);
    stream += mobility.AssignStreams(nodes, stream);
  }

  // ---- IP and routing.
  InternetStackHelper internet;
  AodvHelper aodv;
  OlsrHelper olsr;
  Ipv4StaticRoutingHelper static_routing;
  Ipv4ListRoutingHelper list;
  if (f.routing == "aodv") {
    internet.SetRoutingHelper(aodv);
  } else if (f.routing == "olsr") {
    list.Add(static_routing, 0);
    list.Add(olsr, 10);
    internet.SetRoutingHelper(list);
  }
  internet.Install(nodes);
  if (f.routing == "aodv") stream += aodv.AssignStreams(nodes, stream);
  if (f.routing == "olsr") stream += olsr.AssignStreams(nodes, stream);
  Ipv4AddressHelper ipv4;
  ipv4.SetBase("10.1.0.0", "255.255.0.0");
  Ipv4InterfaceContainer ifaces = ipv4.Assign(devices);

  // ---- The algorithm on every node.
  uint32_t capacity = token ? f.k : 1;
  manetmutex::FenceResource resource(capacity);
  MutexConfig cfg;
  cfg.algorithm = algorithm;
  cfg.nodes = f.nodes;
  cfg.k = f.k;
  cfg.resources = f.resources;
  cfg.lambda = f.lambda;
  cfg.cs_time = f.cs;
  cfg.warmup = f.warmup;
  cfg.recovery = f.recovery;
  cfg.lease_us = static_cast<uint64_t>(f.lease * 1e6);
  cfg.retransmit_us = static_cast<uint64_t>(f.retransmit * 1e6);
  cfg.keepalive_us = static_cast<uint64_t>(f.keepalive * 1e6);
  cfg.liveness_us = static_cast<uint64_t>(f.liveness * 1e6);
  cfg.hello_us = static_cast<uint64_t>(f.hello * 1e6);
  cfg.idle_pause_us = f.idle_pause >= 0 ? static_cast<int64_t>(f.idle_pause * 1e6) : -1;
  cfg.port = f.port;
  cfg.resource = &resource;
  for (uint32_t i = 0; i < f.nodes; i++) cfg.addresses.push_back(ifaces.GetAddress(i));
  std::vector<Ptr<MutexApp>> apps;
  for (uint32_t i = 0; i < f.nodes; i++) {
    Ptr<MutexApp> app = CreateObject<MutexApp>();
    std::string err;
    if (!app->Setup(&cfg, i, &err)) return Fail("the C interface refused node " +
                                                std::to_string(i) + ": " + err);
    app->SetStartTime(Seconds(0));
    app->SetStopTime(Seconds(f.time));
    nodes.Get(i)->AddApplication(app);
    apps.push_back(app);
  }
  // The apps' think times: streams after those of the stack.
  // (ExponentialRandomVariable of each app is created in its constructor.)

  ConnectivitySampler sampler;
  sampler.nodes = nodes;
  sampler.range = f.range;
  Simulator::ScheduleNow(&ConnectivitySampler::Sample, &sampler);

  Simulator::Stop(Seconds(f.time));
  Simulator::Run();
  uint64_t events = Simulator::GetEventCount();
  for (auto& a : apps) a->Snapshot();

  // ---- Results: one row for the run (node = all) and one per node.
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::string cols =
      "algorithm,nodes,k,area,connectivity,mobility,routing,load,cs_time,node,seed,"
      "cs_entries,mean_wait,p99_wait,max_wait,messages_per_cs,hops_per_cs,"
      "raises_per_link_change,events,"
      "requests,unicast_sent,broadcast_sent,bytes_sent,received,retransmitted,lost,"
      "precious_lost,lease_expired,link_down,neighbour_down,send_failures,ffi_errors,"
      "violations,overlaps,max_inside,sim_seconds,wall_seconds,core_messages,"
      "core_messages_per_cs";
  csv << cols << "\n";
  auto row = [&](const std::string& node, const MutexCounters& c) {
    double mean = c.waits.empty() ? 0.0
                                  : std::accumulate(c.waits.begin(), c.waits.end(), 0.0) /
                                        static_cast<double>(c.waits.size());
    double mx = c.waits.empty() ? 0.0 : *std::max_element(c.waits.begin(), c.waits.end());
    double entries = static_cast<double>(c.entries);
    double msgs = entries > 0 ? static_cast<double>(c.unicast_sent) / entries : 0.0;
    // The algorithm's own messages (the driver's count; no session frame or hello).
    double core = entries > 0 ? static_cast<double>(c.stats.messages_sent) / entries : 0.0;
    double hops = entries > 0 ? static_cast<double>(c.hops) / entries : 0.0;
    bool all = node == "all";
    csv << name << "," << f.nodes << "," << f.k << ","
        << (f.mobility == "ns2" ? std::string("trace") : Short(f.area)) << ","
        << Num(sampler.Mean()) << "," << mobility_label << "," << f.routing << ","
        << Short(f.lambda) << "," << Short(f.cs) << "," << node << "," << f.seed << ","
        << c.entries << "," << Num(mean) << "," << Num(Percentile99(c.waits)) << "," << Num(mx)
        << "," << Num(msgs) << "," << Num(hops) << "," << Num(0.0) << ","
        << (all ? events : 0) << "," << c.requests << "," << c.unicast_sent << ","
        << c.broadcast_sent << "," << c.bytes_sent << "," << c.received << ","
        << c.stats.retransmitted << "," << c.lost_events << "," << c.precious_lost << ","
        << c.lease_expired << "," << c.link_down << "," << c.neighbour_down << ","
        << c.send_failures << "," << c.ffi_errors << ","
        << (all ? resource.violations() : c.violations) << ","
        << (all ? resource.overlaps() : 0) << "," << (all ? resource.max_inside() : 0) << ","
        << Short(f.time) << "," << (all ? Num(wall) : Num(0.0)) << ","
        << c.stats.messages_sent << "," << Num(core) << "\n";
  };
  MutexCounters total;
  for (auto& a : apps) {
    const MutexCounters& c = a->counters();
    total.requests += c.requests;
    total.entries += c.entries;
    total.lease_expired += c.lease_expired;
    total.violations += c.violations;
    total.unicast_sent += c.unicast_sent;
    total.broadcast_sent += c.broadcast_sent;
    total.bytes_sent += c.bytes_sent;
    total.received += c.received;
    total.hops += c.hops;
    total.send_failures += c.send_failures;
    total.lost_events += c.lost_events;
    total.precious_lost += c.precious_lost;
    total.link_down += c.link_down;
    total.neighbour_down += c.neighbour_down;
    total.ffi_errors += c.ffi_errors;
    total.stats.retransmitted += c.stats.retransmitted;
    total.stats.messages_sent += c.stats.messages_sent;
    total.waits.insert(total.waits.end(), c.waits.begin(), c.waits.end());
  }
  row("all", total);
  if (f.per_node) {
    for (auto& a : apps) row(std::to_string(a->id()), a->counters());
  }
  csv.flush();
  std::fprintf(stderr,
               "%s: %u nodes, %.1f s simulated in %.2f s: %llu entries, %llu violations, "
               "%llu overlaps, connectivity %.2f\n",
               name.c_str(), f.nodes, f.time, wall, (unsigned long long)total.entries,
               (unsigned long long)resource.violations(),
               (unsigned long long)resource.overlaps(), sampler.Mean());
  Simulator::Destroy();
  return 0;
}
