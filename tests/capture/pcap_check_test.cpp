// Tests of capture/pcap_check: each rule of `crh pcap check` on crafted
// exchanges (a violation found with its frames, a right exchange passing, an
// incomplete one never judged) and the request recognizer of core/api.
#include "capture/pcap_check.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdlib>

#include "core/api.hpp"
#include "pcap_builder.hpp"

namespace crh::capture::pcap_check_test {
namespace {

namespace api = core::api;

constexpr std::int64_t kMs = 1'000'000;
const std::string kKey = "s3cret-key-never-shown-0123";

// Builds exchanges with distinct frames and times, as a reader would hand them out.
struct Wire {
  std::uint64_t frame = 1;
  std::int64_t now = 1'700'000'000'000'000'000;
  std::uint32_t sequence = 0;

  WireExchange make(std::string method, std::string target, std::optional<unsigned> status, std::string body = "{}",
                    std::string request_body = "", bool key = true, std::uint64_t stream = 0,
                    std::int64_t duration = kMs) {
    WireExchange e;
    e.stream = stream;
    e.sequence = sequence++;
    e.request.method = std::move(method);
    e.request.target = std::move(target);
    if (key) e.request.headers.push_back({"Apikey", kKey});
    if (!request_body.empty())
      e.request.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
    e.request.body = std::move(request_body);
    e.request_first = {now, frame};
    e.request_last = {now + 10, frame + 1};
    if (status) {
      core::HttpResponse r;
      r.status = *status;
      r.headers.push_back({"Content-Type", "application/json"});
      r.body = std::move(body);
      e.response = std::move(r);
      e.response_first = {now + duration - 10, frame + 2};
      e.response_last = {now + duration, frame + 3};
    } else {
      e.complete = false;
      e.incomplete = "no response before the capture ended";
    }
    frame += 4;
    now += duration + kMs;
    return e;
  }
};

CheckReport judge(std::vector<WireExchange> exchanges, CheckConfig config = {}) {
  ContractJudge j(std::move(config));
  std::int64_t first = exchanges.empty() ? 0 : exchanges.front().request_first.ns;
  for (auto& e : exchanges) j.add(std::move(e));
  ReadSummary s;
  s.first_ns = first;
  return j.finish(s);
}

const JudgedCheck& check(const CheckReport& r, std::string_view id) {
  for (const auto& c : r.checks)
    if (c.id == id) return c;
  ADD_FAILURE() << "no check " << id;
  static JudgedCheck none;
  return none;
}

TEST(ApiRecognize, NamesEveryEndpointWithItsDecodedIds) {
  const core::CallHook hook;
  auto r = api::recognize(hook, "PUT", "/api/v1/local-agents/10%201/snooze");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->op, api::Operation::snooze);
  EXPECT_EQ(r->id, "10 1");
  r = api::recognize(hook, "POST", "/database/a%2Fb?x=1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->op, api::Operation::db_set);
  EXPECT_EQ(r->id, "a/b");
  r = api::recognize(hook, "DELETE", "/channels/2/alias-numbers/3/tag");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->op, api::Operation::untag);
  EXPECT_EQ(r->channel, "2");
  EXPECT_EQ(r->id, "3");
  r = api::recognize(hook, "POST", "/channels/1/alias-numbers/4/calls");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->op, api::Operation::call);
  EXPECT_EQ(r->id, "4");
  EXPECT_FALSE(api::recognize(hook, "DELETE", "/api/v1/local-agents"));
  EXPECT_FALSE(api::recognize(hook, "GET", "/database/%zz"));
  EXPECT_FALSE(api::recognize(hook, "GET", "/nowhere"));
}

TEST(ApiRecognize, HonoursTheDialectsHookAndTheBasePath) {
  core::CallHook hook;
  hook.method = "PUT";
  hook.path = "/test-hooks/dial/{alias}";
  auto r = api::recognize(hook, "PUT", "/svc/test-hooks/dial/7", "/svc");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->op, api::Operation::call);
  EXPECT_EQ(r->id, "7");
  EXPECT_FALSE(api::recognize(hook, "POST", "/svc/test-hooks/dial/7", "/svc"));
  EXPECT_FALSE(api::recognize(hook, "GET", "/database/k", "/svc"));  // outside the base path
  r = api::recognize(hook, "GET", "/svc/api/v1/local-agents", "/svc/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->op, api::Operation::list_agents);
}

