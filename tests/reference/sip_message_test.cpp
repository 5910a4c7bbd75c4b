// The reference's own SIP reader: framing, compact names, folded and combined
// headers, addresses and URIs.
#include <gtest/gtest.h>

#include "reference/sip_message.hpp"

namespace crh::reference {
namespace {

TEST(SipMessage, CompactFoldedAndCombinedHeadersAndADatagramBodyCutAtContentLength) {
  const std::string text =
      "INVITE sip:+15550101@example.com;user=phone SIP/2.0\r\n"
      "v: SIP/2.0/UDP a.example:5060;branch=z9hG4bK1, SIP / 2.0 / TCP [2001:db8::1]:5070;branch=z9hG4bK2\r\n"
      "Via: SIP/2.0/UDP c.example;branch=z9hG4bK3\r\n"
      "f: \"A, B\" <sip:+15557000001@example.com>;tag=9\r\n"
      "t: sip:+15550101@example.com\r\n"
      "i: abc@host\r\n"
      "CSeq: 7\r\n INVITE\r\n"
      "l: 4\r\n\r\nbodyEXTRA";
  auto p = parse_sip(text, false);
  ASSERT_EQ(p.status, SipParseStatus::complete);
  const auto& m = p.message;
  EXPECT_EQ(m.method, "INVITE");
  EXPECT_EQ(m.body, "body");
  auto vias = m.all("Via");
  ASSERT_EQ(vias.size(), 3u);
  auto second = parse_via(vias[1]);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->transport, "TCP");
  EXPECT_EQ(second->host, "2001:db8::1");
  EXPECT_EQ(second->port, 5070u);
  EXPECT_EQ(param(second->params, "branch"), "z9hG4bK2");
  EXPECT_EQ(m.header("CSeq"), "7 INVITE");
  EXPECT_EQ(m.all("From").size(), 1u) << "a comma inside a quoted display name splits nothing";
  auto from = parse_address(*m.header("From"));
  ASSERT_TRUE(from);
  EXPECT_EQ(uri_user(from->uri), "+15557000001");
  EXPECT_EQ(param(from->params, "tag"), "9");
  auto to = parse_address(*m.header("To"));
  ASSERT_TRUE(to);
  EXPECT_EQ(to->uri, "sip:+15550101@example.com");
  EXPECT_EQ(request_defect(m), "");
  EXPECT_EQ(uri_user(m.uri), "+15550101");
}

TEST(SipMessage, StreamFramingNeedsTheWholeBody) {
  const std::string one = "OPTIONS sip:x@y SIP/2.0\r\nContent-Length: 3\r\n\r\nabc";
  const std::string text = "\r\n\r\n" + one + one;
  for (std::size_t cut = 0; cut < 4 + one.size(); ++cut)
    EXPECT_EQ(parse_sip(std::string_view(text).substr(0, cut), true).status, SipParseStatus::incomplete) << cut;
  auto p = parse_sip(text, true);
  ASSERT_EQ(p.status, SipParseStatus::complete);
  EXPECT_EQ(p.consumed, 4 + one.size());
  EXPECT_EQ(p.message.body, "abc");
}

TEST(SipMessage, RejectsWhatIsNotSip) {
  for (std::string_view bad : {"GET / HTTP/1.1\r\n\r\n", "INVITE sip:x@y SIP/3.0\r\n\r\n", "INVITE  SIP/2.0\r\n\r\n",
                               "SIP/2.0 99 Low\r\n\r\n", "INVITE sip:x@y SIP/2.0\r\nno colon here\r\n\r\n",
                               "INVITE sip:x@y SIP/2.0\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
                               "INVITE sip:x@y SIP/2.0\r\nContent-Length: -1\r\n\r\n"})
    EXPECT_EQ(parse_sip(bad, false).status, SipParseStatus::invalid) << bad;
  EXPECT_EQ(parse_sip(std::string(70'000, 'a'), true).status, SipParseStatus::too_large);
  EXPECT_EQ(parse_sip("INVITE sip:x@y SIP/2.0\r\nContent-Length: 99999999\r\n\r\n", true).status,
            SipParseStatus::too_large);
}

TEST(SipMessage, UserParts) {
  EXPECT_EQ(uri_user("sip:%2B15550101@host"), "+15550101");
  EXPECT_EQ(uri_user("sips:alice:secret@host;transport=tls"), "alice");
  EXPECT_EQ(uri_user("tel:+15550101;phone-context=example.com"), "+15550101");
  EXPECT_EQ(uri_user("sip:host.example"), "");
  EXPECT_EQ(uri_user("http://x@y"), "");
  auto bare = parse_address("sip:+1@h;tag=abc");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->uri, "sip:+1@h");
  EXPECT_EQ(param(bare->params, "tag"), "abc");
  EXPECT_FALSE(parse_address("\"unterminated <sip:x@y>"));
  EXPECT_FALSE(parse_address("<sip:x@y"));
}

TEST(SipMessage, RequestDefects) {
  auto p = parse_sip("INVITE sip:x@y SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bKx\r\nFrom: <sip:a@h>;tag=1\r\n"
                     "To: <sip:x@y>\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\nMax-Forwards: seventy\r\n\r\n",
                     false);
  ASSERT_EQ(p.status, SipParseStatus::complete);
  EXPECT_EQ(request_defect(p.message), "Malformed Max-Forwards");
  EXPECT_FALSE(parse_via("SIP/2.0/UDP"));
  EXPECT_FALSE(parse_via("SIP/2.0/UDP host:99999"));
  EXPECT_FALSE(parse_cseq("99999999999 INVITE"));
}

}  // namespace
}  // namespace crh::reference
