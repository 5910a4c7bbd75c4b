// SIP in the offline reader (issue 26): UDP datagrams that carry a SIP start
// line are read as one message each; a TCP stream whose first bytes are a
// SIP start line is read by core's SIP stream reader (Content-Length framing)
// instead of the HTTP ones. Every message, readable or not, goes to the SIP
// sink; nothing here judges calls (pcap_check_sip.cpp does).
#include <algorithm>

#include "capture/extractor_parts.hpp"

namespace crh::capture::extraction {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(s[i]) != prefix[i]) return false;
  return true;
}

bool method_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-' || c == '_'; }

}  // namespace

// "SIP/2.0 " (a status line), or a method token, one space and a SIP or tel
// URI: an HTTP request's target starts with '/' or a scheme HTTP uses, so
// "OPTIONS sip:..." is SIP and "OPTIONS / HTTP/1.1" is not.
bool starts_sip(std::string_view s) {
  if (s.substr(0, 8) == "SIP/2.0 ") return true;
  std::size_t i = 0;
  while (i < s.size() && i < 32 && method_char(s[i])) ++i;
  if (i == 0 || i >= s.size() || s[i] != ' ') return false;
  const auto uri = s.substr(i + 1);
  return starts_with_nocase(uri, "sip:") || starts_with_nocase(uri, "sips:") || starts_with_nocase(uri, "tel:");
}

void Extractor::sip_out(WireSipMessage&& m) {
  if (m.message) ++summary.sip_messages;
  else ++summary.sip_unreadable;
  if (sip_sink) sip_sink(std::move(m));
}

void Extractor::udp(const Segment& s, std::uint64_t frame, std::int64_t ns) {
  ++summary.udp_packets;
  if (!starts_sip(s.payload)) {
    ++summary.skipped_packets;  // DNS, SIP keep-alives (CRLF), anything else
    return;
  }
  WireSipMessage m;
  m.source = WireEndpoint{printable(s.v6, s.src), s.sport};
  m.destination = WireEndpoint{printable(s.v6, s.dst), s.dport};
  m.at = WireTime{ns, frame};
  if (s.payload.size() < s.payload_length) {
    m.error = "datagram truncated by the capture (" + std::to_string(s.payload.size()) + " of " +
              std::to_string(s.payload_length) + " bytes)";
  } else {
    auto parsed = core::sip::parse_datagram(s.payload);
    m.message = std::move(parsed.message);
    m.error = std::move(parsed.error);
  }
  sip_out(std::move(m));
}

// A stream's bytes in order, one direction: every whole message out.
void Extractor::sip_bytes(Stream& st, int dir, std::string_view data, std::uint64_t frame, std::int64_t ns) {
  if (st.sip_broken[dir]) return;
  auto& reader = st.sip_reader[dir];
  if (!reader) reader = std::make_unique<core::sip::StreamReader>();
  reader->feed(data);
  const WireEndpoint& from = dir == 0 ? st.client : st.server;
  const WireEndpoint& to = dir == 0 ? st.server : st.client;
  while (auto message = reader->next()) {
    WireSipMessage m;
    m.tcp = true;
    m.stream = st.index;
    m.source = from;
    m.destination = to;
    m.at = WireTime{ns, frame};
    m.message = std::move(message);
    sip_out(std::move(m));
  }
  if (!reader->error().empty()) sip_broken(st, dir, reader->error(), frame, ns);
}

// The direction cannot be read further (an unreadable message, bytes the
// capture lacks): counted once, its later bytes ignored, as a SIP stream
// reader cannot find the next message start by itself.
void Extractor::sip_broken(Stream& st, int dir, const std::string& why, std::uint64_t frame, std::int64_t ns) {
  if (st.sip_broken[dir]) return;
  st.sip_broken[dir] = true;
  st.sip_reader[dir].reset();
  WireSipMessage m;
  m.tcp = true;
  m.stream = st.index;
  m.source = dir == 0 ? st.client : st.server;
  m.destination = dir == 0 ? st.server : st.client;
  m.at = WireTime{ns, frame};
  m.error = why + " (tcp.stream " + std::to_string(st.index) + ", frame " + std::to_string(frame) +
            "; the rest of this direction is not read)";
  sip_out(std::move(m));
}

}  // namespace crh::capture::extraction
