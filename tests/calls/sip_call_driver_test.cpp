// The SIP call driver against a scripted SIP peer: what each final answer
// means, ACK/BYE per RFC 3261, digest authentication, retransmission over
// UDP, TCP, many calls at once, and the driver's own parsing and outcomes.
#include <gtest/gtest.h>

#include <boost/uuid/detail/md5.hpp>

#include <cstdlib>
#include <set>
#include <thread>

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

// A peer answering every INVITE with `status` (after a 100), and ACK/BYE/CANCEL as a UAS does.
ScriptedSipPeer::Script answering(unsigned status, std::string reason, std::vector<sip::Header> extra = {}) {
  return [=](const ScriptedSipPeer& peer, const sip::Message& m, int) -> std::vector<Reply> {
    if (m.method != "INVITE") return peer.standard(m);
    return {{peer.answer(m, 100, "Trying")}, {peer.answer(m, status, reason, extra)}};
  };
}

std::string branch_of(const sip::Message& m) { return sip::param_of(m.all("Via").front(), "branch").value_or(""); }

}  // namespace

TEST(SipCallDriver, OkIsConnectedThenAckAndBye) {
  ScriptedSipPeer peer(false, answering(200, "OK"));
  SipCallDriver driver(driver_config_for(peer));
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::connected) << r.evidence;
  EXPECT_EQ(r.status, 200u);
  EXPECT_FALSE(r.failure);
  EXPECT_NE(r.evidence.find("SIP 200 OK (after 100) to sip:+15550001@127.0.0.1:"), std::string::npos) << r.evidence;
  ASSERT_TRUE(peer.wait_for("BYE", 1, 2s));
  ASSERT_TRUE(peer.wait_for("ACK", 1, 2s));
  auto invite = peer.received("INVITE").at(0);
  auto ack = peer.received("ACK").at(0);
  auto bye = peer.received("BYE").at(0);
  EXPECT_EQ(sip::user_of(sip::uri_of(*invite.find("From"))), "+15551234");
  EXPECT_EQ(*invite.find("Max-Forwards"), "70");
  EXPECT_EQ(invite.find("Via")->find(";rport") != std::string::npos, true);
  EXPECT_EQ(branch_of(invite).rfind("z9hG4bK", 0), 0u);
  EXPECT_EQ(*invite.find("Content-Type"), "application/sdp");
  EXPECT_EQ(invite.body.rfind("v=0", 0), 0u);
  EXPECT_NE(branch_of(ack), branch_of(invite));  // a 2xx's ACK is a transaction of its own
  EXPECT_EQ(ack.uri, "sip:peer@127.0.0.1:" + std::to_string(peer.port()));  // the Contact
  EXPECT_EQ(sip::param_of(*ack.find("To"), "tag"), "peer-tag");
  EXPECT_EQ(*ack.find("CSeq"), "1 ACK");
  EXPECT_EQ(*bye.find("CSeq"), "2 BYE");
  EXPECT_EQ(*bye.find("Call-ID"), *invite.find("Call-ID"));
}

TEST(SipCallDriver, RecordRouteBecomesTheRouteSetReversed) {
  ScriptedSipPeer peer(false, answering(200, "OK", {{"Record-Route", "<sip:proxy2.test;lr>, <sip:proxy1.test;lr>"}}));
  SipCallDriver driver(driver_config_for(peer));
  EXPECT_EQ(driver.place("1", "+15551234").outcome, CallOutcome::connected);
  ASSERT_TRUE(peer.wait_for("BYE", 1, 2s));
  for (const auto& request : {peer.received("ACK").at(0), peer.received("BYE").at(0)}) {
    auto routes = request.all("Route");
    ASSERT_EQ(routes.size(), 2u) << request.method;
    EXPECT_EQ(routes[0], "<sip:proxy1.test;lr>");  // §12.1.2: the UAC reverses the Record-Route
    EXPECT_EQ(routes[1], "<sip:proxy2.test;lr>");
    EXPECT_EQ(request.uri, "sip:peer@127.0.0.1:" + std::to_string(peer.port()));  // loose routing
  }
}

