// The SIP call driver against hostile or broken peers: no final answer, a
// final answer twice, answers from another address, malformed and huge
// answers, a flood; and settle() leaving the target as found.
#include <gtest/gtest.h>

#include <set>

#include "calls/sip_call_driver.hpp"
#include "support/scripted_sip_peer.hpp"

namespace {

using crh::core::CallOutcome;
using crh::calls::SipCallDriver;
using crh::calls::SipCallRecord;
using crh::calls::SipDriverConfig;
using crh::test::driver_config_for;
using crh::test::ScriptedSipPeer;
using Reply = ScriptedSipPeer::Reply;
namespace sip = crh::calls::sip;
using namespace std::chrono_literals;

using InviteAnswers = std::function<std::vector<Reply>(const ScriptedSipPeer&, const sip::Message&, int)>;
ScriptedSipPeer::Script on_invite(InviteAnswers answers) {
  return [answers](const ScriptedSipPeer& peer, const sip::Message& m, int nth) -> std::vector<Reply> {
    if (m.method != "INVITE") return peer.standard(m);
    return answers(peer, m, nth);
  };
}

}  // namespace

TEST(SipCallDriverHostile, ProvisionalAndNeverAFinalIsUnknownThenCancelled) {
  ScriptedSipPeer peer(false, [](const ScriptedSipPeer& peer, const sip::Message& m, int) -> std::vector<Reply> {
    if (m.method == "INVITE") return {{peer.answer(m, 100, "Trying")}};
    if (m.method == "CANCEL") return {{peer.answer(m, 200, "OK")}};  // and still no final answer
    return {};
  });
  SipCallDriver driver(driver_config_for(peer, 300ms));
  auto start = std::chrono::steady_clock::now();
  auto r = driver.place("1", "+15551234");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
  EXPECT_EQ(r.outcome, CallOutcome::unknown);
  EXPECT_EQ(r.status, 0u);
  EXPECT_EQ(r.evidence.rfind("no final answer within 0.3s (Timer B) (after 100)", 0), 0u) << r.evidence;
  ASSERT_TRUE(peer.wait_for("CANCEL", 1, 2s));
  auto invite = peer.received("INVITE").at(0);
  auto cancel = peer.received("CANCEL").at(0);
  EXPECT_EQ(*cancel.find("CSeq"), "1 CANCEL");
  EXPECT_EQ(sip::param_of(cancel.all("Via").front(), "branch"), sip::param_of(invite.all("Via").front(), "branch"));
  EXPECT_EQ(peer.received("INVITE").size(), 1u);  // a provisional stops Timer A
}

TEST(SipCallDriverHostile, SilenceRetransmitsThenTimesOutWithoutCancel) {
  ScriptedSipPeer peer(false, on_invite([](auto&, auto&, int) { return std::vector<Reply>{}; }));
  SipCallDriver driver(driver_config_for(peer, 400ms));
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::unknown);
  EXPECT_NE(r.evidence.find("Timer B"), std::string::npos);
  EXPECT_GE(peer.received("INVITE").size(), 3u);  // 0, 50, 150, 350 ms
  EXPECT_TRUE(peer.received("CANCEL").empty());  // §9.1: no CANCEL before a provisional
}

TEST(SipCallDriverHostile, FinalAnswerTwiceIsCountedOnceAndAckedAgain) {
  ScriptedSipPeer peer(false, on_invite([](const ScriptedSipPeer& p, const sip::Message& m, int) {
    return std::vector<Reply>{{p.answer(m, 403, "Forbidden")}, {p.answer(m, 403, "Forbidden"), 30ms}};
  }));
  auto config = driver_config_for(peer, 2000ms);
  std::atomic<int> observed{0};
  config.observe = [&](const SipCallRecord&) { ++observed; };
  SipCallDriver driver(config);
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::refused);
  ASSERT_TRUE(peer.wait_for("ACK", 2, 2s));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(observed.load(), 1);
  EXPECT_TRUE(peer.received("BYE").empty());
}

TEST(SipCallDriverHostile, OkTwiceIsAckedTwiceAndByedOnce) {
  ScriptedSipPeer peer(false, on_invite([](const ScriptedSipPeer& p, const sip::Message& m, int) {
    return std::vector<Reply>{{p.answer(m, 200, "OK")}, {p.answer(m, 200, "OK"), 30ms}};
  }));
  SipCallDriver driver(driver_config_for(peer, 2000ms));
  EXPECT_EQ(driver.place("1", "+15551234").outcome, CallOutcome::connected);
  ASSERT_TRUE(peer.wait_for("ACK", 2, 2s));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(peer.received("BYE").size(), 1u);
}

TEST(SipCallDriverHostile, AnAnswerFromAnotherAddressDecidesNothing) {
  ScriptedSipPeer peer(false, on_invite([](const ScriptedSipPeer& p, const sip::Message& m, int) {
    Reply forged{p.answer(m, 200, "OK")};
    forged.from_other_address = true;
    return std::vector<Reply>{forged, {p.answer(m, 403, "Forbidden"), 100ms}};
  }));
  SipCallDriver driver(driver_config_for(peer, 2000ms));
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::refused) << r.evidence;
  EXPECT_NE(r.evidence.find(" answer(s) from another address (127.0.0.1:"), std::string::npos) << r.evidence;
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(peer.received("BYE").empty());
}

