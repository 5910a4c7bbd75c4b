// Test helper: captures built frame by frame and written with libpcap's dump
// functions (see pcap_builder.hpp).
#include "pcap_builder.hpp"

#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <sys/socket.h>

#include <cstdio>
#include <stdexcept>

namespace crh::capture::testing {
namespace {

void put16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, static_cast<std::uint16_t>(v >> 16));
  put16(out, static_cast<std::uint16_t>(v & 0xffff));
}

std::string address_bytes(const std::string& text, bool& v6) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, text.c_str(), buf) == 1) {
    v6 = false;
    return std::string(reinterpret_cast<char*>(buf), 4);
  }
  if (inet_pton(AF_INET6, text.c_str(), buf) == 1) {
    v6 = true;
    return std::string(reinterpret_cast<char*>(buf), 16);
  }
  throw std::invalid_argument("pcap_builder: not an IP address: " + text);
}

std::uint16_t ipv4_checksum(const std::string& header) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < header.size(); i += 2)
    sum += (static_cast<unsigned char>(header[i]) << 8) | static_cast<unsigned char>(header[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

bool frames_the_body(const std::vector<core::Header>& headers) {
  for (const auto& h : headers) {
    std::string n;
    for (char c : h.name) n.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
    if (n == "content-length" || n == "transfer-encoding") return true;
  }
  return false;
}

const char* reason(unsigned status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 500: return "Internal Server Error";
    default: return "Status";
  }
}

}  // namespace

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::ethernet: return "ethernet";
    case LinkKind::ethernet_vlan: return "ethernet_vlan";
    case LinkKind::ethernet_qinq: return "ethernet_qinq";
    case LinkKind::sll: return "sll";
    case LinkKind::sll2: return "sll2";
    case LinkKind::null: return "null";
    case LinkKind::loop: return "loop";
    case LinkKind::raw: return "raw";
  }
  return "?";
}

int dlt_of(LinkKind kind) {
  switch (kind) {
    case LinkKind::ethernet:
    case LinkKind::ethernet_vlan:
    case LinkKind::ethernet_qinq: return DLT_EN10MB;
    case LinkKind::sll: return DLT_LINUX_SLL;
    case LinkKind::sll2: return DLT_LINUX_SLL2;
    case LinkKind::null: return DLT_NULL;
    case LinkKind::loop: return DLT_LOOP;
    case LinkKind::raw: return DLT_RAW;
  }
  return DLT_EN10MB;
}

PcapBuilder::PcapBuilder(LinkKind link, std::string path) : link_(link), path_(std::move(path)) {
  if (path_.empty()) return;
  pcap_t* p = pcap_open_dead_with_tstamp_precision(dlt_of(link_), 262144, PCAP_TSTAMP_PRECISION_NANO);
  if (!p) throw std::runtime_error("pcap_builder: pcap_open_dead failed");
  pcap_dumper_t* d = pcap_dump_open(p, path_.c_str());
  if (!d) {
    std::string why = pcap_geterr(p);
    pcap_close(p);
    throw std::runtime_error("pcap_builder: cannot write " + path_ + ": " + why);
  }
  pcap_ = p;
  dumper_ = d;
}

PcapBuilder::~PcapBuilder() { close(); }

void PcapBuilder::close() {
  if (dumper_) pcap_dump_close(static_cast<pcap_dumper_t*>(dumper_));
  if (pcap_) pcap_close(static_cast<pcap_t*>(pcap_));
  dumper_ = nullptr;
  pcap_ = nullptr;
}

Flow PcapBuilder::flow(std::string client_addr, std::uint16_t client_port, std::string server_addr,
                       std::uint16_t server_port, std::uint32_t client_isn, std::uint32_t server_isn) {
  FlowState s;
  bool v6a = false, v6b = false;
  s.client = address_bytes(client_addr, v6a);
  s.server = address_bytes(server_addr, v6b);
  if (v6a != v6b) throw std::invalid_argument("pcap_builder: mixed IPv4 and IPv6 in one flow");
  s.v6 = v6a;
  s.cport = client_port;
  s.sport = server_port;
  s.isn[0] = client_isn;
  s.isn[1] = server_isn;
  flows_.push_back(s);
  return Flow{flows_.size() - 1};
}