TEST(SipCallDriver, ForbiddenIsRefusedAckedInItsTransactionNoBye) {
  ScriptedSipPeer peer(false, answering(403, "Forbidden"));
  SipCallDriver driver(driver_config_for(peer));
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::refused) << r.evidence;
  EXPECT_EQ(r.evidence.rfind("SIP 403 Forbidden (after 100) to sip:+15550001@127.0.0.1:", 0), 0u) << r.evidence;
  EXPECT_NE(r.evidence.find("from +15551234; 1 INVITE sent"), std::string::npos) << r.evidence;
  ASSERT_TRUE(peer.wait_for("ACK", 1, 2s));
  auto invite = peer.received("INVITE").at(0);
  auto ack = peer.received("ACK").at(0);
  EXPECT_EQ(branch_of(ack), branch_of(invite));
  EXPECT_EQ(ack.uri, invite.uri);
  EXPECT_EQ(sip::param_of(*ack.find("To"), "tag"), "peer-tag");
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(peer.received("BYE").empty());
}

// A "not now" that may have bound on the way: the 503 speaks for the whole path.
TEST(SipCallDriver, ServiceUnavailableWithRetryAfterIsANotNowThatMayHaveBound) {
  ScriptedSipPeer peer(false, answering(503, "Service Unavailable", {{"Retry-After", "5"}}));
  SipCallDriver driver(driver_config_for(peer));
  auto r = driver.place("1", "+15551234");
  EXPECT_TRUE(r.not_now) << r.evidence;
  EXPECT_EQ(r.outcome, CallOutcome::unknown) << r.evidence;
  EXPECT_FALSE(r.failure);
  EXPECT_EQ(driver.outcome_of(503), CallOutcome::unknown);
}

TEST(SipCallDriver, ServerErrorsAndUnroutableNumbersAreFailures) {
  for (auto [status, reason, says] : {std::tuple{500u, "Server Internal Error", "a server error is never a contract answer"},
                                      {503u, "Service Unavailable", "a server error"},
                                      {404u, "Not Found", "the alias's number +15550001 is not routable"},
                                      {484u, "Address Incomplete", "not routable, yet the alias is tagged"}}) {
    ScriptedSipPeer peer(false, answering(status, reason));
    SipCallDriver driver(driver_config_for(peer));
    auto r = driver.place("1", "+15551234");
    EXPECT_EQ(r.outcome, CallOutcome::unknown) << r.evidence;
    EXPECT_TRUE(r.failure) << status;
    EXPECT_NE(r.evidence.find(says), std::string::npos) << r.evidence;
    EXPECT_TRUE(peer.wait_for("ACK", 1, 2s));
  }
}

TEST(SipCallDriver, AnswersThatSayNothingOfTheBindingAreUnknownWithTheReason) {
  for (auto [status, reason] : {std::pair{486u, "Busy Here"}, {480u, "Temporarily Unavailable"},
                                {487u, "Request Terminated"}, {302u, "Moved Temporarily"}, {603u, "Decline"}}) {
    std::vector<sip::Header> extra;
    if (status == 302) extra.push_back({"Contact", "<sip:elsewhere@192.0.2.1>"});
    ScriptedSipPeer peer(false, answering(status, reason, extra));
    SipCallDriver driver(driver_config_for(peer));
    auto r = driver.place("1", "+15551234");
    EXPECT_EQ(r.outcome, CallOutcome::unknown) << r.evidence;
    EXPECT_FALSE(r.failure) << status;
    EXPECT_NE(r.evidence.find(std::to_string(status) + " " + reason), std::string::npos) << r.evidence;
    if (status == 302) {
      EXPECT_NE(r.evidence.find("redirect to sip:elsewhere@192.0.2.1"), std::string::npos) << r.evidence;
    }
  }
}

