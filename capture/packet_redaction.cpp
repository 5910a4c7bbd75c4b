// packet_redaction: see packet_redaction.hpp
#include "capture/packet_redaction.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <string_view>

#include <pcap/dlt.h>

namespace crh::capture::detail {
namespace {

constexpr std::string_view kName = "apikey";
constexpr std::size_t kPendingBytes = 1 << 20;  // out-of-order payload kept per flow to scan once the gap fills
constexpr std::size_t kRanges = 512;            // value ranges kept per flow for later retransmissions
constexpr std::size_t kFlows = 65536;
constexpr std::size_t kEdgeMin = 4;  // shortest end of the key matched at a segment edge

std::uint16_t be16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] << 8 | p[1]); }
std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

char lower(unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); }

// Where the IP header starts for a link type, or -1. The protocol is read
// from the IP version nibble, so BSD loopback's host-order family needs no care.
long ip_offset(int link_type, std::span<const unsigned char> p) {
  switch (link_type) {
    case DLT_EN10MB: {
      std::size_t off = 12;
      while (p.size() >= off + 2) {
        const auto type = be16(&p[off]);
        if (type == 0x8100 || type == 0x88a8 || type == 0x9100) {
          off += 4;
          continue;
        }
        return (type == 0x0800 || type == 0x86DD) ? static_cast<long>(off + 2) : -1;
      }
      return -1;
    }
    case DLT_LINUX_SLL: return 16;
    case DLT_LINUX_SLL2: return 20;
    case DLT_NULL:
    case DLT_LOOP: return 4;
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6: return 0;
    default: return link_type == 101 ? 0 : -1;  // LINKTYPE_RAW as written in files
  }
}

}  // namespace

std::uint16_t tcp_checksum_fold(bool ipv6, const unsigned char* src, const unsigned char* dst,
                                std::span<const unsigned char> tcp) {
  std::uint64_t sum = 0;
  const std::size_t alen = ipv6 ? 16 : 4;
  for (std::size_t i = 0; i < alen; i += 2) sum += be16(src + i) + be16(dst + i);
  sum += 6;  // next header / protocol: TCP
  sum += ipv6 ? (tcp.size() >> 16) + (tcp.size() & 0xFFFF) : tcp.size();
  std::size_t i = 0;
  for (; i + 1 < tcp.size(); i += 2) sum += be16(&tcp[i]);
  if (i < tcp.size()) sum += std::uint32_t{tcp[i]} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

struct PacketRedactor::Flow {
  enum class State { line_start, name, ows, value, other };
  bool started = false;
  bool saw_syn = false;
  std::uint32_t isn = 0;   // sequence number of the first payload byte
  std::uint64_t next = 0;  // the next offset (from isn) the scanner has not read
  State state = State::line_start;
  std::size_t name_pos = 0;
  std::uint64_t open_start = 0;                                // the value being read, when state == value
  std::deque<std::pair<std::uint64_t, std::uint64_t>> ranges;  // closed values [begin, end), ascending
  std::map<std::uint64_t, std::string> pending;                // payload ahead of `next`, by offset
  std::size_t pending_bytes = 0;

  // Reads bytes in stream order from offset `at`; returns the values opened.
  unsigned scan(const unsigned char* data, std::size_t n, std::uint64_t at) {
    unsigned opened = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned char c = data[i];
      const std::uint64_t pos = at + i;
      switch (state) {
        case State::line_start:
          if (lower(c) == kName[0]) {
            state = State::name;
            name_pos = 1;
          } else if (c != '\n') {
            state = State::other;
          }
          break;
        case State::name:
          if (name_pos == kName.size()) {
            state = c == ':' ? State::ows : (c == '\n' ? State::line_start : State::other);
          } else if (lower(c) == kName[name_pos]) {
            ++name_pos;
          } else {
            state = c == '\n' ? State::line_start : State::other;
          }
          break;
        case State::ows:
          if (c == ' ' || c == '\t') break;
          if (c == '\r' || c == '\n') {
            state = c == '\n' ? State::line_start : State::other;
            break;
          }
          state = State::value;
          open_start = pos;
          ++opened;
          break;
        case State::value:
          if (c == '\r' || c == '\n') {
            ranges.emplace_back(open_start, pos);
            if (ranges.size() > kRanges) ranges.pop_front();
            state = c == '\n' ? State::line_start : State::other;
          }
          break;
        case State::other:
          if (c == '\n') state = State::line_start;
          break;
      }
    }
    return opened;
  }

  // Overwrites the bytes of [at, at + n) that belong to a value; returns
  // how many values it touched.
  unsigned overwrite(unsigned char* data, std::size_t n, std::uint64_t at, bool& edited) const {
    unsigned touched = 0;
    auto fill = [&](std::uint64_t b, std::uint64_t e) {
      const std::uint64_t from = std::max(b, at), to = std::min(e, at + n);
      if (from >= to) return;
      ++touched;
      for (auto k = from; k < to; ++k) {
        auto& byte = data[k - at];
        if (byte != kFill) {
          byte = kFill;
          edited = true;
        }
      }
    };
    if (state == State::value) fill(open_start, next);
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) {
      if (it->second <= at) break;  // ascending: the rest end earlier still
      fill(it->first, it->second);
    }
    return touched;
  }
};

