// The SIP message reader/writer: datagrams, TCP stream framing, limits,
// compact names, and the URI/parameter helpers the call driver relies on.
#include "calls/sip_message.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace sip = crh::calls::sip;

namespace {

const std::string kInvite =
    "INVITE sip:+15550001@127.0.0.1:5070 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 127.0.0.1:40000;branch=z9hG4bKabc;rport\r\n"
    "Max-Forwards: 70\r\n"
    "From: \"Caller, A\" <sip:+15551234@127.0.0.1>;tag=ftag\r\n"
    "To: <sip:+15550001@127.0.0.1:5070>\r\n"
    "Call-ID: call-1@127.0.0.1\r\n"
    "CSeq: 1 INVITE\r\n"
    "Content-Type: application/sdp\r\n"
    "Content-Length: 4\r\n"
    "\r\n"
    "v=0\n";

std::string response(const std::string& status_line, const std::string& extra = "") {
  return status_line + "\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nCSeq: 1 INVITE\r\n" + extra + "Content-Length: 0\r\n\r\n";
}

}  // namespace

TEST(SipMessage, ParsesARequest) {
  auto r = sip::parse_datagram(kInvite);
  ASSERT_TRUE(r.message) << r.error;
  EXPECT_TRUE(r.message->request);
  EXPECT_EQ(r.message->method, "INVITE");
  EXPECT_EQ(r.message->uri, "sip:+15550001@127.0.0.1:5070");
  EXPECT_EQ(r.message->body, "v=0\n");
  EXPECT_EQ(r.message->cseq_method(), "INVITE");
  ASSERT_NE(r.message->find("call-id"), nullptr);
  EXPECT_EQ(*r.message->find("call-id"), "call-1@127.0.0.1");
  EXPECT_EQ(r.message->find("Route"), nullptr);
}

TEST(SipMessage, ParsesAResponseWithAndWithoutReason) {
  auto r = sip::parse_datagram(response("SIP/2.0 403 Forbidden by policy"));
  ASSERT_TRUE(r.message) << r.error;
  EXPECT_FALSE(r.message->request);
  EXPECT_EQ(r.message->status, 403u);
  EXPECT_EQ(r.message->reason, "Forbidden by policy");
  auto bare = sip::parse_datagram(response("SIP/2.0 200"));
  ASSERT_TRUE(bare.message) << bare.error;
  EXPECT_EQ(bare.message->status, 200u);
  EXPECT_EQ(bare.message->reason, "");
}

TEST(SipMessage, CompactNamesFindTheirLongFormsAndBack) {
  auto r = sip::parse_datagram(
      "SIP/2.0 180 Ringing\r\nv: SIP/2.0/UDP a;branch=z9hG4bKx\r\ni: cid\r\nf: <sip:a@b>;tag=1\r\n"
      "t: <sip:c@d>;tag=2\r\nm: <sip:c@10.0.0.1>\r\nCSeq: 1 INVITE\r\nl: 0\r\n\r\n");
  ASSERT_TRUE(r.message) << r.error;
  EXPECT_EQ(*r.message->find("Call-ID"), "cid");
  EXPECT_EQ(*r.message->find("Via"), "SIP/2.0/UDP a;branch=z9hG4bKx");
  EXPECT_EQ(*r.message->find("Contact"), "<sip:c@10.0.0.1>");
  EXPECT_EQ(sip::param_of(*r.message->find("To"), "tag"), "2");
  EXPECT_EQ(r.message->headers[1].name, "i");  // kept as sent
  auto long_form = sip::parse_datagram(kInvite);
  EXPECT_NE(long_form.message->find("i"), nullptr);
  EXPECT_NE(long_form.message->find("V"), nullptr);
}

TEST(SipMessage, SplitsMultiViaAndKeepsOrder) {
  auto r = sip::parse_datagram(
      "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP p1;branch=z9hG4bK1, SIP/2.0/UDP p2;branch=z9hG4bK2\r\n"
      "v: SIP/2.0/TCP p3;branch=z9hG4bK3\r\nRecord-Route: <sip:p1;lr>,<sip:p2;lr>\r\n"
      "WWW-Authenticate: Digest realm=\"a,b\", nonce=\"n\"\r\nCSeq: 1 INVITE\r\n\r\n");
  ASSERT_TRUE(r.message) << r.error;
  auto vias = r.message->all("Via");
  ASSERT_EQ(vias.size(), 3u);
  EXPECT_EQ(sip::param_of(vias[0], "branch"), "z9hG4bK1");
  EXPECT_EQ(sip::param_of(vias[1], "branch"), "z9hG4bK2");
  EXPECT_EQ(sip::param_of(vias[2], "branch"), "z9hG4bK3");
  auto routes = r.message->all("Record-Route");
  ASSERT_EQ(routes.size(), 2u);
  EXPECT_EQ(sip::uri_of(routes[1]), "sip:p2;lr");
  EXPECT_EQ(r.message->all("WWW-Authenticate").size(), 1u);  // commas inside one value
}