TEST(SipCallDriver, RefusalsComeFromTheProfile) {
  ScriptedSipPeer peer(false, answering(486, "Busy Here"));
  auto config = driver_config_for(peer);
  config.refusals = {403, 486};
  SipCallDriver driver(config);
  EXPECT_EQ(driver.place("1", "+1").outcome, CallOutcome::refused);
  EXPECT_EQ(driver.outcome_of(486), CallOutcome::refused);
  EXPECT_EQ(driver.outcome_of(403), CallOutcome::refused);
  EXPECT_EQ(driver.outcome_of(200), CallOutcome::connected);
  EXPECT_EQ(driver.outcome_of(0), CallOutcome::unknown);
  EXPECT_EQ(driver.operation(), "sip-call");
  EXPECT_FALSE(driver.has_wire());
  EXPECT_THROW(driver.wire("1", "+1"), std::logic_error);
  EXPECT_EQ(driver.describe(), "SIP INVITE sip:{number}@127.0.0.1:" + std::to_string(peer.port()) + " (udp)");
}

namespace {

std::string own_md5(const std::string& s) {  // the test's own digest arithmetic
  boost::uuids::detail::md5 h;
  h.process_bytes(s.data(), s.size());
  boost::uuids::detail::md5::digest_type d;
  h.get_digest(d);
  const auto* b = reinterpret_cast<const unsigned char*>(d);
  char out[33];
  for (int i = 0; i < 16; ++i) std::snprintf(out + 2 * i, 3, "%02x", b[i]);
  return out;
}

std::string auth_param(const std::string& header, const std::string& name) {
  auto at = header.find(name + "=");
  if (at == std::string::npos) return {};
  at += name.size() + 1;
  if (header[at] == '"') return header.substr(at + 1, header.find('"', at + 1) - at - 1);
  return header.substr(at, header.find_first_of(", ", at) - at);
}

// 401 with a challenge, then 200 only when the digest is right (403 otherwise).
ScriptedSipPeer::Script challenging(unsigned status) {
  return [status](const ScriptedSipPeer& peer, const sip::Message& m, int nth) -> std::vector<Reply> {
    if (m.method != "INVITE") return peer.standard(m);
    const char* ask = status == 401 ? "WWW-Authenticate" : "Proxy-Authenticate";
    if (nth == 1) return {{peer.answer(m, status, "Unauthorized", {{ask, "Digest realm=\"crh.test\", nonce=\"n0nce\", qop=\"auth,auth-int\", algorithm=MD5, opaque=\"op\""}})}};
    const std::string* auth = m.find(status == 401 ? "Authorization" : "Proxy-Authorization");
    if (!auth) return {{peer.answer(m, 403, "No Credentials")}};
    std::string ha1 = own_md5("alice:crh.test:s3cret-pw"), ha2 = own_md5("INVITE:" + auth_param(*auth, "uri"));
    std::string expected = own_md5(ha1 + ":n0nce:" + auth_param(*auth, "nc") + ":" + auth_param(*auth, "cnonce") + ":auth:" + ha2);
    bool right = auth_param(*auth, "response") == expected && auth_param(*auth, "uri") == m.uri &&
                 auth_param(*auth, "nc") == "00000001" && auth_param(*auth, "opaque") == "op" &&
                 auth_param(*auth, "username") == "alice";
    return {{peer.answer(m, right ? 200 : 403, right ? "OK" : "Bad Digest")}};
  };
}

}  // namespace

TEST(SipCallDriver, DigestChallengeIsAnsweredOnceWithCredentialsFromTheEnvironment) {
  setenv("CRH_SIP_USER", "alice", 1);
  setenv("CRH_SIP_PASSWORD", "s3cret-pw", 1);
  for (unsigned status : {401u, 407u}) {
    ScriptedSipPeer peer(false, challenging(status));
    auto config = driver_config_for(peer);
    config.credentials = crh::calls::sip_credentials_from_env();
    ASSERT_TRUE(config.credentials);
    std::vector<SipCallRecord> records;
    std::mutex m;
    config.observe = [&](const SipCallRecord& r) { std::lock_guard g(m); records.push_back(r); };
    SipCallDriver driver(config);
    auto r = driver.place("1", "+15551234");
    EXPECT_EQ(r.outcome, CallOutcome::connected) << r.evidence;
    EXPECT_EQ(r.evidence.find("s3cret-pw"), std::string::npos);
    auto invites = peer.received("INVITE");
    ASSERT_EQ(invites.size(), 2u);
    EXPECT_EQ(*invites[1].find("CSeq"), "2 INVITE");
    EXPECT_NE(branch_of(invites[0]), branch_of(invites[1]));
    EXPECT_TRUE(peer.wait_for("ACK", 2, 2s));  // the 401's ACK and the 200's
    EXPECT_EQ(*peer.received("ACK").at(0).find("CSeq"), "1 ACK");
    ASSERT_TRUE(peer.wait_for("BYE", 1, 2s));
    EXPECT_EQ(*peer.received("BYE").at(0).find("CSeq"), "3 BYE");
    for (auto& msg : peer.received()) EXPECT_EQ(sip::serialize(msg).find("s3cret-pw"), std::string::npos);
    std::lock_guard g(m);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].invites_sent, 2);
  }
  unsetenv("CRH_SIP_USER");
  unsetenv("CRH_SIP_PASSWORD");
}

