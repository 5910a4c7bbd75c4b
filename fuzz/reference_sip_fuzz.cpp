// libFuzzer target: bytes from a hostile SIP peer, read by the reference's own
// SIP reader as a datagram and as a stream, then handed to its user-agent
// server core (transactions, dialogs, the binding state). Crashes when a
// response it sends does not parse back, or when a stream's framing runs
// backwards or past the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "reference/sip_message.hpp"
#include "reference/sip_uas.hpp"

namespace {
using namespace crh::reference;

class FixedClock final : public Clock {
 public:
  time_point now() const override { return time_point(std::chrono::hours(24 * 365)); }
  std::string rfc3339(time_point t) const override {
    return format_rfc3339(std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(t.time_since_epoch())));
  }
};

[[noreturn]] void fail(const char* what, std::string_view bytes) {
  std::fprintf(stderr, "reference_sip_fuzz: %s: %.*s\n", what, static_cast<int>(bytes.size()), bytes.data());
  std::abort();
}

// Every response the UAS sends is SIP its own reader takes back, with a status.
void check_sent(std::string_view bytes) {
  auto back = parse_sip(bytes, true);
  if (back.status != SipParseStatus::complete || back.message.is_request || back.consumed != bytes.size())
    fail("a response that does not parse back", bytes);
  if (back.message.status < 100 || back.message.status > 699) fail("status out of range", bytes);
  for (const char* h : {"Via", "From", "To", "Call-ID", "CSeq"})
    if (!back.message.header(h)) fail("a response without a header every response copies", bytes);
}

struct Harness {
  FixedClock clock;
  Service service{ServiceConfig{"key", {}, {}, std::chrono::milliseconds(60'000)}, default_fixtures(), clock};
  SipUas uas{SipUasConfig{std::chrono::milliseconds(500), {}, "127.0.0.1", 5060, 1024}, service,
             [](const SipPeer&, std::string_view bytes) { check_sent(bytes); }};
  SipClock::time_point now{};
};

void exercise_helpers(const SipMessage& m) {
  for (auto via : m.all("Via")) (void)parse_via(via);
  for (const char* h : {"From", "To", "P-Asserted-Identity", "Contact"})
    if (auto v = m.header(h))
      if (auto a = parse_address(*v)) {
        (void)uri_user(a->uri);
        (void)param(a->params, "tag");
      }
  if (auto c = m.header("CSeq")) (void)parse_cseq(*c);
  (void)request_defect(m);
  (void)uri_user(m.uri);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A fresh UAS per input: runs repeat exactly, and nothing grows across inputs.
  Harness harness;
  SipPeer peer;
  peer.host = "127.0.0.1";
  peer.port = 5062;
  auto deliver = [&](const SipMessage& m) {
    exercise_helpers(m);
    harness.uas.on_message(m, peer, harness.now);
    harness.now += std::chrono::milliseconds(300);  // retransmissions and expiries run too
    harness.uas.run_deferred(harness.now);
    harness.uas.tick(harness.now);
  };
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (auto datagram = parse_sip(in, false); datagram.status == SipParseStatus::complete) deliver(datagram.message);
  // The same bytes as a stream of messages (transactions across them: a
  // retransmission, an ACK, a CANCEL, a BYE): each moves forward, never past the end.
  for (std::string_view rest = in; !rest.empty();) {
    auto p = parse_sip(rest, true);
    if (p.consumed > rest.size()) fail("consumed past the input", rest);
    if (p.status != SipParseStatus::complete) break;
    if (p.consumed == 0) fail("a complete message of no bytes", rest);
    deliver(p.message);
    rest.remove_prefix(p.consumed);
  }
  harness.now += std::chrono::seconds(40);  // past Timer H: everything expires
  harness.uas.tick(harness.now);
  if (harness.uas.transactions().transactions() != 0) fail("a transaction outlived 64*T1", in);
  return 0;
}