TEST(SipMessage, FoldedLinesAndOddWhitespace) {
  auto r = sip::parse_datagram(
      "SIP/2.0 200 OK\r\nSubject :   first\r\n   second\r\n\tthird  \r\nCSeq:1    INVITE\r\nTo:<sip:x@y>\r\n\r\n");
  ASSERT_TRUE(r.message) << r.error;
  EXPECT_EQ(*r.message->find("Subject"), "first second third");
  EXPECT_EQ(*r.message->find("s"), "first second third");
  EXPECT_EQ(r.message->cseq_method(), "INVITE");
  EXPECT_EQ(sip::uri_of(*r.message->find("To")), "sip:x@y");
}

TEST(SipMessage, BareLineFeedsAreRead) {
  auto r = sip::parse_datagram("SIP/2.0 486 Busy Here\nCSeq: 1 INVITE\n\n");
  ASSERT_TRUE(r.message) << r.error;
  EXPECT_EQ(r.message->status, 486u);
}

TEST(SipMessage, DatagramBodyWithoutContentLengthIsTheRest) {
  auto r = sip::parse_datagram("SIP/2.0 200 OK\r\nCSeq: 1 INVITE\r\n\r\nv=0\r\no=x\r\n");
  ASSERT_TRUE(r.message) << r.error;
  EXPECT_EQ(r.message->body, "v=0\r\no=x\r\n");
}

TEST(SipMessage, DatagramContentLengthTruncatesOrFails) {
  auto shorter = sip::parse_datagram("SIP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nabcdef");
  ASSERT_TRUE(shorter.message) << shorter.error;
  EXPECT_EQ(shorter.message->body, "ab");
  EXPECT_FALSE(sip::parse_datagram("SIP/2.0 200 OK\r\nContent-Length: 20\r\n\r\nabc").message);
  EXPECT_FALSE(sip::parse_datagram("SIP/2.0 200 OK\r\nContent-Length: x1\r\n\r\n").message);
  EXPECT_FALSE(sip::parse_datagram("SIP/2.0 200 OK\r\nl: 1\r\nContent-Length: 2\r\n\r\nab").message);
}