TEST(ApiRequestParameter, ReadsQueryFormAndJson) {
  core::HttpRequest form{"POST", "/database/k", {}, "value=a+b%26c&x=1"};
  EXPECT_EQ(api::request_parameter(form, "value"), "a b&c");
  core::HttpRequest json{"POST", "/database/k", {}, R"({"value": "v", "minutes": 5})"};
  EXPECT_EQ(api::request_parameter(json, "value"), "v");
  EXPECT_EQ(api::request_parameter(json, "minutes"), "5");
  core::HttpRequest query{"POST", "/x?caller=%2B1555", {}, ""};
  EXPECT_EQ(api::request_parameter(query, "caller"), "+1555");
  EXPECT_FALSE(api::request_parameter(query, "value"));
}

TEST(PcapCheck, MissingKeyAnsweredWithSuccessFailsWithItsFrames) {
  Wire w;
  auto refused = w.make("GET", "/api/v1/local-agents", 401, R"({"msg":"no key"})", "", false);
  auto accepted = w.make("GET", "/database/k", 200, R"({"key":"k","value":"v"})", "", false, 3);
  const auto r = judge({refused, accepted});
  const auto& c = check(r, "capture.auth.missing-key");
  EXPECT_EQ(c.outcome, "fail");
  EXPECT_EQ(c.judged, 2u);
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_EQ(c.evidence[0].request_first, 5u);
  EXPECT_EQ(c.evidence[0].response_last, 8u);
  EXPECT_EQ(c.evidence[0].stream, 3u);
  EXPECT_EQ(r.requests_without_key, 2u);
  EXPECT_EQ(r.verdict.exit_code(), 1);
  const auto line = evidence_line(c.evidence[0], 1'700'000'000'000'000'000);
  EXPECT_NE(line.find("frames 5–8 (tcp.stream 3, "), std::string::npos) << line;
  EXPECT_NE(line.find("GET /database/k → HTTP 200"), std::string::npos) << line;
  EXPECT_EQ(display_filter(c.evidence[0]), "frame.number in {5 6 7 8} || tcp.stream eq 3");
}

TEST(PcapCheck, RefusedRequestsWithoutKeyPass) {
  Wire w;
  const auto r = judge({w.make("GET", "/api/v1/local-agents", 401, R"({"msg":"no key"})", "", false),
                        w.make("GET", "/api/v1/local-agents", 200, R"({"agents":[]})")});
  EXPECT_EQ(check(r, "capture.auth.missing-key").outcome, "pass");
  EXPECT_EQ(r.verdict.exit_code(), 0);
  EXPECT_EQ(r.verdict.status, results::Status::passed);
}

TEST(PcapCheck, ServerErrorFails) {
  Wire w;
  const auto r = judge({w.make("GET", "/api/v1/local-agents", 503, R"({"msg":"down"})")});
  const auto& c = check(r, "capture.no-5xx");
  EXPECT_EQ(c.outcome, "fail");
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_EQ(c.evidence[0].status, 503u);
}

TEST(PcapCheck, BodyThatIsNotJsonFails) {
  Wire w;
  const auto r = judge({w.make("GET", "/api/v1/local-agents", 200, "<html>hi</html>")});
  EXPECT_EQ(check(r, "capture.json-bodies").outcome, "fail");
  EXPECT_EQ(check(r, "capture.json-bodies").violations, 1u);
}

TEST(PcapCheck, ErrorWithoutMsgFailsAndErrorWithMsgPasses) {
  Wire w;
  auto bad = judge({w.make("GET", "/database/nope", 404, R"({"error":"x"})")});
  EXPECT_EQ(check(bad, "capture.error-shape").outcome, "fail");
  EXPECT_EQ(bad.verdict.exit_code(), 1);
  auto good = judge({w.make("GET", "/database/nope", 404, R"({"msg":"no such key"})")});
  EXPECT_EQ(check(good, "capture.error-shape").outcome, "pass");
  EXPECT_EQ(good.verdict.exit_code(), 0);
}

