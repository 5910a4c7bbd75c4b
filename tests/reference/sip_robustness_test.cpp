// The reference's SIP side under retransmissions, malformed input and fault
// modes: decided once, retransmitted until ACKed, never crashed or hung.
#include <thread>

#include "sip_server_fixture.hpp"

namespace crh::test {
namespace {

using namespace std::chrono_literals;

TEST_F(SipServerTest, RetransmittedInviteGetsTheSameAnswerAndIsDecidedOnce) {
  start();
  const std::string number = tag_alias();
  SipTestPeer a(false, sip_port()), b(false, sip_port());
  SipRequest first = call(number, "+15557000001", "r1"), second = call(number, "+15557000002", "r2");
  auto won = invite(a, first);
  auto refused = invite(b, second);
  ASSERT_TRUE(won && refused);
  ASSERT_EQ(won->status, 200u);
  ASSERT_EQ(refused->status, 403u);
  // The same INVITEs again (same branch): the same finals, the same To tags —
  // a new decision would have made a new tag.
  b.send(second.bytes(b, sip_port()));
  auto refused_again = b.read_final();
  ASSERT_TRUE(refused_again);
  EXPECT_EQ(refused_again->status, 403u);
  EXPECT_EQ(refused_again->to_tag(), refused->to_tag());
  a.send(first.bytes(a, sip_port()));
  auto won_again = a.read_final();
  ASSERT_TRUE(won_again);
  EXPECT_EQ(won_again->status, 200u);
  EXPECT_EQ(won_again->to_tag(), won->to_tag());
  EXPECT_EQ(bound_caller(number), "+15557000001");
}

TEST_F(SipServerTest, FinalAnswersAreRetransmittedOverUdpUntilAcked) {
  start();  // T1 = 50 ms: retransmissions at 50, 150, 350 ms ...
  const std::string number = tag_alias();
  SipTestPeer a(false, sip_port()), b(false, sip_port());
  SipRequest first = call(number, "+15557000001", "g1"), second = call(number, "+15557000002", "g2");
  auto won = invite(a, first);
  auto refused = invite(b, second);
  ASSERT_TRUE(won && refused);
  auto won_resent = a.read(1s);
  ASSERT_TRUE(won_resent) << "a 2xx is retransmitted until its ACK (§13.3.1.4)";
  EXPECT_EQ(won_resent->status, 200u);
  auto refused_resent = b.read(1s);
  ASSERT_TRUE(refused_resent) << "a non-2xx final is retransmitted until its ACK (Timer G)";
  EXPECT_EQ(refused_resent->status, 403u);
  ack(a, first, *won);
  ack(b, second, *refused);
  std::this_thread::sleep_for(100ms);
  while (a.read(10ms)) {}  // one may have crossed the ACK
  while (b.read(10ms)) {}
  EXPECT_FALSE(a.read(800ms)) << "the 200 is still retransmitted after its ACK";
  EXPECT_FALSE(b.read(100ms)) << "the 403 is still retransmitted after its ACK";
}

TEST_F(SipServerTest, NonInviteRetransmissionGetsTheSameAnswer) {
  start();
  SipTestPeer a(false, sip_port());
  SipRequest bye = call("+15550101", "+15557000001", "bye-unknown").as("BYE");
  bye.to_tag = "nosuchtag";
  a.send(bye.bytes(a, sip_port()));
  auto first = a.read();
  a.send(bye.bytes(a, sip_port()));
  auto again = a.read();
  ASSERT_TRUE(first && again);
  EXPECT_EQ(first->status, 481u);
  EXPECT_EQ(again->raw, first->raw);
}

TEST_F(SipServerTest, ReceivedAndRportAreAddedAndTheAnswerGoesToTheSource) {
  start();
  SipTestPeer a(false, sip_port());
  SipRequest options = call("+15550101", "+15557000001", "nat").as("OPTIONS");
  std::string bytes = options.bytes(a, sip_port());
  // The top Via names an address the packet did not come from (a NAT), a second Via follows.
  bytes.replace(bytes.find("Via: SIP/2.0/UDP 127.0.0.1:"), 27, "Via: SIP/2.0/UDP 192.0.2.7:");
  bytes.insert(bytes.find("Max-Forwards"), "Via: SIP/2.0/UDP 192.0.2.8:5060;branch=z9hG4bKsecond\r\n");
  a.send(bytes);
  auto r = a.read();
  ASSERT_TRUE(r) << "the answer must go to the packet's source, not to the Via's address";
  const std::string via = r->header("Via");
  EXPECT_NE(via.find("received=127.0.0.1"), std::string::npos) << r->raw;
  EXPECT_NE(via.find("rport=" + std::to_string(a.local_port())), std::string::npos) << r->raw;
  auto second = r->raw.find("Via: SIP/2.0/UDP 192.0.2.8:5060;branch=z9hG4bKsecond");
  EXPECT_NE(second, std::string::npos) << "every Via is copied, in order\n" << r->raw;
  EXPECT_LT(r->raw.find("192.0.2.7"), second);
}

TEST_F(SipServerTest, MalformedRequestsGet400OrAreDropped) {
  start();
  SipTestPeer a(false, sip_port());
  auto valid = [&](std::string branch) {
    SipRequest r = call("+15550101", "+15557000001", std::move(branch)).as("OPTIONS");
    return r.bytes(a, sip_port());
  };
  auto without = [&](std::string bytes, std::string_view header) {
    auto at = bytes.find(std::string(header) + ":");
    bytes.erase(at, bytes.find("\r\n", at) + 2 - at);
    return bytes;
  };
  for (const char* header : {"Call-ID", "CSeq", "From", "To"}) {
    a.send(without(valid(std::string("no-") + header), header));
    auto r = a.read();
    ASSERT_TRUE(r) << "no answer without " << header;
    EXPECT_EQ(r->status, 400u) << r->raw;
  }
  std::string mismatch = valid("mismatch");
  mismatch.replace(mismatch.find("1 OPTIONS"), 9, "1 INVITE");
  a.send(mismatch);
  auto r = a.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400u) << "CSeq's method must be the request's";
  // Without a Via there is nowhere to answer; garbage is not SIP: both dropped.
  a.send(without(valid("no-via"), "Via"));
  a.send("\x16\x03\x01 hello, not SIP\r\n\r\n");
  a.send(std::string(3000, '\0'));
  a.send("INVITE sip:x@y SIP/2.0\r\nContent-Length: 99\r\n\r\nshort");
  EXPECT_FALSE(a.read(300ms));
  a.send(valid("still-alive"));
  auto alive = a.read();
  ASSERT_TRUE(alive) << "the SIP side stopped answering after malformed input";
  EXPECT_EQ(alive->status, 200u);
}

TEST_F(SipServerTest, HugeTcpMessageClosesTheConnection) {
  start();
  SipTestPeer a(true, sip_port());
  SipRequest r = call("+15550101", "+15557000001", "huge");
  r.extra = "X-Padding: " + std::string(70 * 1024, 'x') + "\r\n";
  a.send(r.bytes(a, sip_port()));
  EXPECT_TRUE(a.closed_within(2s)) << "a message over 64 KiB must close the stream";
  SipTestPeer b(true, sip_port());
  b.send("garbage that is not a start line\r\n\r\n");
  EXPECT_TRUE(b.closed_within(2s)) << "a stream whose framing is lost is closed";
  SipTestPeer c(true, sip_port());
  auto ok = invite(c, call("+15550201", "+15557000001", "after-huge"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200u);
}

TEST_F(SipServerTest, TcpPipelinedAndSplitMessagesAreFramed) {
  start();
  SipTestPeer a(true, sip_port());
  SipRequest o1 = call("+15550101", "+15557000001", "p1").as("OPTIONS");
  SipRequest o2 = call("+15550101", "+15557000001", "p2").as("OPTIONS");
  o1.body = "ignored body";
  const std::string both = "\r\n\r\n" + o1.bytes(a, sip_port()) + o2.bytes(a, sip_port());
  for (std::size_t i = 0; i < both.size(); i += 7) {  // in small pieces
    a.send(std::string_view(both).substr(i, 7));
    if (i % 140 == 0) std::this_thread::sleep_for(1ms);
  }
  auto r1 = a.read(), r2 = a.read();
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->header("Call-ID"), "call-p1");
  EXPECT_EQ(r2->header("Call-ID"), "call-p2");
}

// Fault modes act inside the state, so SIP calls see them as HTTP calls do.
TEST_F(SipServerTest, BindingRacyLetsTwoSipCallersWin) {
  reference::FaultSet faults;
  faults.add(reference::Fault::binding_racy);
  start(faults);
  const std::string number = tag_alias();
  SipTestPeer a(false, sip_port()), b(false, sip_port());
  a.send(call(number, "+15557000001", "race-a").bytes(a, sip_port()));
  b.send(call(number, "+15557000002", "race-b").bytes(b, sip_port()));
  auto ra = a.read_final(), rb = b.read_final();
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ(ra->status, 200u);
  EXPECT_EQ(rb->status, 200u) << "binding-racy: both callers pass the check";
}

// Two INVITEs in one TCP write are read in one loop turn: binding-racy-turn's
// gap (one turn) lets both pass the check; without the fault one wins.
TEST_F(SipServerTest, BindingRacyTurnLetsTwoPipelinedCallersWin) {
  for (bool faulty : {false, true}) {
    reference::FaultSet faults;
    if (faulty) faults.add(reference::Fault::binding_racy_turn);
    start(faults);
    const std::string number = tag_alias();
    SipTestPeer a(true, sip_port());
    a.send(call(number, "+15557000001", "turn-a").bytes(a, sip_port()) +
           call(number, "+15557000002", "turn-b").bytes(a, sip_port()));
    int won = 0;
    for (int finals = 0; finals < 2;) {
      auto r = a.read();
      ASSERT_TRUE(r) << "faulty: " << faulty;
      if (r->status == 100) continue;
      ++finals;
      won += r->status == 200;
    }
    EXPECT_EQ(won, faulty ? 2 : 1) << (faulty ? "binding-racy-turn" : "no fault");
    server_->stop();
  }
}

TEST_F(SipServerTest, BindingLastCallerHandsTheAliasOver) {
  reference::FaultSet faults;
  faults.add(reference::Fault::binding_last_caller);
  start(faults);
  const std::string number = tag_alias();
  SipTestPeer a(false, sip_port());
  auto ra = invite(a, call(number, "+15557000001", "last-a"));
  auto rb = invite(a, call(number, "+15557000002", "last-b"));
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ(rb->status, 200u);
  EXPECT_EQ(bound_caller(number), "+15557000002");
}

TEST_F(SipServerTest, WithoutFaultsARaceHasOneWinner) {
  start();
  const std::string number = tag_alias();
  std::vector<std::unique_ptr<SipTestPeer>> peers;
  for (int i = 0; i < 10; ++i) {
    peers.push_back(std::make_unique<SipTestPeer>(i % 2 == 1, sip_port()));
    peers.back()->send(call(number, "+155570001" + std::to_string(10 + i), "race" + std::to_string(i))
                           .bytes(*peers.back(), sip_port()));
  }
  int won = 0, refused = 0;
  for (auto& p : peers) {
    auto r = p->read_final();
    ASSERT_TRUE(r);
    won += r->status == 200;
    refused += r->status == 403;
  }
  EXPECT_EQ(won, 1);
  EXPECT_EQ(refused, 9);
  EXPECT_FALSE(bound_caller(number).empty());
}

}  // namespace
}  // namespace crh::test
