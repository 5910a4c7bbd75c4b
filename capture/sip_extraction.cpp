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

namespace {

// Whether bytes could still become a SIP start line: a prefix of "SIP/2.0 ",
// or a method token with at most a space and the start of a SIP or tel URI.
bool could_be_sip(std::string_view s) {
  if (s.size() < 8 && std::string_view("SIP/2.0 ").starts_with(s)) return true;
  std::size_t i = 0;
  while (i < s.size() && i < 32 && method_char(s[i])) ++i;
  if (i == s.size()) return i < 32;
  if (i == 0 || s[i] != ' ') return false;
  const auto uri = s.substr(i + 1);
  for (std::string_view scheme : {"sip:", "sips:", "tel:"})
    if (uri.size() < scheme.size() && starts_with_nocase(scheme, uri)) return true;
  return false;
}

}  // namespace

// Decides from the stream's first bytes (with any held before) whether it
// carries SIP; false when they are held because they cannot tell yet. The
// held bytes go their way first once it is decided.
bool Extractor::decide_sip(Stream& st, int dir, std::string_view data, std::uint64_t frame, std::int64_t ns,
                           std::int64_t abs, std::uint32_t ack, bool acked) {
  const bool same = st.sip_held.empty() || st.sip_held_dir == dir;
  const std::string joined = same ? st.sip_held + std::string(data) : std::string(data);
  if (same && could_be_sip(joined) && !starts_sip(joined)) {
    if (st.sip_held.empty()) st.sip_held_abs = abs;
    st.sip_held = joined;
    st.sip_held_dir = dir;
    return false;
  }
  st.sip_decided = true;
  st.sip = starts_sip(joined);
  if (st.sip) ++summary.sip_streams;
  if (!st.sip_held.empty()) {
    const std::string held = std::move(st.sip_held);
    st.sip_held.clear();
    deliver(st, st.sip_held_dir, held, frame, ns, st.sip_held_abs, ack, acked);
  }
  return true;
}

// The stream ends with bytes held: they were never SIP.
void Extractor::release_held(Stream& st, std::uint64_t frame, std::int64_t ns) {
  st.sip_decided = true;
  if (st.sip_held.empty()) return;
  const std::string held = std::move(st.sip_held);
  st.sip_held.clear();
  deliver(st, st.sip_held_dir, held, frame, ns, st.sip_held_abs, 0, false);
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
    auto parsed = calls::sip::parse_datagram(s.payload);
    m.message = std::move(parsed.message);
    m.error = std::move(parsed.error);
  }
  sip_out(std::move(m));
}

// A stream's bytes in order, one direction: every whole message out.
void Extractor::sip_bytes(Stream& st, int dir, std::string_view data, std::uint64_t frame, std::int64_t ns) {
  if (st.sip_broken[dir]) return;
  auto& reader = st.sip_reader[dir];
  if (!reader) reader = std::make_unique<calls::sip::StreamReader>();
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
  WireSipMessage m;
  m.tcp = true;
  m.stream = st.index;
  m.source = dir == 0 ? st.client : st.server;
  m.destination = dir == 0 ? st.server : st.client;
  m.at = WireTime{ns, frame};
  m.error = why + " (tcp.stream " + std::to_string(st.index) + ", frame " + std::to_string(frame) +
            "; the rest of this direction is not read)";
  st.sip_reader[dir].reset();  // only now: `why` may be the reader's own error text
  sip_out(std::move(m));
}

}  // namespace crh::capture::extraction