TEST(PcapCheck, SuccessOtherThan200Fails) {
  Wire w;
  const auto r = judge({w.make("POST", "/database/k", 201, R"({"key":"k","value":"v"})", "value=v")});
  EXPECT_EQ(check(r, "capture.success-is-200").outcome, "fail");
}

TEST(PcapCheck, IncompleteExchangeIsNeverJudged) {
  Wire w;
  auto e = w.make("GET", "/api/v1/local-agents", 500, "garbage");
  e.complete = false;
  e.incomplete = "gap of 100 bytes before the response";
  const auto r = judge({std::move(e), w.make("GET", "/api/v1/local-agents", std::nullopt)});
  EXPECT_EQ(check(r, "capture.no-5xx").outcome, "indeterminate");
  EXPECT_EQ(check(r, "capture.json-bodies").violations, 0u);
  EXPECT_EQ(r.not_judged_incomplete, 2u);
  EXPECT_EQ(r.verdict.status, results::Status::untested);  // nothing judged: never a pass
  EXPECT_EQ(r.verdict.exit_code(), 3);
}

TEST(PcapCheck, SnoozeShapedUnlikeTheGetFails) {
  Wire w;
  const auto r = judge({w.make("PUT", "/api/v1/local-agents/101/snooze", 200, R"({"id":101,"state":"snoozed"})"),
                        w.make("GET", "/api/v1/local-agents/101", 200, R"({"id":"101","name":"a","state":"available"})")});
  const auto& c = check(r, "capture.snooze-wake-shape");
  EXPECT_EQ(c.outcome, "fail");
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_NE(c.evidence[0].what.find("lacks \"name\""), std::string::npos) << c.evidence[0].what;
  EXPECT_EQ(c.evidence[0].request_first, 1u);
}

TEST(PcapCheck, WakeShapedLikeTheGetPasses) {
  Wire w;
  const auto r = judge({w.make("GET", "/api/v1/local-agents/101", 200, R"({"id":"101","name":"a","state":"snoozed"})"),
                        w.make("PUT", "/api/v1/local-agents/101/wake", 200, R"({"id":"101","name":"a","state":"available"})")});
  EXPECT_EQ(check(r, "capture.snooze-wake-shape").outcome, "pass");
}

TEST(PcapCheck, DatabaseReadAfterWriteOnTheStreamMustReturnTheValue) {
  Wire w;
  const auto r = judge({w.make("POST", "/database/k", 200, R"({"key":"k","value":"new"})", "value=new"),
                        w.make("GET", "/database/k", 200, R"({"key":"k","value":"old"})")});
  const auto& c = check(r, "capture.database-readback");
  EXPECT_EQ(c.outcome, "fail");
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_EQ(c.evidence[0].request_first, 5u);
  EXPECT_NE(c.evidence[0].what.find("frames 1–4"), std::string::npos) << c.evidence[0].what;

  Wire ok;
  const auto good = judge({ok.make("POST", "/database/k", 200, R"({"key":"k","value":"a b"})", "value=a+b"),
                           ok.make("GET", "/database/k", 200, R"({"key":"k","value":"a b"})")});
  EXPECT_EQ(check(good, "capture.database-readback").outcome, "pass");
}

TEST(PcapCheck, DatabaseReadWithAnotherWriteBetweenIsNotJudged) {
  Wire w;
  auto post = w.make("POST", "/database/k", 200, "{}", "value=mine");
  auto other = w.make("POST", "/database/k", 200, "{}", "value=theirs", true, 9);  // another stream, in between
  auto get = w.make("GET", "/database/k", 200, R"({"key":"k","value":"theirs"})");
  // The other stream's write ends after the read: it reaches the judge last.
  const auto r = judge({std::move(post), std::move(get), std::move(other)});
  const auto& c = check(r, "capture.database-readback");
  EXPECT_EQ(c.violations, 0u);
  EXPECT_EQ(c.indeterminate, 1u);
  EXPECT_EQ(c.outcome, "indeterminate");
}