struct PacketRedactor::Impl {
  std::string key;
  std::uint16_t port = 0;
  std::unordered_map<std::string, Flow> flows;

  // The whole key anywhere, and its ends at the segment's edges (the rest
  // of a key split across segments whose other half came in another order).
  unsigned redact_raw(unsigned char* data, std::size_t n, bool& edited) const {
    if (key.empty() || n == 0) return 0;
    unsigned found = 0;
    auto fill = [&](std::size_t from, std::size_t len) {
      bool changed = false;
      for (std::size_t k = from; k < from + len; ++k)
        if (data[k] != kFill) {
          data[k] = kFill;
          changed = true;
        }
      if (changed) {
        ++found;
        edited = true;
      }
    };
    const auto* k = reinterpret_cast<const unsigned char*>(key.data());
    for (const unsigned char* p = data; p + key.size() <= data + n;) {
      const unsigned char* hit = std::search(p, static_cast<const unsigned char*>(data + n), k, k + key.size());
      if (hit == data + n) break;
      fill(static_cast<std::size_t>(hit - static_cast<const unsigned char*>(data)), key.size());
      p = hit + key.size();
    }
    if (key.size() >= 2 * kEdgeMin) {
      for (std::size_t len = std::min(n, key.size() - 1); len >= kEdgeMin; --len)
        if (std::memcmp(data, k + key.size() - len, len) == 0) {
          fill(0, len);
          break;
        }
      for (std::size_t len = std::min(n, key.size() - 1); len >= kEdgeMin; --len)
        if (std::memcmp(data + n - len, k, len) == 0) {
          fill(n - len, len);
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

RedactionResult PacketRedactor::redact(int link_type, std::span<unsigned char> packet) {
  RedactionResult result;
  const long off = ip_offset(link_type, packet);
  if (off < 0 || packet.size() < static_cast<std::size_t>(off) + 20) return result;
  unsigned char* ip = packet.data() + off;
  const std::size_t avail = packet.size() - static_cast<std::size_t>(off);
  const int version = ip[0] >> 4;
  unsigned char *tcp = nullptr, *src = nullptr, *dst = nullptr;
  std::size_t tcp_len = 0;
  if (version == 4) {
    const std::size_t ihl = (ip[0] & 0x0F) * 4u;
    if (ihl < 20 || avail < ihl + 20 || ip[9] != 6) return result;
    if ((be16(ip + 6) & 0x3FFF) != 0) return result;  // a fragment: no TCP header of its own to trust
    const std::size_t total = be16(ip + 2);
    if (total < ihl + 20) return result;
    tcp = ip + ihl;
    tcp_len = total - ihl;
    src = ip + 12;
    dst = ip + 16;
  } else if (version == 6) {
    if (avail < 60 || ip[6] != 6) return result;  // extension headers are not followed
    tcp = ip + 40;
    tcp_len = be16(ip + 4);
    src = ip + 8;
    dst = ip + 24;
  } else {
    return result;
  }
  const std::size_t captured = std::min(tcp_len, avail - static_cast<std::size_t>(tcp - ip));
  if (captured < 20) return result;
  const std::size_t doff = (tcp[12] >> 4) * 4u;
  if (doff < 20 || doff > captured) return result;
  unsigned char* payload = tcp + doff;
  const std::size_t n = captured - doff;
  const std::uint16_t dport = be16(tcp + 2);
  const bool syn = tcp[13] & 0x02;
  const std::uint32_t seq = be32(tcp + 4) + (syn ? 1 : 0);

  // Whether the checksum is right before the edit: only then is it made right again.
  const bool whole = captured == tcp_len;
  const bool valid_before =
      whole && tcp_checksum_fold(version == 6, src, dst, std::span<const unsigned char>(tcp, tcp_len)) == 0xFFFF;

  bool edited = false;
  if (dport == impl_->port && (n > 0 || syn)) {
    const std::size_t alen = version == 6 ? 16 : 4;
    std::string id(reinterpret_cast<const char*>(src), alen);
    id.append(reinterpret_cast<const char*>(dst), alen);
    id.append(reinterpret_cast<const char*>(tcp), 4);
    if (impl_->flows.size() >= kFlows && !impl_->flows.contains(id)) impl_->flows.clear();
    Flow& flow = impl_->flows[id];
    if (syn && flow.started && (!flow.saw_syn || flow.isn != seq)) flow = Flow{};  // the 4-tuple is reused
    if (!flow.started) {
      flow.started = true;
      flow.saw_syn = syn;
      flow.isn = seq;
    }
    const std::uint64_t at = static_cast<std::uint32_t>(seq - flow.isn);
    if (at >= (1ull << 31)) {
      // Before the first byte seen (the flow was joined mid-way): read it alone.
      Flow scratch;
      result.values += scratch.scan(payload, n, 0);
      scratch.next = n;
      scratch.overwrite(payload, n, 0, edited);
    } else if (at <= flow.next) {
      if (at + n > flow.next) {
        const std::size_t skip = static_cast<std::size_t>(flow.next - at);
        result.values += flow.scan(payload + skip, n - skip, flow.next);
        flow.next = at + n;
        // Payload that came ahead of the gap is read now, in order, so a
        // later retransmission of it is overwritten.
        while (!flow.pending.empty() && flow.pending.begin()->first <= flow.next) {
          auto node = flow.pending.extract(flow.pending.begin());
          flow.pending_bytes -= node.mapped().size();
          const auto end = node.key() + node.mapped().size();
          if (end > flow.next) {
            const auto s = static_cast<std::size_t>(flow.next - node.key());
            flow.scan(reinterpret_cast<const unsigned char*>(node.mapped().data()) + s, node.mapped().size() - s,
                      flow.next);
            flow.next = end;
          }
        }
      }
      flow.overwrite(payload, n, at, edited);
    } else {
      // Ahead of a gap: read alone now (a whole header in it is found), kept
      // to be read in order once the gap fills.
      Flow scratch;
      result.values += scratch.scan(payload, n, 0);
      scratch.next = n;
      flow.overwrite(payload, n, at, edited);
      scratch.overwrite(payload, n, 0, edited);
      if (flow.pending_bytes + n <= kPendingBytes && !flow.pending.contains(at)) {
        flow.pending.emplace(at, std::string(reinterpret_cast<const char*>(payload), n));
        flow.pending_bytes += n;
      }
    }
  }
  result.raw = impl_->redact_raw(payload, n, edited);
  result.edited = edited;
  if (edited) {
    if (valid_before) {
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
