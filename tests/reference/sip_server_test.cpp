// The reference's SIP side over real UDP and TCP sockets: the binding rule
// through INVITEs, dialogs, CANCEL, OPTIONS, and the HTTP view agreeing.
#include <thread>

#include "sip_server_fixture.hpp"

namespace crh::test {
namespace {

class SipCalls : public SipServerTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override { start(); }
  bool tcp() const { return GetParam(); }
};

TEST_P(SipCalls, TaggedAliasTakesTheFirstCallerAndRefusesOthers) {
  const std::string number = tag_alias();
  SipTestPeer a(tcp(), sip_port()), b(tcp(), sip_port());
  auto first = call(number, "+15557000001", "a1");
  auto won = invite(a, first);
  ASSERT_TRUE(won);
  ASSERT_EQ(won->status, 200u) << won->raw;
  EXPECT_FALSE(won->to_tag().empty());
  EXPECT_NE(won->header("Contact").find("sip:" + number + "@127.0.0.1:" + std::to_string(sip_port())),
            std::string::npos)
      << won->raw;
  EXPECT_EQ(won->header("Content-Type"), "application/sdp");
  const std::string sdp = won->body();
  EXPECT_EQ(sdp.rfind("v=0\r\n", 0), 0u) << sdp;
  for (const char* line : {"\r\no=", "\r\ns=", "\r\nc=IN IP4 127.0.0.1", "\r\nt=0 0", "\r\nm=audio "})
    EXPECT_NE(sdp.find(line), std::string::npos) << line << " missing in " << sdp;
  EXPECT_NE(sdp.find("RTP/AVP 0"), std::string::npos);
  EXPECT_EQ(won->header("Call-ID"), "call-a1");
  EXPECT_EQ(won->header("CSeq"), "1 INVITE");
  EXPECT_NE(won->header("From").find("tag=ftag1"), std::string::npos);
  ack(a, first, *won);

  auto second = call(number, "+15557000002", "b1");
  auto refused = invite(b, second);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403u) << refused->raw;
  EXPECT_FALSE(refused->to_tag().empty());
  ack(b, second, *refused);
  EXPECT_EQ(bound_caller(number), "+15557000001");

  // The bound caller calls again and gets through; BYE ends its dialog once.
  auto again = invite(a, call(number, "+15557000001", "a2"));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200u);
  SipRequest bye = first.as("BYE");
  bye.branch = "a1-bye";
  bye.cseq = 2;
  bye.to_tag = won->to_tag();
  a.send(bye.bytes(a, sip_port()));
  auto ended = a.read_final();
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->status, 200u) << ended->raw;
  EXPECT_EQ(ended->header("CSeq"), "2 BYE");
  bye.branch = "a1-bye-again";
  bye.cseq = 3;
  a.send(bye.bytes(a, sip_port()));
  auto unknown = a.read_final();
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 481u) << "a BYE for an ended dialog";
}

TEST_P(SipCalls, FreeAliasTakesAnyCaller) {
  // Channel 2 is never tagged here: DESIGN.md §3, a free alias takes any caller.
  SipTestPeer a(tcp(), sip_port());
  for (const char* caller : {"+15557000011", "+15557000012"}) {
    auto r = invite(a, call("+15550201", caller, std::string("free") + caller));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200u) << caller << "\n" << r->raw;
  }
}

TEST_P(SipCalls, UnknownNumberIsNotFound) {
  SipTestPeer a(tcp(), sip_port());
  auto r = invite(a, call("+19999999999", "+15557000001", "unknown"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404u) << r->raw;
}

TEST_P(SipCalls, OptionsAnswers200WithAllow) {
  SipTestPeer a(tcp(), sip_port());
  SipRequest options = call("+15550101", "+15557000001", "opt").as("OPTIONS");
  a.send(options.bytes(a, sip_port()));
  auto r = a.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200u) << r->raw;
  for (const char* m : {"INVITE", "ACK", "CANCEL", "BYE", "OPTIONS"})
    EXPECT_NE(r->header("Allow").find(m), std::string::npos) << r->raw;
}

