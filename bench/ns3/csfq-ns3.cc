// The scenarios of `bench/ns3/compare.py`, written for ns-3 (3.44): csfq-fig3a,
// csfq-fig3b and scale-1000, as `scenarios/*.toml` describes them.
//
//   csfq-ns3 --case=fig3a|fig3b|scale1000 --queue=fifo|fqcodel --config=defaults|expert
//            --out=flows.csv
//
// Two configurations of the same model, which must give the same per-flow output:
// - defaults: ns-3's own (the weak end-system model; static routing under list routing).
//   Each router has one interface per flow, so on scale-1000 every packet at a router
//   scans ~1000 interfaces for its destination address (twice: list routing, then static
//   routing) and ~1000 /30 routes for the longest prefix.
// - expert: what an ns-3 user removes on such a topology. `ns3::Ipv4::StrongEndSystemModel`
//   (an address counts as local only on the interface it arrived on) and HashedRouting
//   below, which looks each destination host up in a hash table built once from the
//   topology, in place of list and static routing. Neither changes what is sent where or
//   when, so per-flow output and event counts are those of `defaults`.
//
// Topology, as in the csfq simulator: each flow has its own sender and receiver host,
// joined to routers r1 and r2 by private access links; r1 -> r2 is the bottleneck.
// Packets are 1000 bytes at the IP layer (UDP payload 972, TCP segment 960 with no
// options), as the papers' and csfq's 1000-byte packets. TCP: NewReno with classic
// fast recovery, no SACK, no timestamps, no limited transmit, no delayed ACKs, initial
// window 1 segment, receiver window 64 segments, minimum RTO 200 ms and clock
// granularity 100 ms (csfq's defaults, `[tcp]` in a scenario). UDP: csfq's source, a constant mean rate whose gaps
// are uniform on [0.5, 1.5] x the mean (`jitter = 0.5`).
//
// Queues: the bottleneck's queue disc is the only queue that fills; the device queue
// under it holds one packet. FIFO: a byte-limited FifoQueueDisc of the scenario's buffer.
// FQ-CoDel: ns-3's FqCoDelQueueDisc with 1024 flows, target 5 ms, interval 100 ms, and a
// limit of buffer / 1000 packets (csfq's FQ-CoDel limits bytes). Access links and the
// reverse direction carry no queue disc (device queues of 10 000 packets).
//
// Writes one row per flow: id, kind, throughput over the run in Mbit/s at the IP layer
// (csfq's `throughput_mbps`), and prints the build and run wall times and event count.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace ns3;

namespace
{

struct Case
{
    double linkMbps;
    double linkDelayMs;
    uint32_t bufferBytes;
    double accessMbps;
    double accessDelayMs;
    std::vector<double> udpMbps; // one entry per UDP flow (flows 0..)
    uint32_t tcpFlows;           // after the UDP flows
    double durationS;
};

bool
MakeCase(const std::string& name, Case& c)
{
    if (name == "fig3a")
    {
        c = Case{10, 1, 64000, 100, 1, {}, 0, 10};
        for (int i = 0; i < 32; ++i)
        {
            c.udpMbps.push_back(0.3125 * (i + 1));
        }
        return true;
    }
    if (name == "fig3b")
    {
        c = Case{10, 1, 64000, 100, 1, {10.0}, 31, 10};
        return true;
    }
    if (name == "scale1000")
    {
        c = Case{1000, 1, 1000000, 10000, 1, {1000.0}, 999, 10};
        return true;
    }
    return false;
}

/// csfq's UDP source: 1000-byte packets at a mean rate, each gap uniform on
/// [1 - jitter, 1 + jitter] x the mean gap. Its random stream is given (the flow's
/// index), so that its draws do not depend on how many random variables the rest of
/// the model creates before it (ns-3 numbers streams in order of creation, and list
/// routing's global routing makes one per node where HashedRouting makes none).
class JitteredCbr : public Application
{
  public:
    JitteredCbr(Address to, double mbps, uint32_t payload, double jitter, int64_t stream)
        : m_to(to),
          m_payload(payload),
          m_meanGapS(1000.0 * 8 / (mbps * 1e6)),
          m_jitter(jitter),
          m_uniform(CreateObject<UniformRandomVariable>())
    {
        m_uniform->SetStream(stream);
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind();
        m_socket->Connect(m_to);
        Send();
    }