TEST(SipCallDriver, DigestChallengeWithoutCredentialsIsUnknown) {
  unsetenv("CRH_SIP_USER");
  ScriptedSipPeer peer(false, challenging(401));
  auto config = driver_config_for(peer);
  config.credentials = crh::calls::sip_credentials_from_env();
  SipCallDriver driver(config);
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::unknown);
  EXPECT_NE(r.evidence.find("authentication asked (401) and no CRH_SIP_USER/CRH_SIP_PASSWORD"), std::string::npos)
      << r.evidence;
  EXPECT_EQ(peer.received("INVITE").size(), 1u);
}

TEST(SipCallDriver, LostInvitesAreRetransmittedWithTimerA) {
  ScriptedSipPeer peer(false, [](const ScriptedSipPeer& peer, const sip::Message& m, int nth) -> std::vector<Reply> {
    if (m.method != "INVITE") return peer.standard(m);
    if (nth <= 2) return {};  // lost on the way
    return {{peer.answer(m, 200, "OK")}};
  });
  auto config = driver_config_for(peer);
  std::vector<SipCallRecord> records;
  config.observe = [&](const SipCallRecord& r) { records.push_back(r); };
  SipCallDriver driver(config);
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::connected) << r.evidence;
  EXPECT_NE(r.evidence.find("3 INVITEs sent"), std::string::npos) << r.evidence;
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].invites_sent, 3);
  auto invites = peer.received("INVITE");
  ASSERT_EQ(invites.size(), 3u);
  EXPECT_EQ(sip::serialize(invites[0]), sip::serialize(invites[2]));  // the same request, byte for byte
}

TEST(SipCallDriver, TcpCallsConnectAndReconnectAfterADrop) {
  ScriptedSipPeer peer(true, answering(200, "OK"));
  SipCallDriver driver(driver_config_for(peer));
  EXPECT_EQ(driver.describe().substr(driver.describe().size() - 5), "(tcp)");
  auto r = driver.place("1", "+15551234");
  EXPECT_EQ(r.outcome, CallOutcome::connected) << r.evidence;
  ASSERT_TRUE(peer.wait_for("BYE", 1, 2s));
  EXPECT_NE(peer.received("INVITE").at(0).find("Via")->find("SIP/2.0/TCP"), std::string::npos);
  peer.drop_connections();
  std::this_thread::sleep_for(100ms);
  auto again = driver.place("2", "+15551235");
  EXPECT_EQ(again.outcome, CallOutcome::connected) << again.evidence;
}

