// Tests of the pcap check's SIP side (issue 26): calls by Call-ID with their
// callers, numbers, final answers and retransmissions; per number the
// callers that connected; two winners in one tag epoch flagged when the
// capture's HTTP side shows the epochs, winners listed unjudged otherwise;
// and a capture file read end to end.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "capture/pcap_check.hpp"
#include "results/keys_capture.hpp"
#include "pcap_builder.hpp"
#include "sip_frames.hpp"

namespace crh::capture {
namespace {

using testing::SipCall;
constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kStart = 1'700'000'000'000'000'000;

// Builds SIP messages and HTTP exchanges with increasing frames and times.
struct Wire {
  std::uint64_t frame = 1;
  std::int64_t now = kStart;

  WireSipMessage sip(const std::string& text, bool from_caller) {
    WireSipMessage m;
    auto parsed = calls::sip::parse_datagram(text);
    m.message = std::move(parsed.message);
    m.error = parsed.error;
    m.source = from_caller ? WireEndpoint{"127.0.0.1", 40000} : WireEndpoint{"127.0.0.1", 5060};
    m.destination = from_caller ? WireEndpoint{"127.0.0.1", 5060} : WireEndpoint{"127.0.0.1", 40000};
    m.at = {now, frame++};
    now += kMs;
    return m;
  }