TEST(PcapCheck, TagAnswerWithoutAnIdIsAShouldFinding) {
  Wire w;
  CheckConfig strict;
  strict.strict = true;
  const auto r = judge({w.make("POST", "/channels/1/alias-numbers/tag", 200, R"({"number":"+1555"})",
                               "tag=t&minutes=5")});
  EXPECT_EQ(check(r, "capture.tag-answer").outcome, "warn");
  EXPECT_EQ(r.verdict.exit_code(), 0);
  Wire w2;
  const auto s = judge({w2.make("POST", "/channels/1/alias-numbers/tag", 200, R"({"number":"+1555"})",
                                "tag=t&minutes=5")},
                       strict);
  EXPECT_EQ(s.verdict.exit_code(), 1);
}

// A tag of alias 3, then calls; each call lasts 1 ms and they follow each other.
std::vector<WireExchange> binding_round(Wire& w, const std::vector<std::pair<std::string, unsigned>>& calls) {
  std::vector<WireExchange> out;
  out.push_back(w.make("POST", "/channels/1/alias-numbers/tag", 200, R"({"id":"3","tag":"t"})", "tag=t&minutes=5"));
  for (const auto& [caller, status] : calls)
    out.push_back(w.make("POST", "/channels/1/alias-numbers/3/calls", status,
                         status == 200 ? R"({"connected":true})" : R"({"msg":"locked"})", "caller=" + caller));
  out.push_back(w.make("DELETE", "/channels/1/alias-numbers/3/tag", 200, R"({"id":"3","tag":null})"));
  return out;
}

TEST(PcapCheck, BindingFirstCallerBoundOthersRefusedPasses) {
  Wire w;
  const auto r = judge(binding_round(w, {{"%2B1", 200}, {"%2B2", 403}, {"%2B1", 200}}));
  const auto& c = check(r, "capture.binding");
  EXPECT_EQ(c.outcome, "pass") << (c.evidence.empty() ? "" : c.evidence[0].what);
  EXPECT_EQ(c.judged, 1u);
}

TEST(PcapCheck, BindingLastCallerWinsFailsNamingTheCallsFrames) {
  Wire w;
  const auto r = judge(binding_round(w, {{"%2B1", 200}, {"%2B2", 200}}));
  const auto& c = check(r, "capture.binding");
  EXPECT_EQ(c.outcome, "fail");
  ASSERT_FALSE(c.evidence.empty());
  EXPECT_NE(c.evidence[0].what.find("connected-after-bound"), std::string::npos) << c.evidence[0].what;
  EXPECT_NE(c.evidence[0].what.find("call frames 5–8"), std::string::npos) << c.evidence[0].what;
  EXPECT_NE(c.evidence[0].what.find("call frames 9–12"), std::string::npos) << c.evidence[0].what;
  EXPECT_EQ(r.verdict.exit_code(), 1);
}

TEST(PcapCheck, BindingBoundCallerRefusedFails) {
  Wire w;
  const auto r = judge(binding_round(w, {{"%2B1", 200}, {"%2B1", 403}}));
  const auto& c = check(r, "capture.binding");
  EXPECT_EQ(c.outcome, "fail");
  ASSERT_FALSE(c.evidence.empty());
  EXPECT_NE(c.evidence[0].what.find("bound-caller-rejected"), std::string::npos) << c.evidence[0].what;
}

TEST(PcapCheck, BindingOverlappingWinnersAreJudgedOnlyAsTheTimesAllow) {
  // Two callers whose calls overlap in time both connect: the checker calls
  // it two winners (certain), but a refusal overlapping an unanswered call is
  // not a refusal "while free".
  Wire w;
  auto round = binding_round(w, {{"%2B1", 200}, {"%2B2", 200}});
  round[2].request_first.ns = round[1].request_first.ns;
  round[2].request_last.ns = round[1].request_last.ns + 1;
  const auto r = judge(std::move(round));
  ASSERT_FALSE(check(r, "capture.binding").evidence.empty());
  EXPECT_NE(check(r, "capture.binding").evidence[0].what.find("two-winners"), std::string::npos);

  Wire w2;
  auto unknown = binding_round(w2, {{"%2B1", 0}, {"%2B2", 403}});
  unknown[1].response.reset();
  unknown[1].complete = false;
  unknown[1].response_first = unknown[1].response_last = {};
  const auto u = judge(std::move(unknown));
  EXPECT_EQ(check(u, "capture.binding").violations, 0u);
}

