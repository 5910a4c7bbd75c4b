// live: see live.hpp
#include "capture/live.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "capture/packet_redaction.hpp"

namespace crh::capture {
namespace {

struct Resolved {
  sockaddr_storage addr{};
  socklen_t len = 0;
  std::string text;  // numeric, no brackets
  bool v6 = false;
};

// An address as the filter names it: numeric, without an IPv6 scope
// ("fe80::1%eth0" does not compile), or empty.
std::string numeric_text(const sockaddr* addr, socklen_t len) {
  char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2] = {};
  if (::getnameinfo(addr, len, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST) != 0) return {};
  std::string text = buf;
  if (const auto pct = text.find('%'); pct != std::string::npos) text.resize(pct);
  return text;
}

// Every address of the target, each once: the engine tries them all.
bool resolve(const std::string& host, std::uint16_t port, std::vector<Resolved>& out, std::string& why) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    why = "cannot resolve the target's host \"" + host + "\": " + ::gai_strerror(rc);
    return false;
  }
  for (const auto* ai = res; ai != nullptr; ai = ai->ai_next) {
    if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) || ai->ai_addrlen > sizeof(sockaddr_storage)) continue;
    Resolved r;
    std::memcpy(&r.addr, ai->ai_addr, ai->ai_addrlen);
    r.len = ai->ai_addrlen;
    r.v6 = ai->ai_family == AF_INET6;
    r.text = numeric_text(ai->ai_addr, ai->ai_addrlen);
    if (r.text.empty()) continue;
    if (std::none_of(out.begin(), out.end(), [&](const Resolved& o) { return o.text == r.text; }))
      out.push_back(std::move(r));
  }
  ::freeaddrinfo(res);
  if (out.empty()) {
    why = "the target's host \"" + host + "\" has no IPv4 or IPv6 address";
    return false;
  }
  return true;
}

bool is_loopback(const Resolved& r) {
  if (!r.v6) return (ntohl(reinterpret_cast<const sockaddr_in&>(r.addr).sin_addr.s_addr) >> 24) == 127;
  return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(r.addr).sin6_addr);
}

bool same_address(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET)
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in&>(b).sin_addr.s_addr;
  return std::memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                     &reinterpret_cast<const sockaddr_in6&>(b).sin6_addr, sizeof(in6_addr)) == 0;
}

// The interface the kernel's route to the target leaves by: the local
// address a connected UDP socket gets (nothing is sent), and the interface
// that holds it.
std::string route_interface(const Resolved& target, std::string& why) {
  const int fd = ::socket(target.addr.ss_family, SOCK_DGRAM, 0);
  if (fd < 0) {
    why = std::string("cannot find the route to the target: socket: ") + std::strerror(errno);
    return {};
  }
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&target.addr), target.len) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) {
    why = "no route to the target " + target.text + ": " + std::strerror(err) + " (name one with --capture-interface)";
    return {};
  }
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    why = std::string("cannot list the interfaces: ") + std::strerror(errno);
    return {};
  }
  std::string found;
  // A target on one of this host's own addresses is reached through
  // loopback, whichever interface holds the address.
  if (same_address(local, target.addr)) found = "lo";
  for (auto* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != local.ss_family) continue;
    if (local.ss_family == AF_INET
            ? reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr ==
                  reinterpret_cast<sockaddr_in&>(local).sin_addr.s_addr
            : std::memcmp(&reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr,
                          &reinterpret_cast<sockaddr_in6&>(local).sin6_addr, sizeof(in6_addr)) == 0)
      found = i->ifa_name;
  }
  ::freeifaddrs(list);
  if (found.empty())
    why =
        "no interface holds the local address of the route to " + target.text + " (name one with --capture-interface)";
  return found;
}

std::string activate_error(int rc, pcap_t* p, const std::string& iface) {
  const std::string detail = ::pcap_geterr(p);
  switch (rc) {
    case PCAP_ERROR_PERM_DENIED:
      return "no permission to capture on " + iface +
             " (run as root, or give crh CAP_NET_RAW: sudo setcap cap_net_raw,cap_net_admin+ep crh)" +
             (detail.empty() ? "" : ": " + detail);
    case PCAP_ERROR_NO_SUCH_DEVICE:
      return "no interface named \"" + iface + "\"" + (detail.empty() ? "" : ": " + detail);
    case PCAP_ERROR_IFACE_NOT_UP: return "the interface " + iface + " is not up";
    default:
      return "cannot capture on " + iface + ": " + ::pcap_statustostr(rc) + (detail.empty() ? "" : ": " + detail);
  }
}

constexpr std::uint64_t kFileHeader = 24, kRecordHeader = 16;
constexpr int kBlockTimeoutMs = 50;
constexpr std::size_t kOutBuffer = 1 << 20;
constexpr int kCaptureNice = 10;

}  // namespace