  WireExchange http(std::string method, std::string target, unsigned status, std::string body,
                    std::string request_body = "") {
    WireExchange e;
    e.request.method = std::move(method);
    e.request.target = std::move(target);
    e.request.headers.push_back({"Apikey", "a-key-0123456789abcdef"});
    if (!request_body.empty()) e.request.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
    e.request.body = std::move(request_body);
    e.request_first = {now, frame};
    e.request_last = {now + 10, frame + 1};
    core::HttpResponse r;
    r.status = status;
    r.headers.push_back({"Content-Type", "application/json"});
    r.body = std::move(body);
    e.response = std::move(r);
    e.response_first = {now + kMs - 10, frame + 2};
    e.response_last = {now + kMs, frame + 3};
    frame += 4;
    now += 2 * kMs;
    return e;
  }
};

SipCall call(const std::string& caller, const std::string& id) {
  SipCall c;
  c.caller = caller;
  c.call_id = id;
  c.branch = "z9hG4bK-" + id;
  return c;
}

// A race on +15559999 (alias 3): every caller's INVITE, then the answers.
CheckReport race(const std::vector<std::pair<std::string, unsigned>>& callers, bool with_tag) {
  ContractJudge judge({});
  Wire w;
  if (with_tag)
    judge.add(w.http("POST", "/channels/1/alias-numbers/tag", 200,
                     R"({"id":"3","number":"+15559999","tag":"t"})", "tag=t&minutes=5"));
  std::vector<SipCall> calls;
  for (const auto& [caller, status] : callers) {
    calls.push_back(call(caller, "c-" + caller));
    judge.add_sip(w.sip(testing::sip_invite(calls.back()), true));
  }
  for (std::size_t i = 0; i < calls.size(); ++i) {
    judge.add_sip(w.sip(testing::sip_answer(calls[i], 100), false));
    judge.add_sip(w.sip(testing::sip_answer(calls[i], callers[i].second), false));
  }
  if (with_tag) judge.add(w.http("DELETE", "/channels/1/alias-numbers/3/tag", 200, R"({"id":"3","tag":null})"));
  ReadSummary s;
  s.first_ns = kStart;
  return judge.finish(s);
}

const JudgedCheck& binding(const CheckReport& r) {
  for (const auto& c : r.checks)
    if (c.id == "capture.binding") return c;
  static JudgedCheck none;
  ADD_FAILURE() << "no binding check";
  return none;
}

TEST(SipCheck, OneWinnerPerEpochPassesAndNamesTheWinner) {
  const auto r = race({{"+1001", 200}, {"+1002", 403}, {"+1003", 403}}, true);
  EXPECT_EQ(r.sip.calls, 3u);
  EXPECT_EQ(r.sip.connected, 1u);
  EXPECT_EQ(r.sip.refused, 2u);
  ASSERT_EQ(r.sip.numbers.size(), 1u);
  const auto& n = r.sip.numbers[0];
  EXPECT_EQ(n.number, "+15559999");
  EXPECT_EQ(n.alias, "1/3");  // channel/alias, as the binding check keys it
  EXPECT_EQ(n.winner, "+1001");
  EXPECT_EQ(n.epochs_judged, 1u);
  EXPECT_EQ(n.epochs_with_two_winners, 0u);
  EXPECT_EQ(binding(r).outcome, "pass");
  EXPECT_EQ(r.sip.calls_seen[0].caller, "+1001");
  EXPECT_EQ(r.sip.calls_seen[0].outcome, "connected");
  EXPECT_EQ(r.sip.calls_seen[1].final_status, 403u);
}

TEST(SipCheck, TwoWinnersInOneEpochAreAViolationWithTheirFrames) {
  const auto r = race({{"+1001", 200}, {"+1002", 200}, {"+1003", 403}}, true);
  ASSERT_EQ(r.sip.numbers.size(), 1u);
  EXPECT_EQ(r.sip.numbers[0].epochs_with_two_winners, 1u);
  EXPECT_EQ(r.sip.numbers[0].connected_callers, (std::vector<std::string>{"+1001", "+1002"}));
  const auto& b = binding(r);
  EXPECT_EQ(b.outcome, "fail");
  ASSERT_FALSE(b.evidence.empty());
  EXPECT_NE(b.evidence[0].what.find("SIP: 2 different callers connected to +15559999"), std::string::npos)
      << b.evidence[0].what;
  EXPECT_EQ(r.verdict.exit_code(), 1);
  const std::string line = evidence_line(b.evidence[0], kStart);
  EXPECT_NE(line.find("(UDP, "), std::string::npos) << line;
  EXPECT_NE(line.find("→ SIP 200"), std::string::npos) << line;
  EXPECT_EQ(display_filter(b.evidence[0]), "sip.Call-ID == \"c-+1002\"");
}

TEST(SipCheck, WithoutTagEpochsWinnersAreListedNotJudged) {
  const auto r = race({{"+1001", 200}, {"+1002", 200}}, false);
  EXPECT_EQ(r.sip.judgement, "no tag epochs in the capture: winners listed, not judged");
  ASSERT_EQ(r.sip.numbers.size(), 1u);
  EXPECT_EQ(r.sip.numbers[0].winner, "+1001");
  EXPECT_EQ(r.sip.numbers[0].connected_callers.size(), 2u);
  EXPECT_EQ(binding(r).violations, 0u);
  EXPECT_EQ(r.verdict.exit_code(), 3);  // nothing of the API to judge: untested, never green
}

TEST(SipCheck, RetransmissionsAndChallengesAreOneCall) {
  ContractJudge judge({});
  Wire w;
  SipCall c = call("+1001", "c1");
  judge.add_sip(w.sip(testing::sip_invite(c), true));
  judge.add_sip(w.sip(testing::sip_invite(c), true));  // Timer A fired
  judge.add_sip(w.sip(testing::sip_answer(c, 407), false));
  judge.add_sip(w.sip(testing::sip_answer(c, 407), false));  // the answer retransmitted
  c.cseq = 2;
  c.branch = "z9hG4bK-c1-2";
  judge.add_sip(w.sip(testing::sip_invite(c), true));  // with credentials
  judge.add_sip(w.sip(testing::sip_answer(c, 200), false));
  WireSipMessage bad;
  bad.error = "no start line";
  judge.add_sip(std::move(bad));
  ReadSummary s;
  const auto r = judge.finish(s);
  EXPECT_EQ(r.sip.calls, 1u);
  EXPECT_EQ(r.sip.retransmissions, 2u);
  EXPECT_EQ(r.sip.connected, 1u);
  EXPECT_EQ(r.sip.calls_seen[0].final_status, 200u);
  EXPECT_EQ(r.sip.unreadable, 1u);
}

TEST(SipCheck, CaptureFileWithSipAndHttpIsJudgedAndDocumented) {
  const std::string path = ::testing::TempDir() + "/sip_check_test.pcap";
  {
    testing::PcapBuilder b(testing::LinkKind::ethernet, path);
    auto h = b.flow("127.0.0.1", 41000, "127.0.0.1", 8080);
    b.handshake(h, 1 * kMs);
    b.send(h, testing::Dir::to_server,
           testing::http_request("POST", "/channels/1/alias-numbers/tag",
                                 {{"Apikey", "a-key-0123456789abcdef"},
                                  {"Content-Type", "application/x-www-form-urlencoded"}},
                                 "tag=t&minutes=5"),
           2 * kMs);
    b.send(h, testing::Dir::to_client,
           testing::http_response(200, {{"Content-Type", "application/json"}},
                                  R"({"id":"3","number":"+15559999","tag":"t"})"),
           3 * kMs);
    const SipCall a = call("+1001", "a"), c = call("+1002", "b");
    b.ip_frame(false, testing::udp_packet("127.0.0.1", 40000, "127.0.0.1", 5060, testing::sip_invite(a)), 4 * kMs);
    auto t = b.flow("127.0.0.1", 40001, "127.0.0.1", 5060);
    b.handshake(t, 4 * kMs);
    b.send_split(t, testing::Dir::to_server, testing::sip_invite(c), 100, 5 * kMs);
    b.ip_frame(false, testing::udp_packet("127.0.0.1", 5060, "127.0.0.1", 40000, testing::sip_answer(a, 200)), 6 * kMs);
    b.send(t, testing::Dir::to_client, testing::sip_answer(c, 403), 7 * kMs);
  }
  const auto r = check_capture(path, {});
  EXPECT_EQ(r.sip.calls, 2u);
  EXPECT_EQ(r.sip.connected, 1u);
  EXPECT_EQ(r.sip.refused, 1u);
  ASSERT_EQ(r.sip.numbers.size(), 1u);
  EXPECT_EQ(r.sip.numbers[0].winner, "+1001");
  EXPECT_EQ(r.sip.numbers[0].epochs_judged, 1u);
  const auto doc = result_document(r, {}, {}, 0);
  const auto& sip = doc.at(results::keys::pcap_sip::section).as_object();
  EXPECT_EQ(sip.at(results::keys::pcap_sip::calls).as_uint64(), 2u);
  EXPECT_EQ(sip.at(results::keys::pcap_sip::numbers).as_array()[0].at("winner").as_string(), "+1001");
}

}  // namespace
}  // namespace crh::capture