TEST(PcapCheck, BindingViolationInAnEarlyEpochSurvivesTheFreeingOfEpochs) {
  // Enough rounds on one alias that the oldest epochs are judged and freed
  // while exchanges still stream in; the first round's second winner is found.
  Wire w;
  std::vector<WireExchange> all;
  for (int round = 0; round < 100; ++round)
    for (auto& e : binding_round(w, {{"%2B1", 200}, {"%2B2", round == 0 ? 200u : 403u}})) all.push_back(std::move(e));
  const auto r = judge(std::move(all));
  const auto& c = check(r, "capture.binding");
  EXPECT_EQ(c.judged, 100u);
  EXPECT_EQ(c.violations, 1u);
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_NE(c.evidence[0].what.find("call frames 9–12"), std::string::npos) << c.evidence[0].what;
}

TEST(PcapCheck, ReadsACaptureFileAndNamesItsFrames) {
  const std::string path = ::testing::TempDir() + "/pcap_check_test.pcap";
  {
    testing::PcapBuilder b(testing::LinkKind::ethernet, path);
    auto f = b.flow("127.0.0.1", 40000, "127.0.0.1", 8080);
    b.handshake(f, 1'000'000);
    b.send(f, testing::Dir::to_server, testing::http_request("GET", "/database/k"), 2'000'000);  // no Apikey
    b.send(f, testing::Dir::to_client,
           testing::http_response(200, {{"Content-Type", "application/json"}}, R"({"key":"k","value":"v"})"),
           3'000'000);
    b.fin(f, testing::Dir::to_server, 4'000'000);
    b.fin(f, testing::Dir::to_client, 5'000'000);
  }
  const auto r = check_capture(path, {});
  EXPECT_EQ(r.capture.link_type, "EN10MB");
  const auto& c = check(r, "capture.auth.missing-key");
  EXPECT_EQ(c.outcome, "fail");
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_EQ(c.evidence[0].request_first, 4u);  // after the three frames of the handshake
  EXPECT_EQ(c.evidence[0].response_last, 5u);
  EXPECT_EQ(r.verdict.exit_code(), 1);
  EXPECT_THROW(check_capture(path + ".absent", {}), CaptureFileError);
}

TEST(PcapCheck, WrongKeyRefusalIsNotABindingRefusal) {
  // crh's auth checks call with near-miss keys; a 403 to a key never
  // accepted says nothing about binding.
  Wire w;
  auto round = binding_round(w, {{"%2B1", 403}});
  round[1].request.headers[0].value = "near-miss-key";
  const auto r = judge(std::move(round));
  EXPECT_EQ(check(r, "capture.binding").violations, 0u);
}

TEST(PcapCheck, NoEvidenceOrDocumentHoldsTheKey) {
  Wire w;
  auto e = w.make("GET", "/database/k?apikey=" + kKey, 500, R"({"msg":"bad key )" + kKey + R"("})");
  const auto r = judge({std::move(e)});
  auto doc = result_document(r, {}, std::chrono::system_clock::now(), 1.0);
  const auto text = boost::json::serialize(doc);
  EXPECT_EQ(text.find(kKey), std::string::npos) << text;
  EXPECT_NE(text.find("$CRH_API_KEY"), std::string::npos);
  EXPECT_NE(text.find("\"kind\":\"pcap\""), std::string::npos);
}