struct LiveCapture::Impl {
  LiveConfig config;
  LiveSummary summary;
  pcap_t* pcap = nullptr;
  pcap_dumper_t* dumper = nullptr;
  int link_type = 0;
  int wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::atomic<bool> running{false};
  std::thread thread;
  std::mutex stop_mutex;
  bool stopped = false;
  std::unique_ptr<detail::PacketRedactor> redactor;
  // Records are copied straight into this buffer, edited there and written
  // with write(2) when it fills: one copy per packet, no stdio per packet.
  // libpcap's dumper writes the file header and closes the file.
  std::vector<unsigned char> out;
  std::size_t out_used = 0;
  int out_fd = -1;
  bool write_failed = false;
  bool checksums_left = false;
  std::string partial;
  pcap_stat stats_at_limit{};
  bool have_stats_at_limit = false;

  void fail(std::string why) {
    summary.made = false;
    summary.not_made = std::move(why);
    if (dumper) ::pcap_dump_close(dumper);
    dumper = nullptr;
    if (!partial.empty()) std::filesystem::remove(partial);
    if (pcap) ::pcap_close(pcap);
    pcap = nullptr;
  }

  void open() {
    summary.file = config.file;
    summary.limit_bytes = config.limit_bytes;
    std::string why;
    std::vector<Resolved> targets;
    if (!resolve(config.target_host, config.target_port, targets, why)) return fail(why);
    std::vector<std::string> sip_addresses;
    if (config.sip_port != 0) {
      // The SIP target's addresses choose the interface too.
      std::vector<Resolved> sip_targets;
      if (!resolve(config.sip_host, config.sip_port, sip_targets, why)) return fail("SIP target: " + why);
      for (auto& t : sip_targets) {
        sip_addresses.push_back(t.text);
        targets.push_back(std::move(t));
      }
    }
    const bool all_loopback =
        std::all_of(targets.begin(), targets.end(), [](const Resolved& r) { return is_loopback(r); });
    std::string iface = config.interface;
    if (iface.empty() && all_loopback) iface = "lo";
    if (iface.empty()) {
      // The route to each address; an address with no route is one the
      // engine cannot reach either.
      std::vector<std::string> routes;
      std::string first_why;
      for (const auto& t : targets) {
        std::string route_why;
        auto route = is_loopback(t) ? std::string("lo") : route_interface(t, route_why);
        if (route.empty()) {
          if (first_why.empty()) first_why = route_why;
          continue;
        }
        if (std::find(routes.begin(), routes.end(), route) == routes.end()) routes.push_back(std::move(route));
      }
      if (routes.empty()) return fail(first_why);
      iface = routes.front();
      if (routes.size() > 1) {
        iface = "any";
        std::string list;
        for (const auto& r : routes) list += (list.empty() ? "" : ", ") + r;
        summary.warnings.push_back("the target's addresses are reached through several interfaces (" + list +
                                   "): capturing on \"any\" (Linux cooked headers)");
      }
    }
    summary.interface = iface;
    summary.loopback = iface == "lo";
    std::vector<std::string> addresses;
    for (std::size_t i = 0; i + sip_addresses.size() < targets.size(); ++i) addresses.push_back(targets[i].text);
    summary.filter = config.sip_port == 0
                         ? detail::capture_filter(addresses, config.target_port)
                         : detail::capture_filter(addresses, config.target_port, sip_addresses, config.sip_port);

    char err[PCAP_ERRBUF_SIZE] = {};
    pcap = ::pcap_create(iface.c_str(), err);
    if (pcap == nullptr) return fail("cannot capture on " + iface + ": " + err);
    ::pcap_set_snaplen(pcap, config.snaplen);
    ::pcap_set_promisc(pcap, 0);
    ::pcap_set_immediate_mode(pcap, config.immediate ? 1 : 0);
    ::pcap_set_buffer_size(pcap, config.buffer_bytes);
    ::pcap_set_timeout(pcap, kBlockTimeoutMs);
    const bool nano = ::pcap_set_tstamp_precision(pcap, PCAP_TSTAMP_PRECISION_NANO) == 0;
    const int rc = ::pcap_activate(pcap);
    if (rc < 0) return fail(activate_error(rc, pcap, iface));
    if (rc > 0) {
      const std::string detail = ::pcap_geterr(pcap);
      summary.warnings.push_back(std::string("capture set-up on ") + iface + ": " + ::pcap_statustostr(rc) +
                                 (detail.empty() ? "" : " (" + detail + ")"));
    }
    if (!nano) summary.warnings.push_back("timestamps in microseconds: nanosecond precision is not supported here");
    bpf_program program{};
    if (::pcap_compile(pcap, &program, summary.filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
      return fail("cannot compile the filter \"" + summary.filter + "\": " + ::pcap_geterr(pcap));
    const int set = ::pcap_setfilter(pcap, &program);
    ::pcap_freecode(&program);
    if (set != 0) return fail("cannot set the filter \"" + summary.filter + "\": " + ::pcap_geterr(pcap));
    link_type = ::pcap_datalink(pcap);
    if (summary.loopback) {
      // Each packet once, as it comes in: the kernel then neither copies nor
      // counts the outgoing copy that libpcap would only throw away.
      const int one = 1;
      summary.counted_twice =
          ::setsockopt(::pcap_fileno(pcap), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0;
    }
    if (::pcap_setnonblock(pcap, 1, err) != 0) return fail(std::string("cannot make the capture non-blocking: ") + err);
    partial = config.file + ".partial";
    dumper = ::pcap_dump_open(pcap, partial.c_str());
    if (dumper == nullptr) {
      partial.clear();
      return fail("cannot write " + config.file + ": " + ::pcap_geterr(pcap));
    }
    if (::pcap_dump_flush(dumper) != 0) return fail("cannot write " + config.file + ": " + ::pcap_geterr(pcap));
    out_fd = ::fileno(::pcap_dump_file(dumper));
    out.resize(std::max<std::size_t>(kOutBuffer, kRecordHeader + static_cast<std::size_t>(config.snaplen)));
    summary.bytes = kFileHeader;
    wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    redactor = std::make_unique<detail::PacketRedactor>(config.api_key, config.target_port);
    summary.made = true;
    running = true;
    thread = std::thread([this] { loop(); });
  }

  void flush_out() {
    std::size_t done = 0;
    while (done < out_used && !write_failed) {
      const auto n = ::write(out_fd, out.data() + done, out_used - done);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
      } else if (n < 0 && errno != EINTR) {
        write_failed = true;
      }
    }
    out_used = 0;
  }

  static void on_packet(u_char* user, const pcap_pkthdr* h, const u_char* bytes) {
    reinterpret_cast<Impl*>(user)->packet(h, bytes);
  }

  void packet(const pcap_pkthdr* h, const u_char* bytes) {
    if (summary.limit_reached) return;
    if (config.limit_bytes != 0 && summary.bytes + kRecordHeader + h->caplen > config.limit_bytes) {
      summary.limit_reached = true;
      // What the kernel counted up to here: the packets it drops once nobody
      // reads are not lost to the file, which was full.
      if (::pcap_stats(pcap, &stats_at_limit) == 0) have_stats_at_limit = true;
      ::pcap_breakloop(pcap);
      return;
    }
    if (out.size() - out_used < kRecordHeader + h->caplen) flush_out();
    // The record header as pcap_dump writes it: host order, 32-bit seconds.
    const std::uint32_t header[4] = {static_cast<std::uint32_t>(h->ts.tv_sec), static_cast<std::uint32_t>(h->ts.tv_usec),
                                     h->caplen, h->len};
    std::memcpy(out.data() + out_used, header, kRecordHeader);
    unsigned char* record = out.data() + out_used + kRecordHeader;
    std::memcpy(record, bytes, h->caplen);  // libpcap's buffer is read-only: the copy is edited
    const auto r = redactor->redact(link_type, std::span<unsigned char>(record, h->caplen),
                                    std::span<const unsigned char>(bytes, h->caplen));
    out_used += kRecordHeader + h->caplen;
    summary.redactions += r.values + r.raw + r.digests;
    summary.checksums_recomputed = summary.checksums_recomputed || r.checksum_recomputed;
    checksums_left = checksums_left || r.checksum_left;
    ++summary.packets;
    summary.bytes += kRecordHeader + h->caplen;
  }

  // Reads until stopped: poll on libpcap's descriptor and the wake-up event,
  // so stop() is prompt; then what is still in the buffer.
  void loop() {
    // Below the generator's threads when they share a core: the capture
    // catches up while they wait on the network (the kernel buffer holds the
    // packets meanwhile). Nice 10 still gets about a tenth of a busy core,
    // twice what the capture needs at 100k requests/s, so it does not fall behind.
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kCaptureNice);
    const int fd = ::pcap_get_selectable_fd(pcap);
    while (!stopping.load() && !summary.limit_reached) {
      pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
      ::poll(fds, fd >= 0 ? 2 : 1, fd >= 0 ? 200 : 10);
      if (::pcap_dispatch(pcap, -1, &Impl::on_packet, reinterpret_cast<u_char*>(this)) < 0 && !stopping.load() &&
          !summary.limit_reached) {
        summary.warnings.push_back(std::string("capture stopped early: ") + ::pcap_geterr(pcap));
        break;
      }
    }
    for (int i = 0; i < 1000 && !summary.limit_reached; ++i)
      if (::pcap_dispatch(pcap, -1, &Impl::on_packet, reinterpret_cast<u_char*>(this)) <= 0) break;
    running = false;
  }

  void finish() {
    std::lock_guard lock(stop_mutex);
    if (stopped) return;
    stopped = true;
    if (!summary.made) return;
    // The last packets of the run are still on their way: immediate mode
    // hands them over within microseconds, else the kernel hands over a
    // partly filled block once the timeout has passed.
    std::this_thread::sleep_for(std::chrono::milliseconds(config.immediate ? 50 : 3 * kBlockTimeoutMs));
    stopping = true;
    const std::uint64_t one = 1;
    if (::write(wake_fd, &one, sizeof one) < 0) { /* poll times out anyway */
    }
    thread.join();
    ::close(wake_fd);
    pcap_stat stats{};
    if (have_stats_at_limit) {
      stats = stats_at_limit;
      summary.kernel_received = stats.ps_recv;
      summary.kernel_dropped = stats.ps_drop;
      summary.interface_dropped = stats.ps_ifdrop;
    } else if (::pcap_stats(pcap, &stats) == 0) {
      summary.kernel_received = stats.ps_recv;
      summary.kernel_dropped = stats.ps_drop;
      summary.interface_dropped = stats.ps_ifdrop;
    }
    flush_out();
    const bool flushed = !write_failed && ::pcap_dump_flush(dumper) == 0 && std::ferror(::pcap_dump_file(dumper)) == 0;
    ::pcap_dump_close(dumper);
    dumper = nullptr;
    ::pcap_close(pcap);
    pcap = nullptr;
    std::error_code ec;
    if (!flushed) {
      std::filesystem::remove(partial, ec);
      summary.made = false;
      summary.not_made = "the capture could not be written to " + partial + " (disk full?)";
      return;
    }
    std::filesystem::rename(partial, config.file, ec);
    if (ec) {
      std::filesystem::remove(partial, ec);
      summary.made = false;
      summary.not_made = "the capture could not be saved as " + config.file + ": " + ec.message();
      return;
    }
    if (summary.limit_reached)
      summary.warnings.push_back("--capture-limit " + std::to_string(config.limit_bytes) +
                                 " bytes reached: capture stopped after " + std::to_string(summary.packets) +
                                 " packets; later exchanges are not in the file");
    if (summary.lost_packets())
      summary.warnings.push_back("LOST PACKETS: the kernel dropped " + std::to_string(summary.kernel_dropped) +
                                 " (buffer full) and the interface " + std::to_string(summary.interface_dropped) +
                                 "; exchanges missing them are incomplete (raise --capture-buffer)");
    if (summary.counted_twice)
      summary.warnings.push_back("loopback: the kernel counts each packet twice (out and in), so " +
                                 std::to_string(summary.kernel_received) + " received means about " +
                                 std::to_string(summary.kernel_received / 2) + " packets");
    if (checksums_left)
      summary.warnings.push_back(
          "TCP checksums were not computed by the kernel (offload, as on loopback): edited segments keep "
          "theirs; tell Wireshark not to validate them");
  }
};

namespace detail {

std::vector<std::string> numeric_addresses(const ::addrinfo* list) {
  std::vector<std::string> out;
  for (const auto* ai = list; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    auto text = numeric_text(ai->ai_addr, ai->ai_addrlen);
    if (text.empty()) continue;
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
  }
  return out;
}

std::string capture_filter(const std::vector<std::string>& addresses, std::uint16_t port) {
  std::string hosts;
  for (const auto& a : addresses) hosts += (hosts.empty() ? "host " : " or host ") + a;
  if (addresses.size() > 1) hosts = "(" + hosts + ")";
  return "tcp and " + hosts + " and port " + std::to_string(port);
}

std::string capture_filter(const std::vector<std::string>& addresses, std::uint16_t port,
                           const std::vector<std::string>& sip_addresses, std::uint16_t sip_port) {
  std::string hosts;
  for (const auto& a : sip_addresses) hosts += (hosts.empty() ? "host " : " or host ") + a;
  if (sip_addresses.size() > 1) hosts = "(" + hosts + ")";
  return "(" + capture_filter(addresses, port) + ") or ((tcp or udp) and " + hosts + " and port " +
         std::to_string(sip_port) + ")";
}

}  // namespace detail

LiveCapture::LiveCapture(LiveConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  impl_->open();
}

LiveCapture::~LiveCapture() { impl_->finish(); }

bool LiveCapture::running() const { return impl_->running.load(); }

const LiveSummary& LiveCapture::stop() {
  impl_->finish();
  return impl_->summary;
}

const LiveSummary& LiveCapture::summary() const { return impl_->summary; }

}  // namespace crh::capture