std::string PcapBuilder::link_header(bool v6) const {
  std::string h;
  const std::uint16_t ethertype = v6 ? 0x86dd : 0x0800;
  const std::string macs("\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
  switch (link_) {
    case LinkKind::ethernet:
      h = macs;
      put16(h, ethertype);
      break;
    case LinkKind::ethernet_vlan:
      h = macs;
      put16(h, 0x8100);
      put16(h, 42);
      put16(h, ethertype);
      break;
    case LinkKind::ethernet_qinq:
      h = macs;
      put16(h, 0x88a8);
      put16(h, 7);
      put16(h, 0x8100);
      put16(h, 42);
      put16(h, ethertype);
      break;
    case LinkKind::sll:
      put16(h, 0);      // packet type: to us
      put16(h, 772);    // ARPHRD_LOOPBACK
      put16(h, 6);      // address length
      h.append(8, '\0');
      put16(h, ethertype);
      break;
    case LinkKind::sll2:
      put16(h, ethertype);
      put16(h, 0);   // reserved
      put32(h, 1);   // interface index
      put16(h, 772); // ARPHRD_LOOPBACK
      h.push_back(0);  // packet type
      h.push_back(6);  // address length
      h.append(8, '\0');
      break;
    case LinkKind::null: {
      // Host byte order, as the capturing machine wrote it.
      const std::uint32_t family = v6 ? AF_INET6 : AF_INET;
      h.assign(reinterpret_cast<const char*>(&family), 4);
      break;
    }
    case LinkKind::loop:
      put32(h, v6 ? 24 : 2);  // OpenBSD's AF_INET6 is 24
      break;
    case LinkKind::raw: break;
  }
  return h;
}

std::string PcapBuilder::ip_packet(Flow f, Dir dir, std::uint32_t seq, std::uint32_t ack, std::uint8_t flags,
                                   std::string_view payload) const {
  const FlowState& s = flows_.at(f.id);
  const bool up = dir == Dir::to_server;
  // TCP header with options, as real stacks send: MSS on SYNs, timestamps on the rest.
  std::string tcp;
  put16(tcp, up ? s.cport : s.sport);
  put16(tcp, up ? s.sport : s.cport);
  put32(tcp, seq);
  put32(tcp, ack);
  std::string options;
  if (flags & kSyn) {
    options = std::string("\x02\x04\xff\xd7", 4);  // MSS 65495
  } else {
    options = std::string("\x01\x01\x08\x0a", 4);  // NOP NOP timestamp
    put32(options, 0x01020304);
    put32(options, 0x05060708);
  }
  const std::size_t data_offset = (20 + options.size()) / 4;
  tcp.push_back(static_cast<char>(data_offset << 4));
  tcp.push_back(static_cast<char>(flags));
  put16(tcp, 65535);  // window
  put16(tcp, 0);      // checksum: not computed, as on loopback with offload
  put16(tcp, 0);      // urgent
  tcp += options;
  tcp.append(payload.data(), payload.size());

  std::string ip;
  const std::string& src = up ? s.client : s.server;
  const std::string& dst = up ? s.server : s.client;
  if (s.v6) {
    put32(ip, 0x60000000);
    put16(ip, static_cast<std::uint16_t>(tcp.size()));
    ip.push_back(6);   // next header: TCP
    ip.push_back(64);  // hop limit
    ip += src;
    ip += dst;
  } else {
    ip.push_back(0x45);
    ip.push_back(0);
    put16(ip, static_cast<std::uint16_t>(20 + tcp.size()));
    put16(ip, s.ip_id);
    put16(ip, 0x4000);  // don't fragment
    ip.push_back(64);
    ip.push_back(6);
    put16(ip, 0);
    ip += src;
    ip += dst;
    const std::uint16_t sum = ipv4_checksum(ip);
    ip[10] = static_cast<char>(sum >> 8);
    ip[11] = static_cast<char>(sum & 0xff);
  }
  return ip + tcp;
}

void PcapBuilder::emit(bool v6, std::string ip, std::int64_t ns, std::optional<std::size_t> caplen) {
  BuiltFrame frame;
  frame.ns = ns;
  frame.bytes = link_header(v6) + ip;
  frame.wire_length = frame.bytes.size();
  if (caplen && *caplen < frame.bytes.size()) frame.bytes.resize(*caplen);
  if (dumper_) {
    pcap_pkthdr h{};
    h.ts.tv_sec = ns / 1'000'000'000;
    h.ts.tv_usec = ns % 1'000'000'000;  // nanoseconds: the dumper was opened with nano precision
    h.caplen = static_cast<bpf_u_int32>(frame.bytes.size());
    h.len = static_cast<bpf_u_int32>(frame.wire_length);
    pcap_dump(static_cast<u_char*>(dumper_), &h, reinterpret_cast<const u_char*>(frame.bytes.data()));
  }
  frames_.push_back(std::move(frame));
}

void PcapBuilder::segment(Flow f, Dir dir, std::uint32_t seq, std::uint32_t ack, std::uint8_t flags,
                          std::string_view payload, std::int64_t ns, std::optional<std::size_t> caplen) {
  FlowState& s = flows_.at(f.id);
  std::string ip = ip_packet(f, dir, seq, ack, flags, payload);
  ++s.ip_id;
  emit(s.v6, std::move(ip), ns, caplen);
}

void PcapBuilder::handshake(Flow f, std::int64_t ns) {
  const FlowState& s = flows_.at(f.id);
  segment(f, Dir::to_server, s.isn[0], 0, kSyn, {}, ns);
  segment(f, Dir::to_client, s.isn[1], s.isn[0] + 1, kSyn | kAck, {}, ns + 1000);
  segment(f, Dir::to_server, s.isn[0] + 1, s.isn[1] + 1, kAck, {}, ns + 2000);
}

void PcapBuilder::send_at(Flow f, Dir dir, std::uint32_t offset, std::string_view payload, std::int64_t ns) {
  const FlowState& s = flows_.at(f.id);
  const int d = dir == Dir::to_server ? 0 : 1;
  const std::uint32_t seq = s.isn[d] + 1 + offset;
  const std::uint32_t ack = s.isn[1 - d] + 1 + s.next[1 - d];
  if (!s.acks) return segment(f, dir, seq, 0, kPsh, payload, ns);
  segment(f, dir, seq, ack, kAck | kPsh, payload, ns);
}

void PcapBuilder::send(Flow f, Dir dir, std::string_view payload, std::int64_t ns) {
  const int d = dir == Dir::to_server ? 0 : 1;
  send_at(f, dir, flows_.at(f.id).next[d], payload, ns);
  flows_.at(f.id).next[d] += static_cast<std::uint32_t>(payload.size());
}

void PcapBuilder::send_split(Flow f, Dir dir, std::string_view payload, std::size_t mss, std::int64_t ns) {
  for (std::size_t at = 0; at < payload.size(); at += mss) send(f, dir, payload.substr(at, mss), ns++);
}

void PcapBuilder::send_truncated(Flow f, Dir dir, std::string_view payload, std::size_t caplen, std::int64_t ns) {
  FlowState& s = flows_.at(f.id);
  const int d = dir == Dir::to_server ? 0 : 1;
  segment(f, dir, s.isn[d] + 1 + s.next[d], s.isn[1 - d] + 1 + s.next[1 - d], kAck | kPsh, payload, ns, caplen);
  s.next[d] += static_cast<std::uint32_t>(payload.size());
}

void PcapBuilder::skip(Flow f, Dir dir, std::uint32_t bytes) {
  flows_.at(f.id).next[dir == Dir::to_server ? 0 : 1] += bytes;
}

void PcapBuilder::without_acks(Flow f) { flows_.at(f.id).acks = false; }

std::uint32_t PcapBuilder::offset(Flow f, Dir dir) const {
  return flows_.at(f.id).next[dir == Dir::to_server ? 0 : 1];
}

void PcapBuilder::fin(Flow f, Dir dir, std::int64_t ns) {
  FlowState& s = flows_.at(f.id);
  const int d = dir == Dir::to_server ? 0 : 1;
  if (!s.acks) return segment(f, dir, s.isn[d] + 1 + s.next[d], 0, kFin, {}, ns);
  segment(f, dir, s.isn[d] + 1 + s.next[d], s.isn[1 - d] + 1 + s.next[1 - d], kFin | kAck, {}, ns);
}

void PcapBuilder::rst(Flow f, Dir dir, std::int64_t ns) {
  FlowState& s = flows_.at(f.id);
  const int d = dir == Dir::to_server ? 0 : 1;
  segment(f, dir, s.isn[d] + 1 + s.next[d], 0, kRst, {}, ns);
}

void PcapBuilder::ip_frame(bool ipv6, std::string_view ip, std::int64_t ns) {
  emit(ipv6, std::string(ip), ns, std::nullopt);
}

void PcapBuilder::raw_frame(std::string_view bytes, std::int64_t ns) {
  BuiltFrame frame{ns, std::string(bytes), bytes.size()};
  if (dumper_) {
    pcap_pkthdr h{};
    h.ts.tv_sec = ns / 1'000'000'000;
    h.ts.tv_usec = ns % 1'000'000'000;
    h.caplen = h.len = static_cast<bpf_u_int32>(bytes.size());
    pcap_dump(static_cast<u_char*>(dumper_), &h, reinterpret_cast<const u_char*>(bytes.data()));
  }
  frames_.push_back(std::move(frame));
}

std::string http_request(std::string_view method, std::string_view target, const std::vector<core::Header>& headers,
                         std::string_view body) {
  std::string out;
  out.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  for (const auto& h : headers) out.append(h.name).append(": ").append(h.value).append("\r\n");
  if (!body.empty() && !frames_the_body(headers)) out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append("\r\n").append(body);
  return out;
}

std::string http_response(unsigned status, const std::vector<core::Header>& headers, std::string_view body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\n";
  for (const auto& h : headers) out.append(h.name).append(": ").append(h.value).append("\r\n");
  if (!frames_the_body(headers) && status >= 200) out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append("\r\n").append(body);
  return out;
}

std::string http_chunked_response(unsigned status, const std::vector<std::string>& chunks,
                                  const std::vector<core::Header>& headers) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\n";
  for (const auto& h : headers) out.append(h.name).append(": ").append(h.value).append("\r\n");
  out.append("Transfer-Encoding: chunked\r\n\r\n");
  char size[32];
  for (const auto& c : chunks) {
    std::snprintf(size, sizeof size, "%zx\r\n", c.size());
    out.append(size).append(c).append("\r\n");
  }
  out.append("0\r\n\r\n");
  return out;
}

}  // namespace crh::capture::testing