TEST(PcapCheck, NothingToJudgeIsUntestedAndSkipsWithReasons) {
  const auto r = judge({});
  EXPECT_EQ(r.verdict.status, results::Status::untested);
  EXPECT_EQ(r.verdict.exit_code(), 3);
  EXPECT_EQ(check(r, "capture.binding").outcome, "skip");
  EXPECT_FALSE(check(r, "capture.binding").message.empty());
}

TEST(PcapCheck, BasePathIsDetected) {
  Wire w;
  std::vector<WireExchange> all;
  for (int i = 0; i < 4; ++i) all.push_back(w.make("GET", "/svc/api/v1/local-agents", 503, "{}"));
  const auto r = judge(std::move(all));
  EXPECT_EQ(r.base_path, "/svc");
  EXPECT_EQ(r.api_exchanges, 2u);  // the first two only voted
  Wire root;
  const auto odd = judge({root.make("GET", "/api/v1/local-agents", 200, "{}"),
                          root.make("GET", "/api/v1/database/k", 404, R"({"msg":"no"})"),
                          root.make("GET", "/api/v1/database/k", 404, R"({"msg":"no"})"),
                          root.make("GET", "/api/v1/database/k", 404, R"({"msg":"no"})")});
  EXPECT_EQ(odd.base_path, "");
}

// ---- the reviewer's findings (each test failed before its fix) ----

std::string all_text(const CheckReport& r) {
  std::string text = boost::json::serialize(result_document(r, {}, std::chrono::system_clock::now(), 1.0));
  for (const auto& c : r.checks)
    for (const auto& e : c.evidence) text += "\n" + evidence_line(e, 0);
  return text;
}

TEST(PcapCheck, BodilessAnswersAreStatusCheckedAndA204UntagEndsTheTag) {
  // A DELETE of the tag answered 204 breaks C2, yet for the binding rules it
  // ended the tag: a caller after it is not a second winner of the epoch.
  Wire w;
  auto round = binding_round(w, {{"%2B1", 200}});
  round.back().response->status = 204;
  round.back().response->body.clear();
  round.push_back(w.make("POST", "/channels/1/alias-numbers/3/calls", 200, R"({"connected":true})", "caller=%2B2"));
  round.push_back(w.make("GET", "/database/k", 204, "", "", false));
  const auto r = judge(std::move(round));
  const auto& c2 = check(r, "capture.success-is-200");
  EXPECT_EQ(c2.outcome, "fail");
  ASSERT_EQ(c2.evidence.size(), 2u);
  EXPECT_EQ(c2.evidence[0].status, 204u);
  EXPECT_EQ(c2.evidence[0].method, "DELETE");
  EXPECT_EQ(check(r, "capture.auth.missing-key").violations, 1u);  // the GET without a key answered 204
  const auto& b = check(r, "capture.binding");
  EXPECT_EQ(b.violations, 0u) << (b.evidence.empty() ? "" : b.evidence[0].what);
  EXPECT_EQ(b.judged, 1u);
}

TEST(PcapCheck, TrafficThatIsNotTheApiIsCountedNotJudged) {
  Wire w;
  auto health = w.make("GET", "/healthz", 200, "ok", "", false);
  health.response->headers = {{"Content-Type", "text/plain"}};
  const auto r = judge({std::move(health), w.make("GET", "/api/v1/local-agents", 200, R"({"agents":[]})")});
  for (const auto& c : r.checks) EXPECT_EQ(c.violations + c.warnings, 0u) << c.id;
  EXPECT_EQ(check(r, "capture.auth.missing-key").judged, 0u);
  EXPECT_EQ(check(r, "capture.json-bodies").judged, 1u);
  EXPECT_EQ(r.other_exchanges, 1u);
  EXPECT_EQ(r.api_exchanges, 1u);
  EXPECT_EQ(r.requests_without_key, 0u);
  EXPECT_EQ(r.verdict.exit_code(), 0);
}

