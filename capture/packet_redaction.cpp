// packet_redaction: see packet_redaction.hpp. Each direction tracked in
// sequence space and the packet edited here; the Apikey values are found by
// apikey_scanner, the headers read by packet_headers.
#include "capture/packet_redaction.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string.h>  // memmem
#include <deque>
#include <string_view>

#include "capture/apikey_scanner.hpp"
#include "capture/packet_headers.hpp"
#include "capture/sip_redaction.hpp"

namespace crh::capture::detail {
namespace {

// Payload kept per flow ahead of a gap, to read once the gap fills; past it
// the gap is taken as lost to the capture (a packet the kernel dropped is
// never retransmitted) and reading goes on after it.
constexpr std::size_t kPendingBytes = 64 * 1024;
constexpr std::size_t kHoles = 64;     // ranges given up per flow, kept to read a late copy of them alone
constexpr std::size_t kFlows = 16384;  // connection directions tracked; one is dropped for a new one past it
constexpr std::size_t kEdgeMin = 4;    // shortest end of the key matched at a segment edge

// Bytes that may be part of a key token; the ends of the key matched at a
// segment's edge below 4 bytes must stop at a byte that is not.
bool token_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-' || c == '_' ||
         c == '.' || c == '~' || c == '+';
}

// Whether [0, end) ends with "apikey:" and optional spaces or tabs.
bool after_apikey_name(const unsigned char* data, std::size_t end) {
  while (end > 0 && (data[end - 1] == ' ' || data[end - 1] == '\t')) --end;
  if (end < kName.size() + 1 || data[end - 1] != ':') return false;
  for (std::size_t i = 0; i < kName.size(); ++i)
    if (lower(data[end - 1 - kName.size() + i]) != kName[i]) return false;
  return true;
}

}  // namespace

struct PacketRedactor::Flow {
  bool started = false;
  bool saw_syn = false;
  std::uint32_t isn = 0;  // sequence number of the first payload byte
  Scanner in_order;       // from the first byte (or the end of the last hole), in order
  // The bytes just before in_order.next are not known (the flow was joined
  // mid-way or the hole before it was lost to the capture): the segment that
  // starts there is read with its start treated as unknown.
  bool unknown_start = false;
  // Segments ahead of a gap, read in arrival order while each starts where
  // the one before ended, so a value split between two of them is overwritten.
  Scanner ahead;
  bool ahead_live = false;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> holes;  // ranges declared lost, ascending
  std::map<std::uint64_t, std::string> pending;               // payload ahead of in_order.next, by offset
  std::size_t pending_bytes = 0;

  bool in_hole(std::uint64_t b, std::uint64_t e) const {
    for (const auto& [hb, he] : holes)
      if (hb < e && b < he) return true;
    return false;
  }
};

namespace {

// A connection direction: client address, server address, client port,
// server port, as on the wire (IPv4 addresses take the first 4 bytes of 16).
struct FlowKey {
  std::array<std::uint64_t, 5> words{};
  bool operator==(const FlowKey&) const = default;
};

struct FlowKeyHash {
  std::size_t operator()(const FlowKey& k) const noexcept {
    std::uint64_t h = 0x9E3779B97F4A7C15ull;
    for (const auto w : k.words) h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
};

}  // namespace

struct PacketRedactor::Impl {
  std::string key;
  std::uint16_t port = 0;
  std::unordered_map<FlowKey, Flow, FlowKeyHash> flows;
  std::size_t pending_total = 0;
  DigestRedactor digests;  // SIP credentials, in every flow and datagram

