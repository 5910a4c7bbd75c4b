// Test helper: builds captures frame by frame (any link type the reader
// supports, IPv4/IPv6, TCP segments with chosen seq/flags/payload/times) and
// writes them with libpcap's own dump functions, so the tests read files that
// libpcap, tcpdump and tshark agree on. Frames are also kept in memory for
// tests that feed an ExchangeExtractor directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/http.hpp"

namespace crh::capture::testing {

enum class LinkKind {
  ethernet,       // DLT_EN10MB
  ethernet_vlan,  // DLT_EN10MB with one 802.1Q tag
  ethernet_qinq,  // DLT_EN10MB with an 802.1ad tag then an 802.1Q tag
  sll,            // DLT_LINUX_SLL (tcpdump -i any, older libpcap)
  sll2,           // DLT_LINUX_SLL2 (tcpdump -i any)
  null,           // DLT_NULL: BSD loopback, address family in host byte order
  loop,           // DLT_LOOP: OpenBSD loopback, family in network byte order
  raw,            // DLT_RAW: bare IP
};

const char* to_string(LinkKind kind);
int dlt_of(LinkKind kind);  // the DLT_* value pcap_datalink reports when reading it back

enum class Dir { to_server, to_client };

// TCP flag bits.
inline constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;

// A handle on one TCP connection of the builder.
struct Flow {
  std::size_t id = 0;
};

struct BuiltFrame {
  std::int64_t ns = 0;
  std::string bytes;          // captured bytes (caplen)
  std::size_t wire_length = 0;  // original length
};

class PcapBuilder {
 public:
  // Frames go to `path` (pcap, nanosecond timestamps) and stay in memory;
  // an empty path: memory only.
  explicit PcapBuilder(LinkKind link, std::string path = {});
  ~PcapBuilder();  // closes the file
  PcapBuilder(const PcapBuilder&) = delete;
  PcapBuilder& operator=(const PcapBuilder&) = delete;

  // A connection; addresses are IPv4 or IPv6 literals. ISNs are chosen so a
  // test can exercise 32-bit sequence wraparound.
  Flow flow(std::string client_addr, std::uint16_t client_port, std::string server_addr, std::uint16_t server_port,
            std::uint32_t client_isn = 1000, std::uint32_t server_isn = 500000);

  // SYN, SYN-ACK, ACK at ns, ns+1000, ns+2000 (the SYN carries an MSS option).
  void handshake(Flow f, std::int64_t ns);
  // One data segment carrying `payload` after what the direction sent so far.
  void send(Flow f, Dir dir, std::string_view payload, std::int64_t ns);
  // `payload` split into segments of at most `mss` bytes, one ns apart.
  void send_split(Flow f, Dir dir, std::string_view payload, std::size_t mss, std::int64_t ns);
  // A segment at a chosen offset from the direction's first data byte (ISN+1),
  // not moving the direction's next sequence number: out-of-order data,
  // retransmissions and overlaps.
  void send_at(Flow f, Dir dir, std::uint32_t offset, std::string_view payload, std::int64_t ns);
  // Moves the direction's next sequence number on by `bytes` without sending
  // them: the next send() leaves a gap.
  void skip(Flow f, Dir dir, std::uint32_t bytes);
  // Next data offset of a direction (bytes sent or skipped so far).
  std::uint32_t offset(Flow f, Dir dir) const;
  // From now on the flow's data and FIN segments carry no ACK flag and ack 0,
  // as some synthetic captures do (acks cannot pair anything then).
  void without_acks(Flow f);
  void fin(Flow f, Dir dir, std::int64_t ns);
  void rst(Flow f, Dir dir, std::int64_t ns);
  // Any segment: absolute seq/ack and flags; `caplen` below the frame's
  // length saves a truncated frame.
  void segment(Flow f, Dir dir, std::uint32_t seq, std::uint32_t ack, std::uint8_t flags, std::string_view payload,
               std::int64_t ns, std::optional<std::size_t> caplen = std::nullopt);
  // A data segment saved truncated to `caplen` bytes of frame (advances the sequence by the whole payload).
  void send_truncated(Flow f, Dir dir, std::string_view payload, std::size_t caplen, std::int64_t ns);
  // A frame whose link-layer payload is `ip` (an IP packet built by the test).
  void ip_frame(bool ipv6, std::string_view ip, std::int64_t ns);
  // A frame of any bytes (not IP: ARP, garbage).
  void raw_frame(std::string_view bytes, std::int64_t ns);

  // The IP packet (header and TCP) that segment() would frame; for tests that
  // edit it (fragments, options).
  std::string ip_packet(Flow f, Dir dir, std::uint32_t seq, std::uint32_t ack, std::uint8_t flags,
                        std::string_view payload) const;

  std::uint64_t frames() const { return frames_.size(); }  // also the number of the last frame written
  const std::vector<BuiltFrame>& built() const { return frames_; }
  int dlt() const { return dlt_of(link_); }
  LinkKind link() const { return link_; }
  void close();  // flushes and closes the file (idempotent)

 private:
  struct FlowState {
    std::string client, server;  // 4 or 16 address bytes
    bool v6 = false;
    std::uint16_t cport = 0, sport = 0;
    std::uint32_t isn[2] = {0, 0};
    std::uint32_t next[2] = {0, 0};  // next data offset per direction
    std::uint16_t ip_id = 1;
    bool acks = true;
  };
  void emit(bool v6, std::string ip, std::int64_t ns, std::optional<std::size_t> caplen);
  std::string link_header(bool v6) const;

  LinkKind link_;
  std::string path_;
  void* pcap_ = nullptr;    // pcap_t*
  void* dumper_ = nullptr;  // pcap_dumper_t*
  std::vector<FlowState> flows_;
  std::vector<BuiltFrame> frames_;
};

// Request and response bytes as a client and server would write them.
// Content-Length is added (to a request: when it has a body; to a response:
// always) unless a given header already frames the message.
std::string http_request(std::string_view method, std::string_view target,
                         const std::vector<core::Header>& headers = {}, std::string_view body = {});
std::string http_response(unsigned status, const std::vector<core::Header>& headers = {}, std::string_view body = {});
// A chunked response whose body is sent in the given chunks.
std::string http_chunked_response(unsigned status, const std::vector<std::string>& chunks,
                                  const std::vector<core::Header>& headers = {});

}  // namespace crh::capture::testing