TEST(SipCallDriverHostile, MalformedAndHugeAnswersAreIgnored) {
  ScriptedSipPeer peer(false, on_invite([](const ScriptedSipPeer& p, const sip::Message& m, int) {
    std::string ok = p.answer(m, 200, "OK");
    std::string huge = p.answer(m, 200, "OK", {{"X-Padding", std::string(60000, 'x')}});
    return std::vector<Reply>{{"SIP/2.0 2OO OK\r\n\r\n"},
                              {"\x01\x02garbage"},
                              {ok.substr(0, ok.find("Via:"))},  // a start line and nothing else
                              {"SIP/2.0 200 OK\r\nContent-Length: 99\r\n\r\nshort"},
                              {huge},
                              {p.answer(m, 403, "Forbidden"), 50ms}};
  }));
  SipCallDriver driver(driver_config_for(peer, 2000ms));
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::refused) << r.evidence;
}

TEST(SipCallDriverHostile, AFloodOfRetransmittedAnswersDoesNotHang) {
  ScriptedSipPeer peer(false, on_invite([](const ScriptedSipPeer& p, const sip::Message& m, int) {
    std::vector<Reply> flood;
    for (int i = 0; i < 2000; ++i) flood.push_back({p.answer(m, i % 2 ? 180 : 200, "OK")});
    return flood;
  }));
  SipCallDriver driver(driver_config_for(peer, 2000ms));
  auto start = std::chrono::steady_clock::now();
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::connected);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  ASSERT_TRUE(peer.wait_for("BYE", 1, 3s));
  std::this_thread::sleep_for(200ms);
  EXPECT_LE(peer.received("ACK").size(), 10u);  // re-ACKs are bounded
  std::set<std::string> byes;  // one BYE transaction, whatever its retransmissions
  for (auto& bye : peer.received("BYE")) byes.insert(sip::param_of(bye.all("Via").front(), "branch").value_or(""));
  EXPECT_EQ(byes.size(), 1u);
}

TEST(SipCallDriverHostile, TcpStreamGarbageEndsTheCallNotTheDriver) {
  ScriptedSipPeer peer(true, on_invite([](const ScriptedSipPeer& p, const sip::Message& m, int nth) {
    if (nth == 1) return std::vector<Reply>{{"SIP/2.0 200 OK\r\nno content length\r\n\r\n"}};
    return std::vector<Reply>{{p.answer(m, 200, "OK")}};
  }));
  SipCallDriver driver(driver_config_for(peer, 2000ms));
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::unknown);
  EXPECT_NE(r.evidence.find("TCP"), std::string::npos) << r.evidence;
  auto again = driver.place("2", "+15551235");  // a new connection
  EXPECT_EQ(again.outcome, CallOutcome::connected) << again.evidence;
}

TEST(SipCallDriverHostile, SettleCancelsPendingCallsAndByesALate200) {
  ScriptedSipPeer peer(false, [](const ScriptedSipPeer& p, const sip::Message& m, int) -> std::vector<Reply> {
    bool ringing = sip::user_of(m.uri) == "+15550001";
    if (m.method == "CANCEL" && !ringing) return {{p.answer(m, 200, "OK")}};  // too late: the 200 is on its way
    if (m.method != "INVITE") return p.standard(m);
    if (ringing) return {{p.answer(m, 180, "Ringing")}};
    return {{p.answer(m, 100, "Trying")}, {p.answer(m, 200, "OK"), 500ms}};  // long after Timer B
  });
  auto config = driver_config_for(peer, 250ms);
  SipCallDriver late_driver(config);
  auto late = late_driver.arm("2", "+15552222");
  late->fire();
  auto late_result = late->result();
  EXPECT_EQ(late_result.outcome, CallOutcome::unknown) << late_result.evidence;
  config.timeout = 3000ms;
  SipCallDriver driver(config);
  auto pending = driver.arm("1", "+15551111");
  pending->fire();
  ASSERT_TRUE(peer.wait_for("INVITE", 2, 2s));
  std::this_thread::sleep_for(100ms);  // the 180 has come
  auto start = std::chrono::steady_clock::now();
  driver.settle();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  auto r = pending->result();
  EXPECT_EQ(r.outcome, CallOutcome::unknown);
  EXPECT_EQ(r.status, 487u) << r.evidence;
  int cancels_of_pending = 0;
  for (auto& c : peer.received("CANCEL")) cancels_of_pending += sip::user_of(c.uri) == "+15550001";
  EXPECT_EQ(cancels_of_pending, 1);
  late_driver.settle();  // the late 200 is ACKed and BYEd
  ASSERT_TRUE(peer.wait_for("BYE", 1, 2s));
  EXPECT_EQ(sip::user_of(sip::uri_of(*peer.received("BYE")[0].find("From"))), "+15552222");
  EXPECT_GE(peer.received("ACK").size(), 2u);  // the 487's and the late 200's
}