    void StopApplication() override
    {
        Simulator::Cancel(m_next);
        if (m_socket)
        {
            m_socket->Close();
        }
    }

    void Send()
    {
        m_socket->Send(Create<Packet>(m_payload));
        const double f = m_uniform->GetValue(1.0 - m_jitter, 1.0 + m_jitter);
        m_next = Simulator::Schedule(Seconds(m_meanGapS * f), &JitteredCbr::Send, this);
    }

    Address m_to;
    uint32_t m_payload;
    double m_meanGapS;
    double m_jitter;
    Ptr<UniformRandomVariable> m_uniform;
    Ptr<Socket> m_socket;
    EventId m_next;
};

/// Routing by exact destination address, from a hash table filled once after the
/// topology is built, with an optional default route (hosts). Local delivery is decided
/// by `Ipv4::IsDestinationAddress`, as in ns-3's own protocols. Routes are built once and
/// shared, where static routing allocates one per lookup.
class HashedRouting : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("csfq::HashedRouting")
                                .SetParent<Ipv4RoutingProtocol>()
                                .SetGroupName("Internet")
                                .AddConstructor<HashedRouting>();
        return tid;
    }

    /// Packets to `dst` leave on interface `iface` towards `gateway` (0.0.0.0: `dst` is
    /// on that link).
    void AddHostRoute(Ipv4Address dst, uint32_t iface, Ipv4Address gateway)
    {
        m_routes[dst.Get()] = MakeRoute(dst, iface, gateway);
    }

    void SetDefaultRoute(uint32_t iface, Ipv4Address gateway)
    {
        m_default = MakeRoute(Ipv4Address::GetZero(), iface, gateway);
    }

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet>,
                               const Ipv4Header& header,
                               Ptr<NetDevice>,
                               Socket::SocketErrno& sockerr) override
    {
        Ptr<Ipv4Route> r = Lookup(header.GetDestination());
        sockerr = r ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
        return r;
    }

    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback&,
                    const LocalDeliverCallback& lcb,
                    const ErrorCallback& ecb) override
    {
        const uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);
        if (m_ipv4->IsDestinationAddress(header.GetDestination(), iif))
        {
            if (lcb.IsNull())
            {
                return false;
            }
            lcb(p, header, iif);
            return true;
        }
        if (!m_ipv4->IsForwarding(iif))
        {
            ecb(p, header, Socket::ERROR_NOROUTETOHOST);
            return true;
        }
        Ptr<Ipv4Route> r = Lookup(header.GetDestination());
        if (!r)
        {
            return false;
        }
        ucb(r, p, header);
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override
    {
    }

    void NotifyInterfaceDown(uint32_t) override
    {
    }

    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override
    {
    }

    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override
    {
    }

    void SetIpv4(Ptr<Ipv4> ipv4) override
    {
        m_ipv4 = ipv4;
    }

    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const override
    {
        *stream->GetStream() << m_routes.size() << " host routes"
                             << (m_default ? " and a default route\n" : "\n");
    }

  private:
    Ptr<Ipv4Route> Lookup(Ipv4Address dst) const
    {
        auto it = m_routes.find(dst.Get());
        return it != m_routes.end() ? it->second : m_default;
    }

    Ptr<Ipv4Route> MakeRoute(Ipv4Address dst, uint32_t iface, Ipv4Address gateway) const
    {
        Ptr<Ipv4Route> r = Create<Ipv4Route>();
        r->SetDestination(dst);
        r->SetGateway(gateway);
        r->SetOutputDevice(m_ipv4->GetNetDevice(iface));
        r->SetSource(m_ipv4->GetAddress(iface, 0).GetLocal());
        return r;
    }

    Ptr<Ipv4> m_ipv4;
    std::unordered_map<uint32_t, Ptr<Ipv4Route>> m_routes;
    Ptr<Ipv4Route> m_default;
};

class HashedRoutingHelper : public Ipv4RoutingHelper
{
  public:
    HashedRoutingHelper* Copy() const override
    {
        return new HashedRoutingHelper(*this);
    }

    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node>) const override
    {
        return CreateObject<HashedRouting>();
    }
};