TEST(SipMessage, GarbageIsAnErrorNotACrash) {
  for (const std::string& bad : std::vector<std::string>{"", "\r\n\r\n", "hello", "HTTP/1.1 200 OK\r\n\r\n", "SIP/2.0 99 Low\r\n\r\n",
                          "SIP/2.0 700 High\r\n\r\n", "SIP/2.0 2x0 OK\r\n\r\n", "INVITE SIP/2.0\r\n\r\n",
                          "INVITE sip:a@b SIP/3.0\r\n\r\n", "INV(TE sip:a@b SIP/2.0\r\n\r\n",
                          "SIP/2.0 200 OK\r\nNoColon\r\n\r\n", "SIP/2.0 200 OK\r\n folded-first\r\n\r\n",
                          "SIP/2.0 200 OK\r\nA: b\rc\r\n\r\n", std::string("SIP/2.0 200 OK\r\nA: \0\r\n\r\n", 24),
                          "SIP/2.0 200 OK\r\nCSeq: 1 INVITE"}) {
    auto r = sip::parse_datagram(bad);
    EXPECT_FALSE(r.message) << "accepted: " << bad;
    EXPECT_FALSE(r.error.empty());
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {  // random bytes and random cuts of a real message
    std::string s = kInvite.substr(0, rng() % kInvite.size());
    for (int k = 0; k < 5 && !s.empty(); ++k) s[rng() % s.size()] ^= static_cast<char>(1 + rng() % 0x7f);
    (void)sip::parse_datagram(s);
  }
}

TEST(SipMessage, LimitsMakeErrors) {
  sip::Limits limits;
  std::string huge_head = "SIP/2.0 200 OK\r\nX: " + std::string(limits.head, 'a') + "\r\n\r\n";
  EXPECT_FALSE(sip::parse_datagram(huge_head).message);
  std::string huge_body = "SIP/2.0 200 OK\r\n\r\n" + std::string(limits.body + 1, 'b');
  EXPECT_FALSE(sip::parse_datagram(huge_body).message);
  std::string many = "SIP/2.0 200 OK\r\n";
  for (std::size_t i = 0; i <= limits.headers; ++i) many += "X: 1\r\n";
  EXPECT_FALSE(sip::parse_datagram(many + "\r\n").message);
}

TEST(SipMessage, StreamFramesAcrossSplitFeeds) {
  std::string two = kInvite + "\r\n\r\n" + response("SIP/2.0 100 Trying");
  for (std::size_t step : {1u, 2u, 7u, 64u}) {
    sip::StreamReader reader;
    std::vector<sip::Message> got;
    for (std::size_t at = 0; at < two.size(); at += step) {
      reader.feed(std::string_view(two).substr(at, step));
      while (auto m = reader.next()) got.push_back(std::move(*m));
    }
    ASSERT_EQ(got.size(), 2u) << "step " << step << ": " << reader.error();
    EXPECT_EQ(got[0].body, "v=0\n");
    EXPECT_EQ(got[1].status, 100u);
  }
}

TEST(SipMessage, StreamGivesManyMessagesFromOneFeed) {
  sip::StreamReader reader;
  reader.feed(response("SIP/2.0 100 Trying") + response("SIP/2.0 180 Ringing") + response("SIP/2.0 200 OK"));
  unsigned statuses[3] = {};
  for (auto& s : statuses) {
    auto m = reader.next();
    ASSERT_TRUE(m) << reader.error();
    s = m->status;
  }
  EXPECT_EQ(statuses[2], 200u);
  EXPECT_FALSE(reader.next());
  EXPECT_TRUE(reader.error().empty());
}

TEST(SipMessage, StreamErrors) {
  sip::StreamReader no_length;
  no_length.feed("SIP/2.0 200 OK\r\nCSeq: 1 INVITE\r\n\r\n");
  EXPECT_FALSE(no_length.next());
  EXPECT_NE(no_length.error().find("Content-Length"), std::string::npos);
  sip::StreamReader endless;
  for (int i = 0; i < 100 && endless.error().empty(); ++i) {
    endless.feed(std::string(1000, 'a'));
    EXPECT_FALSE(endless.next());
  }
  EXPECT_FALSE(endless.error().empty());
  sip::StreamReader big_body;
  big_body.feed("SIP/2.0 200 OK\r\nContent-Length: 99999999\r\n\r\n");
  EXPECT_FALSE(big_body.next());
  EXPECT_FALSE(big_body.error().empty());
  big_body.feed(response("SIP/2.0 200 OK"));  // no resynchronisation after an error
  EXPECT_FALSE(big_body.next());
}

TEST(SipMessage, SerializeThenParseRoundTrips) {
  auto first = sip::parse_datagram(kInvite);
  ASSERT_TRUE(first.message);
  first.message->body = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\n";
  auto again = sip::parse_datagram(sip::serialize(*first.message));
  ASSERT_TRUE(again.message) << again.error;
  EXPECT_EQ(again.message->body, first.message->body);
  EXPECT_EQ(*again.message->find("Content-Length"), std::to_string(first.message->body.size()));
  EXPECT_EQ(again.message->uri, first.message->uri);
  EXPECT_EQ(again.message->headers.size(), first.message->headers.size());
  sip::Message bare;
  bare.status = 487;
  bare.reason = "Request Terminated";
  auto text = sip::serialize(bare);
  EXPECT_EQ(text, "SIP/2.0 487 Request Terminated\r\nContent-Length: 0\r\n\r\n");
}

TEST(SipMessage, UriUserAndParams) {
  EXPECT_EQ(sip::uri_of("\"A <b>\" <sip:+1555@h;user=phone>;tag=abc"), "sip:+1555@h;user=phone");
  EXPECT_EQ(sip::uri_of("sip:alice@h;tag=x"), "sip:alice@h");
  EXPECT_EQ(sip::uri_of(" <sip:x@y> "), "sip:x@y");
  EXPECT_EQ(sip::user_of("sip:%2B1555%20x@h:5060"), "+1555 x");
  EXPECT_EQ(sip::user_of("sips:bob:secret@h"), "bob");
  EXPECT_EQ(sip::user_of("tel:+15550001;phone-context=x"), "+15550001");
  EXPECT_EQ(sip::user_of("sip:h.example"), "");
  EXPECT_EQ(sip::user_of("garbage"), "");
  EXPECT_EQ(sip::param_of("<sip:a@b;tag=uri>;tag=hdr", "tag"), "hdr");
  EXPECT_EQ(sip::param_of("<sip:a@b;tag=uri>", "tag"), std::nullopt);
  EXPECT_EQ(sip::param_of("SIP/2.0/UDP h:5060;rport;BRANCH=z9hG4bKq", "branch"), "z9hG4bKq");
  EXPECT_EQ(sip::param_of("SIP/2.0/UDP h:5060;rport;branch=z", "rport"), "");
  EXPECT_EQ(sip::param_of("<sip:a@b>;x=\"q;r\";y=2", "y"), "2");
  EXPECT_EQ(sip::param_of("<sip:a@b>;x=\"q;r\"", "x"), "q;r");
  EXPECT_EQ(sip::param_of("<sip:a@b", "tag"), std::nullopt);
}