  // A UDP datagram (SIP): its digest values and the key overwritten; its
  // checksum made valid again when it was valid (0 in IPv4: none).
  RedactionResult udp(bool ipv6, unsigned char* src, unsigned char* dst, unsigned char* header, std::size_t udp_len,
                      std::size_t captured, std::span<const unsigned char> original, const unsigned char* packet) {
    RedactionResult result;
    bool edited = false;
    if (captured < 8) return result;
    unsigned char* payload = header + 8;
    const std::size_t n = std::min(captured, udp_len) - 8;
    const bool whole = captured >= udp_len;
    const bool had_sum = header[6] != 0 || header[7] != 0;
    auto valid_in = [&](const unsigned char* base) {
      const auto at = [&](const unsigned char* p) { return base + (p - packet); };
      return whole && had_sum &&
             udp_checksum_fold(ipv6, at(src), at(dst), std::span<const unsigned char>(at(header), udp_len)) == 0xFFFF;
    };
    const bool valid_before = original.empty() ? valid_in(packet) : false;
    result.digests = digests.udp(payload, n, edited);
    result.raw = redact_raw(payload, n, true, edited);
    result.edited = edited;
    if (!edited) return result;
    if (original.empty() ? valid_before : valid_in(original.data())) {
      header[6] = header[7] = 0;
      auto sum = static_cast<std::uint16_t>(~udp_checksum_fold(ipv6, src, dst, std::span<const unsigned char>(header, udp_len)));
      if (sum == 0) sum = 0xFFFF;  // 0 would say "no checksum"
      header[6] = static_cast<unsigned char>(sum >> 8);
      header[7] = static_cast<unsigned char>(sum & 0xFF);
      result.checksum_recomputed = true;
    } else if (had_sum) {
      result.checksum_left = true;
    }
    return result;
  }

  // Reads the pending payload that the in-order reader has reached.
  void drain(Flow& flow) {
    auto& s = flow.in_order;
    while (!flow.pending.empty() && flow.pending.begin()->first <= s.next) {
      auto node = flow.pending.extract(flow.pending.begin());
      flow.pending_bytes -= node.mapped().size();
      pending_total -= node.mapped().size();
      const auto end = node.key() + node.mapped().size();
      if (end > s.next) {
        const auto skip = static_cast<std::size_t>(s.next - node.key());
        s.scan(reinterpret_cast<const unsigned char*>(node.mapped().data()) + skip, node.mapped().size() - skip,
               s.next);
        flow.unknown_start = false;
      }
    }
    if (flow.ahead_live && flow.ahead.next <= s.next) flow.ahead_live = false;
  }

  // [in_order.next, to) will never be seen: reading goes on at `to` from an
  // unknown state (taken as a line start, so a header there is found).
  void skip_to(Flow& flow, std::uint64_t to) {
    auto& s = flow.in_order;
    if (to <= s.next) return;
    if (s.state == Scanner::State::value) s.close(to);  // a retransmission of the hole is overwritten
    flow.holes.emplace_back(s.next, to);
    if (flow.holes.size() > kHoles) flow.holes.pop_front();
    s.state = Scanner::State::line_start;
    s.next = to;
    flow.unknown_start = true;
  }

  // Every byte before `acked` reached the other side: the holes before it
  // that the capture did not fill are lost to it, never retransmitted.
  void give_up_before(Flow& flow, std::uint64_t acked) {
    auto& s = flow.in_order;
    drain(flow);
    while (s.next < acked) {
      std::uint64_t to = acked;
      if (!flow.pending.empty()) to = std::min(to, flow.pending.begin()->first);
      skip_to(flow, to);
      drain(flow);
    }
  }

  void give_up_all(Flow& flow) {
    while (!flow.pending.empty()) {
      const auto last = std::prev(flow.pending.end());
      give_up_before(flow, last->first + last->second.size());
    }
  }

  void erase(std::unordered_map<FlowKey, Flow, FlowKeyHash>::iterator it) {
    pending_total -= it->second.pending_bytes;
    flows.erase(it);
  }