TEST(PcapCheck, NoExchangeOfTheApiIsUntestedWhateverElseWasSeen) {
  // A wrong --base-path: every exchange is other traffic, even a 5xx; never a pass.
  Wire w;
  CheckConfig config;
  config.base_path = "/wrong";
  const auto r = judge({w.make("GET", "/api/v1/local-agents", 200, R"({"agents":[]})"),
                        w.make("GET", "/database/k", 503, "down")},
                       config);
  EXPECT_EQ(r.api_exchanges, 0u);
  EXPECT_EQ(r.other_exchanges, 2u);
  EXPECT_EQ(r.verdict.status, results::Status::untested);
  EXPECT_EQ(r.verdict.exit_code(), 3);
  EXPECT_NE(r.verdict.reason.find("--base-path"), std::string::npos) << r.verdict.reason;
}

TEST(PcapCheck, RedactedCaptureTellsAWrongKeysRefusalFromACallRefusal) {
  // crh --capture writes the key's value as 'x' and any other Apikey value
  // as '*', each of its own length (capture/packet_redaction.hpp): a wrong
  // key's 403 (an auth status and the call refusal alike) while the alias is
  // free is no binding refusal, and a refusal of the key still is.
  Wire w;
  auto round = binding_round(w, {{"%2B9", 403}, {"%2B1", 200}, {"%2B2", 403}, {"%2B1", 200}});
  for (auto& e : round) e.request.headers[0].value = std::string(kKey.size(), 'x');
  round[1].request.headers[0].value = std::string(kKey.size(), '*');  // %2B9: a wrong key
  const auto r = judge(std::move(round));
  const auto& b = check(r, "capture.binding");
  EXPECT_EQ(b.violations, 0u) << (b.evidence.empty() ? "" : b.evidence[0].what);
  EXPECT_EQ(b.judged, 1u);

  // The same refusal with the key's fill refuses a caller while the alias is free.
  Wire again;
  auto keyed = binding_round(again, {{"%2B9", 403}, {"%2B1", 200}});
  for (auto& e : keyed) e.request.headers[0].value = std::string(kKey.size(), 'x');
  EXPECT_GT(check(judge(std::move(keyed)), "capture.binding").violations, 0u);
}

TEST(PcapCheck, KeyAcrossTheExcerptCutLeavesNoPrefix) {
  // The key echoed where the excerpt is cut (120 bytes), in a body that is
  // not JSON and in an error body the error shape quotes.
  const std::string before(112, 'a');
  Wire w;
  const auto r = judge({w.make("GET", "/api/v1/local-agents", 200, before + kKey + " and more"),
                        w.make("GET", "/database/k", 404, "{\"msg\": \"" + before + kKey + "\" ")});
  EXPECT_EQ(check(r, "capture.json-bodies").violations, 2u);
  EXPECT_EQ(check(r, "capture.error-shape").violations, 1u);
  const auto text = all_text(r);
  EXPECT_EQ(text.find(kKey.substr(0, 6)), std::string::npos) << text;
}

TEST(PcapCheck, TheUsersKeyIsHiddenBeforeAnyCut) {
  const std::string key = "env-key-abcdefghijkl";
  ::setenv("CRH_API_KEY", key.c_str(), 1);
  Wire w;
  const auto r = judge({w.make("GET", "/api/v1/local-agents", 200, std::string(115, 'b') + key)});
  ::unsetenv("CRH_API_KEY");
  const auto text = all_text(r);
  EXPECT_EQ(text.find(key.substr(0, 5)), std::string::npos) << text;
}

TEST(PcapCheck, ApikeyParametersAreLearnedAndNeverPrinted) {
  const std::string query_key = "query-key-0123456789", form_key = "form-key-0123456789";
  Wire w;
  std::vector<WireExchange> all;
  all.push_back(w.make("GET", "/database/k?ApiKey=" + query_key + "&x=1", 500, "{\"msg\":\"" + query_key + "\"}"));
  all.push_back(w.make("POST", "/database/k", 500, "{\"msg\":\"" + form_key + "\"}", "value=v&APIKEY=" + form_key));
  auto json_body = w.make("POST", "/database/j", 503, "{\"msg\":\"json-key-0123456789\"}");
  json_body.request.body = R"({"value":"v","apikey":"json-key-0123456789"})";
  all.push_back(std::move(json_body));
  // Far more keys than 64, each echoed by its own answer.
  for (int i = 0; i < 100; ++i) {
    auto e = w.make("GET", "/database/n", 500, "{\"msg\":\"bad key many-keys-" + std::to_string(1000 + i) + "\"}");
    e.request.headers[0].value = "many-keys-" + std::to_string(1000 + i);
    all.push_back(std::move(e));
  }
  const auto r = judge(std::move(all));
  const auto text = all_text(r);
  for (const auto& k : {query_key, form_key, std::string("json-key-0123456789"), std::string("many-keys-1099")})
    EXPECT_EQ(text.find(k), std::string::npos) << k << "\n" << text;
  const auto& c = check(r, "capture.no-5xx");
  ASSERT_FALSE(c.evidence.empty());
  EXPECT_EQ(c.evidence[0].target, "/database/k?ApiKey=$CRH_API_KEY&x=1");
}