TEST_P(SipCalls, OtherMethodsAreRefusedWithAllow) {
  SipTestPeer a(tcp(), sip_port());
  for (auto [method, status] : {std::pair{"REGISTER", 405u}, std::pair{"FROBNICATE", 501u}}) {
    SipRequest r = call("+15550101", "+15557000001", std::string("m") + method).as(method);
    a.send(r.bytes(a, sip_port()));
    auto answer = a.read();
    ASSERT_TRUE(answer) << method;
    EXPECT_EQ(answer->status, status) << answer->raw;
    EXPECT_NE(answer->header("Allow").find("INVITE"), std::string::npos) << answer->raw;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, SipCalls, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Tcp" : "Udp"; });

TEST_F(SipServerTest, CancelEndsAPendingInviteWith487AndBindsNobody) {
  start({}, std::chrono::milliseconds(400));  // the final answer waits: CANCEL can come first
  const std::string number = tag_alias();
  SipTestPeer a(false, sip_port());
  SipRequest inv = call(number, "+15557000001", "c1");
  a.send(inv.bytes(a, sip_port()));
  auto trying = a.read();
  ASSERT_TRUE(trying);
  EXPECT_EQ(trying->status, 100u);
  SipRequest cancel = inv.as("CANCEL");
  a.send(cancel.bytes(a, sip_port()));
  std::optional<SipReply> ok, terminated;
  for (int i = 0; i < 2; ++i) {
    auto r = a.read();
    ASSERT_TRUE(r) << "expected the CANCEL's 200 and the INVITE's 487";
    (r->header("CSeq") == "1 CANCEL" ? ok : terminated) = r;
  }
  ASSERT_TRUE(ok && terminated);
  EXPECT_EQ(ok->status, 200u) << ok->raw;
  EXPECT_EQ(terminated->status, 487u) << terminated->raw;
  EXPECT_EQ(terminated->header("CSeq"), "1 INVITE");
  EXPECT_EQ(ok->to_tag(), terminated->to_tag()) << "§9.2: the CANCEL's 200 carries the INVITE's To tag";
  ack(a, inv, *terminated);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // past the delay: no late 200
  auto late = a.read(std::chrono::milliseconds(100));
  EXPECT_FALSE(late) << "nothing after the 487 was ACKed, got " << late->raw;
  EXPECT_EQ(bound_caller(number), "") << "a cancelled call binds nobody";

  // A CANCEL after the final answer: 200 to the CANCEL, nothing else; unknown: 481.
  SipTestPeer b(false, sip_port());
  SipRequest done = call(number, "+15557000002", "c2");
  auto final = invite(b, done);
  ASSERT_TRUE(final);
  EXPECT_EQ(final->status, 200u);
  SipRequest late_cancel = done.as("CANCEL");
  b.send(late_cancel.bytes(b, sip_port()));
  auto answer = read_for(b, "1 CANCEL");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200u) << answer->raw;
  ack(b, done, *final);
  while (auto more = b.read(std::chrono::milliseconds(200)))  // a 200 retransmitted before the ACK, no 487
    EXPECT_EQ(more->status, 200u) << "a CANCEL after the final answer changes nothing\n" << more->raw;
  SipRequest stray = call(number, "+15557000002", "never-sent").as("CANCEL");
  b.send(stray.bytes(b, sip_port()));
  auto none = read_for(b, "1 CANCEL");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 481u) << none->raw;
}

TEST_F(SipServerTest, PAssertedIdentityNamesTheCaller) {
  start();
  const std::string number = tag_alias();
  SipTestPeer a(false, sip_port());
  SipRequest inv = call(number, "+15557000099", "pai");
  inv.extra = "P-Asserted-Identity: \"Asserted\" <sip:+15557000042@127.0.0.1>\r\n";
  auto r = invite(a, inv);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200u);
  EXPECT_EQ(bound_caller(number), "+15557000042");
}

TEST_F(SipServerTest, NumberWithUserParametersIsFound) {
  start();
  SipTestPeer a(false, sip_port());
  std::string bytes = call("+15550102", "+15557000001", "params").bytes(a, sip_port());
  bytes.replace(bytes.find("sip:+15550102@"), 14, "sip:+15550102;npdi@");
  bytes.insert(bytes.find(" SIP/2.0\r\n"), ";user=phone");
  a.send(bytes);
  auto r = a.read_final();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200u) << r->raw;
}

TEST_F(SipServerTest, IPv6Literal) {
  try {
    start({}, {}, "[::1]:0");
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  SipTestPeer a(false, sip_port(), "::1");
  SipRequest options = call("+15550101", "+15557000001", "v6").as("OPTIONS");
  a.send(options.bytes(a, sip_port()));
  auto r = a.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200u) << r->raw;
  EXPECT_NE(r->header("Via").find("received=::1"), std::string::npos) << r->raw;
}

}  // namespace
}  // namespace crh::test