Ptr<HashedRouting>
HashedOf(Ptr<Node> node)
{
    return DynamicCast<HashedRouting>(node->GetObject<Ipv4>()->GetRoutingProtocol());
}

/// The interface of `node` that `dev` is attached to.
uint32_t
IfaceOf(Ptr<Node> node, Ptr<NetDevice> dev)
{
    return node->GetObject<Ipv4>()->GetInterfaceForDevice(dev);
}

std::string
Mbps(double m)
{
    return std::to_string(static_cast<uint64_t>(m * 1e6 + 0.5)) + "bps";
}

std::string
Ms(double m)
{
    return std::to_string(m) + "ms";
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string caseName = "fig3a";
    std::string queue = "fifo";
    std::string out = "flows.csv";
    std::string config = "defaults";
    uint32_t seed = 1;
    CommandLine cmd(__FILE__);
    cmd.AddValue("case", "fig3a, fig3b or scale1000", caseName);
    cmd.AddValue("queue", "fifo or fqcodel (the bottleneck's queue disc)", queue);
    cmd.AddValue("config", "defaults or expert (see the header)", config);
    cmd.AddValue("out", "per-flow CSV to write", out);
    cmd.AddValue("seed", "RNG run number", seed);
    cmd.Parse(argc, argv);
    Case c;
    if (!MakeCase(caseName, c) || (queue != "fifo" && queue != "fqcodel") ||
        (config != "defaults" && config != "expert"))
    {
        std::cerr << "csfq-ns3: --case must be fig3a, fig3b or scale1000, --queue fifo or "
                     "fqcodel and --config defaults or expert\n";
        return 2;
    }
    const bool expert = config == "expert";
    RngSeedManager::SetRun(seed);
    auto t0 = std::chrono::steady_clock::now();

    const uint32_t udpPayload = 972;
    const uint32_t tcpSegment = 960;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpNewReno"));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TypeId::LookupByName("ns3::TcpClassicRecovery")));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(tcpSegment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64 * tcpSegment));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(256 * tcpSegment));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(100)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(1)));
    if (expert)
    {
        Config::SetDefault("ns3::Ipv4::StrongEndSystemModel", BooleanValue(true));
    }

    const uint32_t flows = c.udpMbps.size() + c.tcpFlows;
    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);
    InternetStackHelper stack;
    if (expert)
    {
        stack.SetRoutingHelper(HashedRoutingHelper());
    }
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(Mbps(c.linkMbps)));
    bottleneck.SetChannelAttribute("Delay", StringValue(Ms(c.linkDelayMs)));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(Mbps(c.accessMbps)));
    access.SetChannelAttribute("Delay", StringValue(Ms(c.accessDelayMs)));
    access.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("10000p"));

    TrafficControlHelper tc;
    if (queue == "fifo")
    {
        tc.SetRootQueueDisc("ns3::FifoQueueDisc",
                            "MaxSize",
                            StringValue(std::to_string(c.bufferBytes) + "B"));
    }
    else
    {
        tc.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                            "MaxSize",
                            StringValue(std::to_string(c.bufferBytes / 1000) + "p"),
                            "Flows",
                            UintegerValue(1024),
                            "Target",
                            StringValue("5ms"),
                            "Interval",
                            StringValue("100ms"));
    }
    tc.Install(core.Get(0));

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    Ipv4InterfaceContainer coreIf = addr.Assign(core);
    TrafficControlHelper none;
    none.Uninstall(core.Get(1));
    DynamicCast<PointToPointNetDevice>(core.Get(1))->GetQueue()->SetMaxSize(QueueSize("10000p"));

    std::vector<Ipv4Address> sinkAddr(flows);
    Ipv4StaticRoutingHelper staticRouting;
    addr.SetBase("10.1.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < flows; ++i)
    {
        NetDeviceContainer up = access.Install(senders.Get(i), routers.Get(0));
        Ipv4InterfaceContainer upIf = addr.Assign(up);
        addr.NewNetwork();
        none.Uninstall(up);
        if (expert)
        {
            HashedOf(senders.Get(i))->SetDefaultRoute(1, upIf.GetAddress(1));
            HashedOf(routers.Get(0))
                ->AddHostRoute(upIf.GetAddress(0), IfaceOf(routers.Get(0), up.Get(1)), Ipv4Address::GetZero());
            HashedOf(routers.Get(1))->AddHostRoute(upIf.GetAddress(0), 1, coreIf.GetAddress(0));
        }
        else
        {
            staticRouting.GetStaticRouting(senders.Get(i)->GetObject<Ipv4>())
                ->SetDefaultRoute(upIf.GetAddress(1), 1);
        }
    }
    addr.SetBase("10.2.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < flows; ++i)
    {
        NetDeviceContainer down = access.Install(routers.Get(1), receivers.Get(i));
        Ipv4InterfaceContainer downIf = addr.Assign(down);
        addr.NewNetwork();
        none.Uninstall(down);
        sinkAddr[i] = downIf.GetAddress(1);
        if (expert)
        {
            HashedOf(receivers.Get(i))->SetDefaultRoute(1, downIf.GetAddress(0));
            HashedOf(routers.Get(1))
                ->AddHostRoute(sinkAddr[i], IfaceOf(routers.Get(1), down.Get(0)), Ipv4Address::GetZero());
            HashedOf(routers.Get(0))->AddHostRoute(sinkAddr[i], 1, coreIf.GetAddress(1));
        }
        else
        {
            staticRouting.GetStaticRouting(receivers.Get(i)->GetObject<Ipv4>())
                ->SetDefaultRoute(downIf.GetAddress(0), 1);
        }
    }
    // Static routing: r1 reaches the receivers through r2, r2 the senders through r1
    // (interface 1 of each router is the bottleneck).
    if (!expert)
    {
        staticRouting.GetStaticRouting(routers.Get(0)->GetObject<Ipv4>())
            ->AddNetworkRouteTo("10.2.0.0", "255.255.0.0", coreIf.GetAddress(1), 1);
        staticRouting.GetStaticRouting(routers.Get(1)->GetObject<Ipv4>())
            ->AddNetworkRouteTo("10.1.0.0", "255.255.0.0", coreIf.GetAddress(0), 1);
    }

    const uint16_t port = 9000;
    std::vector<Ptr<PacketSink>> sinks(flows);
    for (uint32_t i = 0; i < flows; ++i)
    {
        const bool udp = i < c.udpMbps.size();
        const std::string factory = udp ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory";
        PacketSinkHelper sink(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(receivers.Get(i));
        s.Start(Seconds(0));
        sinks[i] = DynamicCast<PacketSink>(s.Get(0));
        ApplicationContainer a;
        if (udp)
        {
            Ptr<JitteredCbr> app = CreateObject<JitteredCbr>(InetSocketAddress(sinkAddr[i], port),
                                                             c.udpMbps[i],
                                                             udpPayload,
                                                             0.5,
                                                             i);
            senders.Get(i)->AddApplication(app);
            a.Add(app);
        }
        else
        {
            BulkSendHelper src(factory, InetSocketAddress(sinkAddr[i], port));
            src.SetAttribute("MaxBytes", UintegerValue(0));
            src.SetAttribute("SendSize", UintegerValue(tcpSegment));
            a = src.Install(senders.Get(i));
        }
        a.Start(Seconds(0));
    }

    Simulator::Stop(Seconds(c.durationS));
    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t2 = std::chrono::steady_clock::now();

    std::ofstream csv(out);
    csv << "flow,kind,throughput_mbps\n";
    for (uint32_t i = 0; i < flows; ++i)
    {
        const bool udp = i < c.udpMbps.size();
        const double payload = udp ? udpPayload : tcpSegment;
        const double ipBytes = sinks[i]->GetTotalRx() * 1000.0 / payload;
        csv << i << "," << (udp ? "udp" : "tcp") << "," << ipBytes * 8 / c.durationS / 1e6
            << "\n";
    }
    const uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();
    std::cout << "build_s " << std::chrono::duration<double>(t1 - t0).count() << "\n"
              << "run_s " << std::chrono::duration<double>(t2 - t1).count() << "\n"
              << "events " << events << "\n";
    return 0;
}
