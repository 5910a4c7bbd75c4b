// libFuzzer target for the SIP message reader/writer (calls/sip_message): the
// input as one datagram, then as a TCP stream cut where its first bytes say;
// whatever parses must serialize back into bytes that parse to the same
// message, and a stream cut anywhere must give what it gives whole.
//
// Input: byte 0 = flags (bits 0-2: how many cut bytes follow; bit 3: small
// limits), then the cut bytes (each a piece length - 1, used in turn), then
// the message bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "calls/sip_message.hpp"

namespace {

namespace sip = crh::calls::sip;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "SIP message invariant broken: %s\n", what);
  std::abort();
}

// Equal but for Content-Length headers (serialize writes one, the body's size).
bool same(const sip::Message& a, const sip::Message& b) {
  if (a.request != b.request || a.method != b.method || a.uri != b.uri || a.status != b.status ||
      a.reason != b.reason || a.body != b.body)
    return false;
  std::vector<const sip::Header*> ha, hb;
  for (auto& h : a.headers) ha.push_back(&h);
  for (auto& h : b.headers) hb.push_back(&h);
  auto drop_lengths = [](std::vector<const sip::Header*>& v) {
    std::erase_if(v, [](const sip::Header* h) {
      std::string lower;
      for (char c : h->name) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      return lower == "l" || lower == "content-length";
    });
  };
  drop_lengths(ha);
  drop_lengths(hb);
  if (ha.size() != hb.size()) return false;
  for (std::size_t i = 0; i < ha.size(); ++i)
    if (ha[i]->name != hb[i]->name || ha[i]->value != hb[i]->value) return false;
  return true;
}

void round_trip(const sip::Message& m, const sip::Limits& limits) {
  // Written back with CRLFs and one Content-Length, the head may grow: room for that.
  sip::Limits roomy{limits.head * 4 + 64, limits.body, limits.headers + 1};
  auto again = sip::parse_datagram(sip::serialize(m), roomy);
  check(again.message.has_value(), "a parsed message, serialized, does not parse");
  check(same(m, *again.message), "a parsed message, serialized and parsed, differs");
  sip::StreamReader stream(roomy);
  stream.feed(sip::serialize(m));
  auto framed = stream.next();
  check(framed.has_value() && same(m, *framed), "a serialized message is not framed back on a stream");
  (void)m.all("Via");
  (void)m.cseq_method();
  for (auto& h : m.headers) {
    (void)sip::user_of(sip::uri_of(h.value));
    (void)sip::param_of(h.value, "tag");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::uint8_t flags = data[0];
  std::size_t cuts = flags & 7;
  if (size < 1 + cuts) return 0;
  std::vector<std::size_t> pieces;
  for (std::size_t i = 0; i < cuts; ++i) pieces.push_back(std::size_t{data[1 + i]} + 1);
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1 + cuts, size - 1 - cuts);
  sip::Limits limits = (flags & 8) ? sip::Limits{256, 128, 8} : sip::Limits{};

  auto datagram = sip::parse_datagram(bytes, limits);
  check(datagram.message.has_value() != !datagram.error.empty(), "a datagram is neither a message nor an error");
  if (datagram.message) round_trip(*datagram.message, limits);

  sip::StreamReader whole(limits), cut(limits);
  whole.feed(bytes);
  std::vector<sip::Message> from_whole, from_cut;
  while (auto m = whole.next()) from_whole.push_back(std::move(*m));
  std::size_t at = 0, turn = 0;
  while (at < bytes.size()) {
    std::size_t n = pieces.empty() ? bytes.size() : pieces[turn++ % pieces.size()];
    cut.feed(bytes.substr(at, n));
    at += n;
    while (auto m = cut.next()) from_cut.push_back(std::move(*m));
  }
  // Cut or whole, the stream gives the same messages and fails alike.
  check(from_whole.size() == from_cut.size(), "a cut stream gives another number of messages");
  for (std::size_t i = 0; i < from_whole.size(); ++i) {
    check(same(from_whole[i], from_cut[i]), "a cut stream gives another message");
    round_trip(from_whole[i], limits);
  }
  check(whole.error().empty() == cut.error().empty(), "a cut stream fails where the whole does not");
  return 0;
}