// Twenty calls to one alias, fired one by one or by the driver at once
// (fire_together: one sendmmsg over UDP, one write over TCP): every call gets
// its result, the peer's first-answered INVITE wins, each INVITE went once.
namespace {
void twenty_calls_race(bool tcp, bool together) {
  const std::string where = std::string(tcp ? "tcp" : "udp") + (together ? ", fired together" : ", one by one");
  ScriptedSipPeer peer(tcp, [](const ScriptedSipPeer& peer, const sip::Message& m, int nth) -> std::vector<Reply> {
    if (m.method != "INVITE") return peer.standard(m);
    return {{peer.answer(m, 100, "Trying")}, {peer.answer(m, nth == 1 ? 200 : 403, nth == 1 ? "OK" : "Forbidden")}};
  });
  SipCallDriver driver(driver_config_for(peer));
  std::vector<std::unique_ptr<crh::calls::ArmedCall>> calls;
  std::vector<crh::calls::ArmedCall*> pointers;
  for (int i = 0; i < 20; ++i) {
    calls.push_back(driver.arm("7", "+1555100" + std::to_string(i)));
    ASSERT_TRUE(calls.back()->ready()) << where;
    pointers.push_back(calls.back().get());
  }
  std::atomic<int> done{0};
  if (together) {
    EXPECT_EQ(driver.fire_together(pointers), tcp ? "one write of every INVITE (TCP)" : "sendmmsg (UDP)");
    calls.front()->fire();  // fired already: nothing more is sent
  } else {
    for (auto& c : calls) c->fire();
  }
  for (auto& c : calls) c->when_done([&] { ++done; });
  int connected = 0, refused = 0;
  for (auto& c : calls) {
    auto r = c->result();
    connected += r.outcome == CallOutcome::connected;
    refused += r.outcome == CallOutcome::refused;
  }
  EXPECT_EQ(connected, 1) << where;
  EXPECT_EQ(refused, 19) << where;
  std::set<std::string> call_ids;
  for (const auto& m : peer.received("INVITE")) call_ids.insert(std::string(*m.find("Call-ID")));
  EXPECT_EQ(peer.received("INVITE").size(), 20u) << where;
  EXPECT_EQ(call_ids.size(), 20u) << where;
  // done() runs once result() no longer blocks: a moment after, on the agent's thread.
  for (int i = 0; i < 200 && done.load() < 20; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(done.load(), 20) << where;
}
}  // namespace

TEST(SipCallDriver, ManyCallsFiredTogetherAllGetTheirResults) {
  for (bool tcp : {false, true})
    for (bool together : {false, true}) twenty_calls_race(tcp, together);
}

TEST(SipCallDriver, ThreadsArmAndFireAtOnce) {
  ScriptedSipPeer peer(false, answering(200, "OK"));
  SipCallDriver driver(driver_config_for(peer));
  std::atomic<int> connected{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      for (int i = 0; i < 10; ++i) {
        auto call = driver.arm(std::to_string(w), "+1555" + std::to_string(w * 100 + i));
        call->fire();
        connected += call->result().outcome == CallOutcome::connected;
      }
    });
  for (auto& t : workers) t.join();
  EXPECT_EQ(connected.load(), 40);
  EXPECT_TRUE(peer.wait_for("BYE", 40, 3s));
}

TEST(SipCallDriver, ArmingWithoutANumberOrAPeer) {
  ScriptedSipPeer peer(false, answering(200, "OK"));
  SipCallDriver driver(driver_config_for(peer));
  auto call = driver.arm("unknown", "+1");
  EXPECT_FALSE(call->ready());
  call->fire();
  auto r = call->result();
  EXPECT_EQ(r.outcome, CallOutcome::unknown);
  EXPECT_EQ(r.evidence, "no number for alias unknown");
  bool called = false;
  call->when_done([&] { called = true; });
  EXPECT_TRUE(called);
  EXPECT_TRUE(peer.received().empty());
}

TEST(SipCallDriver, IPv6Loopback) {
  for (bool tcp : {false, true}) {
    std::unique_ptr<ScriptedSipPeer> peer;
    try {
      peer = std::make_unique<ScriptedSipPeer>(tcp, answering(200, "OK"), "::1");
    } catch (const std::exception& e) {
      GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
    }
    SipCallDriver driver(driver_config_for(*peer));
    auto r = driver.place("1", "+15551234");
    EXPECT_EQ(r.outcome, CallOutcome::connected) << r.evidence;
    EXPECT_NE(r.evidence.find("@[::1]:"), std::string::npos) << r.evidence;
    EXPECT_NE(peer->received("INVITE").at(0).body.find("IN IP6 ::1"), std::string::npos);
    EXPECT_TRUE(peer->wait_for("BYE", 1, 2s));
  }
}