TEST(PcapCheck, ExchangesWhosePlaceALossHidIsJudged) {
  // A stream without its SYN and a loss in both directions: the exchanges
  // after it are whole, but their place on the stream is unknown. The check
  // needs only their order, so they are judged (the 503 fails no-5xx).
  const std::string path = ::testing::TempDir() + "/pcap_check_unplaced.pcap";
  {
    testing::PcapBuilder b(testing::LinkKind::ethernet, path);
    auto f = b.flow("10.0.0.1", 40033, "10.0.0.2", 80);
    for (int i = 0; i < 5; ++i) {
      const std::string req = testing::http_request("GET", "/api/v1/local-agents", {{"Apikey", kKey}});
      const std::string answer = testing::http_response(i == 4 ? 503 : 200, {{"Content-Type", "application/json"}},
                                                        i == 4 ? R"({"msg":"down"})" : R"({"agents":[]})");
      if (i == 2) {
        b.skip(f, testing::Dir::to_server, static_cast<std::uint32_t>(req.size()));
        b.skip(f, testing::Dir::to_client, static_cast<std::uint32_t>(answer.size()));
        continue;
      }
      b.send(f, testing::Dir::to_server, req, 1'000'000'000 + (10 + 10 * i) * kMs);
      b.send(f, testing::Dir::to_client, answer, 1'000'000'000 + (12 + 10 * i) * kMs);
    }
  }
  const auto r = check_capture(path, {});
  const auto& c = check(r, "capture.no-5xx");
  EXPECT_EQ(c.violations, 1u) << c.message;
  EXPECT_EQ(c.judged, 4u);
}

TEST(PcapCheck, ApikeyHeaderIsFoundInAnyCase) {
  Wire w;
  auto e = w.make("GET", "/api/v1/local-agents", 200, R"({"agents":[]})");
  e.request.headers[0].name = "APIKEY";
  const auto r = judge({std::move(e)});
  EXPECT_EQ(r.requests_without_key, 0u);
  EXPECT_EQ(check(r, "capture.auth.missing-key").judged, 0u);
}

TEST(PcapCheck, KeyLearnedLaterIsHiddenInEarlierEvidenceAndShortKeysSpareTheWords) {
  const std::string late = "late-key-0123456789";
  Wire w;
  auto echo = w.make("GET", "/api/v1/local-agents", 200, "oops " + late, "", false);
  auto later = w.make("GET", "/api/v1/local-agents", 200, R"({"agents":[]})");
  later.request.headers[0].value = late;
  auto short_key = w.make("GET", "/api/v1/local-agents", 200, "not json");
  short_key.request.headers[0].value = "e";  // matches ordinary words: never applied to the check's own words
  const auto r = judge({std::move(echo), std::move(later), std::move(short_key)});
  const auto& c = check(r, "capture.json-bodies");
  ASSERT_EQ(c.evidence.size(), 2u);
  EXPECT_EQ(c.evidence[0].what.find(late), std::string::npos) << c.evidence[0].what;
  EXPECT_EQ(c.evidence[1].what.rfind("expected a JSON body (responses are JSON), got HTTP 200 where ", 0), 0u) << c.evidence[1].what;
}

}  // namespace
}  // namespace crh::capture::pcap_check_test