  // The whole key anywhere, and its ends at the segment's edges (the rest
  // of a key split across segments whose other half was read apart, or not
  // at all). `start_unknown`: what came before the segment is not known.
  unsigned redact_raw(unsigned char* data, std::size_t n, bool start_unknown, bool& edited) const {
    if (key.empty() || n == 0) return 0;
    unsigned found = 0;
    auto fill = [&](std::size_t from, std::size_t len) {
      bool changed = false;
      for (std::size_t k = from; k < from + len; ++k)
        if (data[k] != PacketRedactor::kFill) {
          data[k] = PacketRedactor::kFill;
          changed = true;
        }
      if (changed) {
        ++found;
        edited = true;
      }
    };
    const auto* k = reinterpret_cast<const unsigned char*>(key.data());
    for (std::size_t at = 0; at + key.size() <= n;) {
      const void* hit = ::memmem(data + at, n - at, k, key.size());
      if (hit == nullptr) break;
      const auto pos = static_cast<std::size_t>(static_cast<const unsigned char*>(hit) - data);
      fill(pos, key.size());
      at = pos + key.size();
    }
    const bool long_key = key.size() >= 2 * kEdgeMin;
    // The start: an end of the key of 4 bytes or more (long keys); of any
    // length when it stops at a byte outside a token (the line's CR, say)
    // and the key is short or the segment's start is not known.
    for (std::size_t len = std::min(n, key.size() - 1); len >= 1; --len) {
      if (data[0] != k[key.size() - len] || std::memcmp(data, k + key.size() - len, len) != 0) continue;
      const bool bounded = len == n || !token_byte(data[len]);
      if ((long_key && len >= kEdgeMin) || ((start_unknown || !long_key) && bounded)) {
        fill(0, len);
        break;
      }
    }
    // The end: a start of the key of 4 bytes or more (long keys); of any
    // length after "apikey:" or, for a short key, after a byte outside a token.
    for (std::size_t len = std::min(n, key.size() - 1); len >= 1; --len) {
      if (data[n - len] != k[0] || std::memcmp(data + n - len, k, len) != 0) continue;
      const std::size_t at = n - len;
      const bool bounded = at == 0 ? start_unknown : !token_byte(data[at - 1]);
      if ((long_key && len >= kEdgeMin) || after_apikey_name(data, at) || (!long_key && bounded)) {
        fill(at, len);
        break;
      }
    }
    return found;
  }
};

PacketRedactor::PacketRedactor(std::string key, std::uint16_t server_port) : impl_(std::make_unique<Impl>()) {
  impl_->key = std::move(key);
  impl_->port = server_port;
}
PacketRedactor::~PacketRedactor() = default;

std::size_t PacketRedactor::tracked_flows() const { return impl_->flows.size(); }
std::size_t PacketRedactor::pending_bytes() const { return impl_->pending_total; }

RedactionResult PacketRedactor::redact(int link_type, std::span<unsigned char> packet) {
  return redact(link_type, packet, {});
}

RedactionResult PacketRedactor::redact(int link_type, std::span<unsigned char> packet,
                                       std::span<const unsigned char> original) {
  if (!original.empty() && original.size() != packet.size()) original = {};
  RedactionResult result;
  bool edited = false;
  // Not readable as a TCP segment: the key is overwritten wherever it is in
  // the bytes from `from` on.
  auto raw_only = [&](std::size_t from) {
    if (from < packet.size()) result.raw = impl_->redact_raw(packet.data() + from, packet.size() - from, true, edited);
    result.edited = edited;
    return result;
  };
  const long off = ip_offset(link_type, packet);
  if (off < 0) return raw_only(0);
  if (packet.size() < static_cast<std::size_t>(off) + 20) return raw_only(static_cast<std::size_t>(off));
  unsigned char* ip = packet.data() + off;
  const std::size_t avail = packet.size() - static_cast<std::size_t>(off);
  const int version = ip[0] >> 4;
  unsigned char *tcp = nullptr, *src = nullptr, *dst = nullptr;
  std::size_t tcp_len = 0;
  if (version == 4) {
    const std::size_t ihl = (ip[0] & 0x0F) * 4u;
    const std::size_t after = static_cast<std::size_t>(off) + std::max<std::size_t>(ihl, 20);
    if (ihl >= 20 && avail >= ihl + 8 && ip[9] == 17 && (be16(ip + 6) & 0x3FFF) == 0 && be16(ip + 2) >= ihl + 8) {
      const std::size_t udp_len = std::min<std::size_t>(be16(ip + ihl + 4), be16(ip + 2) - ihl);
      return impl_->udp(false, ip + 12, ip + 16, ip + ihl, std::max<std::size_t>(udp_len, 8), avail - ihl, original,
                        packet.data());
    }
    if (ihl < 20 || avail < ihl + 20 || ip[9] != 6) return raw_only(after);
    if ((be16(ip + 6) & 0x3FFF) != 0) return raw_only(after);  // a fragment: no TCP header of its own to trust
    const std::size_t total = be16(ip + 2);
    if (total < ihl + 20) return raw_only(after);
    tcp = ip + ihl;
    tcp_len = total - ihl;
    src = ip + 12;
    dst = ip + 16;
  } else if (version == 6) {
    if (avail < 40) return raw_only(static_cast<std::size_t>(off));
    // Hop-by-hop, routing and destination options are stepped over; a
    // fragment header that starts a fragment, or anything else, is not TCP.
    std::size_t pos = 40;
    unsigned next_header = ip[6];
    const std::size_t payload_len = be16(ip + 4);
    for (int i = 0; i < 8 && next_header != 6; ++i) {
      if (avail < pos + 8) break;
      if (next_header == 0 || next_header == 43 || next_header == 60) {
        next_header = ip[pos];
        pos += (ip[pos + 1] + 1u) * 8;
      } else if (next_header == 44 && (be16(ip + pos + 2) & 0xFFF9) == 0) {
        next_header = ip[pos];  // an atomic fragment: the whole packet
        pos += 8;
      } else {
        break;
      }
    }
    if (next_header == 17 && avail >= pos + 8 && payload_len + 40 >= pos + 8)
      return impl_->udp(true, ip + 8, ip + 24, ip + pos, payload_len + 40 - pos, avail - pos, original, packet.data());
    if (next_header != 6 || avail < pos + 20 || payload_len + 40 < pos + 20)
      return raw_only(static_cast<std::size_t>(off) + std::min(pos, avail));
    tcp = ip + pos;
    tcp_len = payload_len + 40 - pos;
    src = ip + 8;
    dst = ip + 24;
  } else {
    return raw_only(static_cast<std::size_t>(off));
  }
  const std::size_t captured = std::min(tcp_len, avail - static_cast<std::size_t>(tcp - ip));
  const std::size_t doff = (tcp[12] >> 4) * 4u;
  if (captured < 20 || doff < 20 || doff > captured) return raw_only(static_cast<std::size_t>(tcp - packet.data()));
  unsigned char* payload = tcp + doff;
  const std::size_t n = captured - doff;
  const std::uint16_t sport = be16(tcp), dport = be16(tcp + 2);
  const std::uint8_t flags = tcp[13];
  const bool syn = flags & 0x02, fin = flags & 0x01, rst = flags & 0x04, ack = flags & 0x10;
  const std::uint32_t seq = be32(tcp + 4) + (syn ? 1 : 0);

  // Whether the checksum is right before the edit: only then is it made right again.
  const bool whole = captured == tcp_len;
  // Summed from the packet now, or from the original once it is known to be edited.
  auto valid_in = [&](const unsigned char* base) {
    const auto at = [&](const unsigned char* p) { return base + (p - packet.data()); };
    return whole && tcp_checksum_fold(version == 6, at(src), at(dst),
                                      std::span<const unsigned char>(at(tcp), tcp_len)) == 0xFFFF;
  };
  const bool valid_now = original.empty() && valid_in(packet.data());

  const std::size_t alen = version == 6 ? 16 : 4;
  auto flow_id = [&](const unsigned char* client, const unsigned char* server, const unsigned char* cport,
                     const unsigned char* sport_bytes) {
    FlowKey id;
    auto* bytes = reinterpret_cast<unsigned char*>(id.words.data());
    std::memcpy(bytes, client, alen);
    std::memcpy(bytes + 16, server, alen);
    std::memcpy(bytes + 32, cport, 2);
    std::memcpy(bytes + 34, sport_bytes, 2);
    return id;
  };
  auto& flows = impl_->flows;
  bool start_unknown = false;
  if (dport == impl_->port && (n > 0 || syn || fin || rst)) {
    const FlowKey id = flow_id(src, dst, tcp, tcp + 2);
    auto it = flows.find(id);
    if (it == flows.end()) {
      if (n == 0 && !syn) return result;  // FIN or RST of a flow not tracked
      if (flows.size() >= kFlows) impl_->erase(flows.begin());
      it = flows.try_emplace(id).first;
    }
    Flow* flow = &it->second;
    if (syn && flow->started && (!flow->saw_syn || flow->isn != seq)) {  // the 4-tuple is reused
      impl_->pending_total -= flow->pending_bytes;
      *flow = Flow{};
    }
    if (!flow->started) {
      flow->started = true;
      flow->saw_syn = syn;
      flow->isn = seq;
      flow->unknown_start = !syn;  // joined mid-way
    }
    auto& s = flow->in_order;
    const std::uint64_t at = static_cast<std::uint32_t>(seq - flow->isn);
    if (n == 0) {
      // A SYN, FIN or RST without data: nothing to read.
    } else if (at >= (1ull << 31)) {
      // Before the first byte seen (the flow was joined mid-way): read it alone.
      Scanner scratch;
      result.values += scratch.scan(payload, n, 0);
      scratch.overwrite(payload, n, 0, impl_->key, edited);
      start_unknown = true;
    } else if (at <= s.next) {
      if (at + n > s.next) {
        start_unknown = at == s.next && flow->unknown_start;
        const auto skip = static_cast<std::size_t>(s.next - at);
        result.values += s.scan(payload + skip, n - skip, s.next);
        flow->unknown_start = false;
        // Payload that came ahead of the gap is read now, in order, so a
        // later retransmission of it is overwritten.
        impl_->drain(*flow);
      } else if (flow->in_hole(at, at + n)) {
        // Late bytes of a hole already given up: read alone.
        Scanner scratch;
        result.values += scratch.scan(payload, n, 0);
        scratch.overwrite(payload, n, 0, impl_->key, edited);
        start_unknown = true;
      }
      s.overwrite(payload, n, at, impl_->key, edited);
    } else {
      // Ahead of a gap: read now, after the segment it continues if it
      // continues one, else from an unknown start taken as a line start; kept
      // to be read in order once the gap fills (or is given up).
      const bool continues = flow->ahead_live && flow->ahead.next == at;
      if (!continues) {
        flow->ahead = Scanner{};
        flow->ahead.next = at;
        flow->ahead_live = true;
        start_unknown = true;
      }
      result.values += flow->ahead.scan(payload, n, at);
      s.overwrite(payload, n, at, impl_->key, edited);
      flow->ahead.overwrite(payload, n, at, impl_->key, edited);
      if (!flow->pending.contains(at)) {
        flow->pending.emplace(at, std::string(reinterpret_cast<const char*>(payload), n));
        flow->pending_bytes += n;
        impl_->pending_total += n;
      }
      if (flow->pending_bytes > kPendingBytes) impl_->give_up_all(*flow);
    }
    if (fin || rst) {
      impl_->erase(it);
    }
  } else if (sport == impl_->port && (ack || rst)) {
    // The server's side: its acknowledgement of bytes past a hole the capture
    // did not fill means the capture lost them (TCP did not); a reset ends
    // the connection.
    const auto it = flows.find(flow_id(dst, src, tcp + 2, tcp));
    if (it != flows.end()) {
      if (rst) {
        impl_->erase(it);
      } else if (it->second.started) {
        Flow& flow = it->second;
        const std::uint64_t acked = static_cast<std::uint32_t>(be32(tcp + 8) - flow.isn);
        if (acked < (1ull << 31) && acked > flow.in_order.next) impl_->give_up_before(flow, acked);
      }
    }
  }
  {
    DigestRedactor::FlowId id{};
    std::memcpy(id.data(), src, alen);
    std::memcpy(id.data() + 16, dst, alen);
    std::memcpy(id.data() + 32, tcp, 4);  // both ports
    result.digests = impl_->digests.tcp(id, be32(tcp + 4), syn, fin || rst, payload, n, edited);
  }
  result.raw = impl_->redact_raw(payload, n, start_unknown, edited);
  result.edited = edited;
  if (edited) {
    if (original.empty() ? valid_now : valid_in(original.data())) {
      tcp[16] = tcp[17] = 0;
      const auto sum = static_cast<std::uint16_t>(
          ~tcp_checksum_fold(version == 6, src, dst, std::span<const unsigned char>(tcp, tcp_len)));
      tcp[16] = static_cast<unsigned char>(sum >> 8);
      tcp[17] = static_cast<unsigned char>(sum & 0xFF);
      result.checksum_recomputed = true;
    } else {
      result.checksum_left = true;
    }
  }
  return result;
}

}  // namespace crh::capture::detail
