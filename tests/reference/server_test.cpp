// The reference service over real loopback sockets: every endpoint, the auth
// matrix, the error shape, parameter encodings, malformed and oversized
// requests, keep-alive, racing callers and graceful stop.
#include <atomic>
#include <thread>

#include "server_fixture.hpp"

namespace crh::test {
namespace {
using namespace std::chrono_literals;
namespace json = boost::json;

using ReferenceServer = ServerFixture;

TEST_F(ReferenceServer, ListsAgentsAndReadsEach) {
  auto r = send("GET", "/api/v1/local-agents");
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("content-type"), "application/json");
  auto agents = r.json().at("agents").as_array();
  ASSERT_EQ(agents.size(), 3u);
  for (const auto& a : agents) {
    auto one = send("GET", "/api/v1/local-agents/" + std::string(a.at("id").as_string()));
    ASSERT_EQ(one.status, 200u);
    EXPECT_EQ(one.json(), a);
  }
}

TEST_F(ReferenceServer, SnoozeAndWakeAnswerTheAgentObjectAndChangeState) {
  auto before = send("GET", "/api/v1/local-agents/102").json();
  auto snoozed = send("PUT", "/api/v1/local-agents/102/snooze");
  ASSERT_EQ(snoozed.status, 200u);
  EXPECT_EQ(snoozed.json().at("state"), "snoozed");
  EXPECT_EQ(snoozed.json().at("id"), before.at("id"));
  EXPECT_EQ(snoozed.json().as_object().size(), before.as_object().size());
  EXPECT_EQ(send("GET", "/api/v1/local-agents/102").json().at("state"), "snoozed");
  auto woken = send("PUT", "/api/v1/local-agents/102/wake");
  ASSERT_EQ(woken.status, 200u);
  EXPECT_EQ(woken.json(), before);
  EXPECT_TRUE(IsError(send("PUT", "/api/v1/local-agents/999/wake"), 404));
  EXPECT_TRUE(IsError(send("GET", "/api/v1/local-agents/999"), 404));
}

TEST_F(ReferenceServer, DatabaseRoundTripsAwkwardValuesAndKeys) {
  const std::vector<std::string> values{"plain", "with spaces", "a+b", "x&y=z", "100%",
                                        "caf\xC3\xA9 \xE2\x98\x8E", "", std::string(16 * 1024, 'v')};
  int i = 0;
  for (const auto& v : values) {
    std::string key = "crh-probe-" + std::to_string(i++) + " k/?#%&+";
    std::string target = "/database/" + url_encode(key);
    auto w = send("POST", target, "value=" + url_encode(v));
    ASSERT_EQ(w.status, 200u) << w.body;
    EXPECT_EQ(w.json().at("value"), v.c_str());
    auto r = send("GET", target);
    ASSERT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.json().at("key").as_string(), key);
    EXPECT_EQ(r.json().at("value").as_string(), v);
  }
  send("POST", "/database/k", "value=one");
  send("POST", "/database/k", "value=two");
  EXPECT_EQ(send("GET", "/database/k").json().at("value"), "two");
  EXPECT_TRUE(IsError(send("GET", "/database/never-written"), 404));
  EXPECT_TRUE(IsError(send("POST", "/database/k", "other=1"), 400));
}

TEST_F(ReferenceServer, ParametersInFormJsonBodyOrQueryString) {
  ASSERT_EQ(send("POST", "/database/j", R"({"value":"from json"})",
                 with_key({{"Content-Type", "application/json; charset=utf-8"}})).status, 200u);
  EXPECT_EQ(send("GET", "/database/j").json().at("value"), "from json");
  ASSERT_EQ(send("POST", "/database/q?value=from+query").status, 200u);
  EXPECT_EQ(send("GET", "/database/q").json().at("value"), "from query");
  auto t = send("POST", "/channels/1/alias-numbers/tag", R"({"tag":"json","minutes":3})",
                with_key({{"Content-Type", "application/json"}}));
  ASSERT_EQ(t.status, 200u) << t.body;
  EXPECT_EQ(t.json().at("tag"), "json");
  auto q = send("POST", "/channels/1/alias-numbers/tag?tag=query&minutes=3");
  ASSERT_EQ(q.status, 200u) << q.body;
  EXPECT_EQ(q.json().at("tag"), "query");
  auto c = send("POST", "/channels/1/alias-numbers/1/calls", R"({"caller":"+15550001"})",
                with_key({{"Content-Type", "application/json"}}));
  EXPECT_EQ(c.status, 200u) << c.body;
}

TEST_F(ReferenceServer, AliasesTagDeleteAndTheCallHook) {
  auto list = send("GET", "/channels/1/alias-numbers");
  ASSERT_EQ(list.status, 200u);
  EXPECT_EQ(list.json().at("channel"), "1");
  auto aliases = list.json().at("aliases").as_array();
  ASSERT_EQ(aliases.size(), 4u);
  for (const auto& a : aliases) {
    EXPECT_TRUE(a.at("tag").is_null());
    EXPECT_TRUE(a.at("expires_at").is_null());
    EXPECT_TRUE(a.at("bound_caller").is_null());
  }
  auto tagged = send("POST", "/channels/1/alias-numbers/tag", "tag=alpha&minutes=10");
  ASSERT_EQ(tagged.status, 200u) << tagged.body;
  const std::string id(tagged.json().at("id").as_string());
  EXPECT_EQ(tagged.json().at("tag"), "alpha");
  EXPECT_TRUE(tagged.json().at("expires_at").is_string());
  const std::string calls = "/channels/1/alias-numbers/" + id + "/calls";
  auto first = send("POST", calls, "caller=%2B15551230001");
  ASSERT_EQ(first.status, 200u);
  EXPECT_EQ(first.json(), json::parse(R"({"alias":")" + id +
                                      R"(","caller":"+15551230001","connected":true})"));
  EXPECT_TRUE(IsError(send("POST", calls, "caller=%2B15551230002"), 403));
  EXPECT_EQ(send("POST", calls, "caller=%2B15551230001").status, 200u);
  auto untagged = send("DELETE", "/channels/1/alias-numbers/" + id + "/tag");
  ASSERT_EQ(untagged.status, 200u);
  EXPECT_TRUE(untagged.json().at("tag").is_null());
  EXPECT_EQ(send("POST", calls, "caller=%2B15551230002").status, 200u);
  EXPECT_TRUE(IsError(send("DELETE", "/channels/1/alias-numbers/" + id + "/tag"), 404));
  EXPECT_TRUE(IsError(send("DELETE", "/channels/1/alias-numbers/99/tag"), 404));
  EXPECT_TRUE(IsError(send("GET", "/channels/9/alias-numbers"), 404));
  EXPECT_TRUE(IsError(send("POST", "/channels/9/alias-numbers/tag", "tag=a&minutes=1"), 404));
  EXPECT_TRUE(IsError(send("POST", "/channels/1/alias-numbers/99/calls", "caller=1"), 404));
  EXPECT_TRUE(IsError(send("POST", calls, "caller="), 400));
}

TEST_F(ReferenceServer, TagRefusesWhenEveryAliasIsTagged) {
  for (int i = 0; i < 4; ++i) ASSERT_EQ(send("POST", "/channels/2/alias-numbers/tag", "tag=x&minutes=1").status, 200u);
  EXPECT_TRUE(IsError(send("POST", "/channels/2/alias-numbers/tag", "tag=x&minutes=1"), 409));
}

TEST_F(ReferenceServer, TagValidatesItsParameters) {
  const char* bad[] = {"minutes=5", "tag=&minutes=5", "tag=t", "tag=t&minutes=abc",
                       "tag=t&minutes=-1", "tag=t&minutes=1.5", "tag=t&minutes=0",
                       "tag=t&minutes=1441", "tag=t&minutes=", "tag=t&minutes=%2B5",
                       "tag=t&minutes=99999999999999999999", "tag=t&minutes=5&minutes=6"};
  for (const char* body : bad)
    EXPECT_TRUE(IsError(send("POST", "/channels/1/alias-numbers/tag", body), 400)) << body;
  EXPECT_TRUE(IsError(send("POST", "/channels/1/alias-numbers/tag", R"({"tag":"t","minutes":1.5})",
                           with_key({{"Content-Type", "application/json"}})), 400));
  EXPECT_TRUE(IsError(send("POST", "/channels/1/alias-numbers/tag", R"([1,2])",
                           with_key({{"Content-Type", "application/json"}})), 400));
  EXPECT_TRUE(IsError(send("POST", "/channels/1/alias-numbers/tag", R"({"tag":)",
                           with_key({{"Content-Type", "application/json"}})), 400));
  EXPECT_EQ(send("POST", "/channels/1/alias-numbers/tag", "tag=t&minutes=1440").status, 200u);
}

struct EndpointCase {
  const char* name;
  const char* method;
  const char* target;
  const char* body;
};

const EndpointCase kEndpoints[] = {
    {"agents-list", "GET", "/api/v1/local-agents", ""},
    {"agent-get", "GET", "/api/v1/local-agents/101", ""},
    {"agent-snooze", "PUT", "/api/v1/local-agents/101/snooze", ""},
    {"agent-wake", "PUT", "/api/v1/local-agents/101/wake", ""},
    {"database-get", "GET", "/database/greeting", ""},
    {"database-post", "POST", "/database/greeting", "value=changed"},
    {"aliases-list", "GET", "/channels/1/alias-numbers", ""},
    {"tag", "POST", "/channels/1/alias-numbers/tag", "tag=t&minutes=5"},
    {"tag-delete", "DELETE", "/channels/1/alias-numbers/1/tag", ""},
    {"call", "POST", "/channels/1/alias-numbers/1/calls", "caller=%2B1555"},
};

TEST_F(ReferenceServer, EveryEndpointRefusesMissingEmptyWrongOrMisplacedKeys) {
  const std::vector<std::pair<const char*, std::vector<Header>>> bad_auth{
      {"missing", {}},
      {"empty", {{"Apikey", ""}}},
      {"wrong", {{"Apikey", "not-the-key"}}},
      {"prefix of the key", {{"Apikey", std::string(kTestKey).substr(0, 5)}}},
      {"key plus a byte", {{"Apikey", std::string(kTestKey) + "x"}}},
      {"in Authorization", {{"Authorization", kTestKey}}},
      {"in X-Api-Key", {{"X-Api-Key", kTestKey}}},
      {"twice, once wrong", {{"Apikey", kTestKey}, {"Apikey", "wrong"}}},
  };
  for (const auto& e : kEndpoints)
    for (const auto& [label, headers] : bad_auth)
      EXPECT_TRUE(IsError(send(e.method, e.target, e.body, headers), 401)) << e.name << ", key " << label;
}

TEST_F(ReferenceServer, HeaderNameIsCaseInsensitive) {
  for (const char* name : {"apikey", "APIKEY", "ApiKey"}) {
    auto r = send("GET", "/api/v1/local-agents", "", {{name, kTestKey}});
    EXPECT_EQ(r.status, 200u) << name;
  }
}

TEST_F(ReferenceServer, RejectedWritesChangeNothing) {
  send("POST", "/database/greeting", "value=original");
  for (const auto& e : kEndpoints)
    send(e.method, e.target, e.body, {{"Apikey", "wrong"}});
  EXPECT_EQ(send("GET", "/database/greeting").json().at("value"), "original");
  EXPECT_EQ(send("GET", "/api/v1/local-agents/101").json().at("state"), "available");
  const auto list = send("GET", "/channels/1/alias-numbers").json();
  for (const auto& a : list.at("aliases").as_array())
    EXPECT_TRUE(a.at("tag").is_null());
  // A refused delete leaves the tag; a refused call binds nobody.
  auto tagged = send("POST", "/channels/1/alias-numbers/tag", "tag=t&minutes=5");
  const std::string id(tagged.json().at("id").as_string());
  send("DELETE", "/channels/1/alias-numbers/" + id + "/tag", "", {{"Apikey", "wrong"}});
  send("POST", "/channels/1/alias-numbers/" + id + "/calls", "caller=intruder", {{"Apikey", "wrong"}});
  EXPECT_EQ(send("POST", "/channels/1/alias-numbers/" + id + "/calls", "caller=owner").status, 200u);
  EXPECT_EQ(send("DELETE", "/channels/1/alias-numbers/" + id + "/tag").status, 200u);
}

TEST_F(ReferenceServer, UnknownRoutesAndWrongMethods) {
  for (const char* target : {"/", "/nope", "/api/v1/local-agents/", "/api/v2/local-agents",
                             "/database", "/database/", "/channels/1", "/channels//alias-numbers",
                             "/local-agents", "/api/v1/database/k"})
    EXPECT_TRUE(IsError(send("GET", target), 404)) << target;
  auto r = send("DELETE", "/database/k");
  EXPECT_TRUE(IsError(r, 405));
  EXPECT_EQ(r.header("allow"), "GET, POST");
  EXPECT_TRUE(IsError(send("GET", "/channels/1/alias-numbers/tag"), 405));
  EXPECT_TRUE(IsError(send("PATCH", "/api/v1/local-agents/101/snooze"), 405));
  EXPECT_TRUE(IsError(send("BREW", "/api/v1/local-agents"), 405));
}

TEST_F(ReferenceServer, MalformedRequestsGetA4xxWithMsg) {
  EXPECT_TRUE(IsError(send("GET", "/database/%zz"), 400));
  EXPECT_TRUE(IsError(send("GET", "/database/abc%"), 400));
  EXPECT_TRUE(IsError(send("GET", "/database/%FF%FE"), 400));  // not UTF-8
  EXPECT_TRUE(IsError(send("POST", "/database/k", "value=%zz"), 400));
  EXPECT_TRUE(IsError(send("POST", "/database/k", "value=x", with_key({{"Content-Type", "text/csv"}})), 415));
  EXPECT_TRUE(IsError(send("GET", "http://example.com/api/v1/local-agents"), 400));
  for (std::string raw : {std::string("GARBAGE\r\n\r\n"), std::string("GET / HTTP/9.9\r\n\r\n"),
                          std::string("GET /api/v1/local-agents HTTP/1.1\r\nBad Header\r\n\r\n"),
                          std::string("POST /database/k HTTP/1.1\r\nContent-Length: x\r\n\r\n")}) {
    RawConnection c("127.0.0.1", port());
    c.send(raw);
    auto r = c.read_response();
    ASSERT_TRUE(r) << raw;
    EXPECT_TRUE(IsError(*r, 400)) << raw;
    EXPECT_TRUE(c.closes_within(2s));
  }
}

// Found by fuzz/reference_request_fuzz.cpp: bytes that are not UTF-8 (in the
// target, a form body, a header) or a long path cut inside a character made
// the msg, and so the whole answer, invalid UTF-8 and thus not JSON.
TEST_F(ReferenceServer, ErrorAnswersStayJsonWhateverBytesCame) {
  auto raw = [&](const std::string& bytes) {
    RawConnection c("127.0.0.1", port());
    c.send(bytes);
    auto r = c.read_response();
    return r ? *r : HttpResponse{};
  };
  const std::string key = "\r\nApikey: " + std::string(kTestKey);
  EXPECT_TRUE(IsError(raw("GET /api/v\xA1\xA1/local-agents HTTP/1.1\r\nHost: h" + key + "\r\n\r\n"), 400));
  EXPECT_TRUE(IsError(raw("GET /database/k\xC3 HTTP/1.1\r\nHost: h" + key + "\r\n\r\n"), 400));
  EXPECT_TRUE(IsError(send("POST", "/database/k", "\xFF\xFE=1"), 400));
  EXPECT_TRUE(IsError(send("POST", "/database/k?\xE2\x98=1", "value=x"), 400));
  EXPECT_TRUE(IsError(send("POST", "/database/k", "value=x", with_key({{"Content-Type", "text/\xFF"}})), 415));
  // Messages shorten long values; the cut must fall between characters.
  for (std::size_t pad = 0; pad < 4; ++pad) {
    std::string path = "/" + std::string(pad, 'p');
    for (int i = 0; i < 60; ++i) path += "\xE2\x98\x8E";
    auto r = send("GET", path);
    EXPECT_TRUE(IsError(r, 404)) << pad;
    auto unknown = send("GET", "/database" + path + "/x");
    EXPECT_TRUE(IsError(unknown, 404)) << pad;
  }
}

TEST_F(ReferenceServer, OversizedHeadersAndBodiesAreRefused) {
  {
    RawConnection c("127.0.0.1", port());
    c.send(build_request("GET", "/api/v1/local-agents", with_key({{"X-Filler", std::string(9000, 'f')}})));
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_TRUE(IsError(*r, 431));
  }
  {
    RawConnection c("127.0.0.1", port());
    std::string body = "value=" + std::string(70 * 1024, 'b');
    c.send(build_request("POST", "/database/big", with_key({{"Content-Type", "application/x-www-form-urlencoded"}}), body));
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_TRUE(IsError(*r, 413));
  }
  // Just under the limit is fine.
  std::string body = "value=" + std::string(60 * 1024, 'b');
  EXPECT_EQ(send("POST", "/database/big", body).status, 200u);
  EXPECT_EQ(send("GET", "/database/big").json().at("value").as_string().size(), 60u * 1024);
}

TEST_F(ReferenceServer, ChunkedBodiesExpectContinueAndHttp10) {
  RawConnection c("127.0.0.1", port());
  c.send("POST /database/chunked HTTP/1.1\r\nHost: t\r\nApikey: " + std::string(kTestKey) +
         "\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
         "6\r\nvalue=\r\n5\r\nhello\r\n0\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->json().at("value"), "hello");

  RawConnection e("127.0.0.1", port());
  e.send("POST /database/expect HTTP/1.1\r\nHost: t\r\nApikey: " + std::string(kTestKey) +
         "\r\nContent-Type: application/x-www-form-urlencoded\r\nExpect: 100-continue\r\n"
         "Content-Length: 7\r\n\r\n");
  e.send("value=x");
  auto er = e.read_response();  // skips the interim 100
  ASSERT_TRUE(er);
  EXPECT_EQ(er->status, 200u);

  RawConnection old("127.0.0.1", port());
  old.send("GET /api/v1/local-agents/101 HTTP/1.0\r\nApikey: " + std::string(kTestKey) + "\r\n\r\n");
  auto o = old.read_response();
  ASSERT_TRUE(o);
  EXPECT_EQ(o->status, 200u);
  EXPECT_TRUE(old.closes_within(2s));
}

TEST_F(ReferenceServer, KeepAliveServesManyRequestsOnOneConnection) {
  RawConnection c("127.0.0.1", port());
  for (int i = 0; i < 200; ++i) {
    c.send(build_request("GET", "/api/v1/local-agents/101", with_key()));
    auto r = c.read_response();
    ASSERT_TRUE(r) << "request " << i;
    ASSERT_EQ(r->status, 200u);
    EXPECT_TRUE(r->keep_alive);
  }
  // Pipelined requests are answered in order.
  c.send(build_request("GET", "/api/v1/local-agents/101", with_key()) +
         build_request("GET", "/api/v1/local-agents/102", with_key()));
  EXPECT_EQ(c.read_response()->json().at("id"), "101");
  EXPECT_EQ(c.read_response()->json().at("id"), "102");
}

TEST_F(ReferenceServer, NeverAnswers5xxToOddInput) {
  const std::vector<std::string> targets{
      "/database/%00", "/database/" + std::string(4000, 'k'), "/channels/1/alias-numbers/tag?tag",
      "/channels/1/alias-numbers/tag?&&&=&", "/api/v1/local-agents/101?x=%", "/%2e%2e/etc/passwd",
      "/channels/%2F/alias-numbers", "/api/v1/local-agents/101/snooze/extra"};
  const std::vector<std::string> bodies{"", "=", "&&", "value", "value=%", "tag=%C3%28&minutes=1",
                                        "{", "\xFF\xFE", std::string(1000, '&')};
  for (const auto& t : targets)
    for (const char* m : {"GET", "POST", "PUT", "DELETE"})
      for (const auto& b : bodies) {
        auto r = send(m, t, b);
        EXPECT_GE(r.status, 200u) << m << " " << t << " body " << b;
        EXPECT_LT(r.status, 500u) << m << " " << t << " body " << b;
      }
}

TEST_F(ReferenceServer, ExactlyOneOfSixteenRacingConnectionsIsBound) {
  constexpr int kCallers = 16;
  for (int round = 0; round < 10; ++round) {
    auto tagged = send("POST", "/channels/1/alias-numbers/tag", "tag=race&minutes=5");
    ASSERT_EQ(tagged.status, 200u);
    const std::string id(tagged.json().at("id").as_string());
    std::vector<std::unique_ptr<RawConnection>> conns;
    for (int i = 0; i < kCallers; ++i) conns.push_back(std::make_unique<RawConnection>("127.0.0.1", port()));
    for (int i = 0; i < kCallers; ++i)
      conns[i]->send(build_request("POST", "/channels/1/alias-numbers/" + id + "/calls",
                                   with_key({{"Content-Type", "application/x-www-form-urlencoded"}}),
                                   "caller=c" + std::to_string(i)));
    int connected = 0, refused = 0;
    for (auto& c : conns) {
      auto r = c->read_response();
      ASSERT_TRUE(r);
      if (r->status == 200) ++connected;
      else if (IsError(*r, 403)) ++refused;
    }
    EXPECT_EQ(connected, 1) << "round " << round;
    EXPECT_EQ(refused, kCallers - 1) << "round " << round;
    ASSERT_EQ(send("DELETE", "/channels/1/alias-numbers/" + id + "/tag").status, 200u);
  }
}

// Many keep-alive connections on many threads hitting every endpoint at once:
// every request is answered, none with a 5xx (and the sanitizer builds see no race).
TEST_F(ReferenceServer, ManyConcurrentConnectionsMixedTraffic) {
  constexpr int kThreads = 16, kRequests = 150;
  std::atomic<int> answered{0}, server_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      RawConnection c("127.0.0.1", port());
      for (int i = 0; i < kRequests; ++i) {
        const auto& e = kEndpoints[(t + i) % std::size(kEndpoints)];
        std::string body = e.body;
        if (std::string_view(e.name) == "call") body = "caller=c" + std::to_string(t);
        c.send(build_request(e.method, e.target,
                             with_key({{"Content-Type", "application/x-www-form-urlencoded"}}), body));
        auto r = c.read_response();
        if (!r) return;
        ++answered;
        if (r->status >= 500) ++server_errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(answered.load(), kThreads * kRequests);
  EXPECT_EQ(server_errors.load(), 0);
}

TEST_F(ReferenceServer, StopsPromptlyWithIdleConnectionsOpen) {
  RawConnection idle("127.0.0.1", port());
  idle.send(build_request("GET", "/api/v1/local-agents", with_key()));
  ASSERT_TRUE(idle.read_response());
  auto t0 = std::chrono::steady_clock::now();
  server_->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_TRUE(idle.closes_within(1s));
}

// A minute of 500 ms: the tag of 2 minutes outlives the calls made right
// after it by a second, however slow a sanitized run on a loaded machine is.
class ReferenceServerShortMinute : public ServerFixture {
  void SetUp() override { start({}, 500ms); }
};

TEST_F(ReferenceServerShortMinute, TagsExpireAfterTheirMinutes) {
  auto tagged = send("POST", "/channels/1/alias-numbers/tag", "tag=short&minutes=2");
  const std::string id(tagged.json().at("id").as_string());
  const std::string calls = "/channels/1/alias-numbers/" + id + "/calls";
  ASSERT_EQ(send("POST", calls, "caller=first").status, 200u);
  EXPECT_TRUE(IsError(send("POST", calls, "caller=second"), 403));  // well within 1 s
  std::this_thread::sleep_for(1300ms);
  const auto list = send("GET", "/channels/1/alias-numbers").json();
  for (const auto& a : list.at("aliases").as_array())
    EXPECT_TRUE(a.at("tag").is_null());
  EXPECT_EQ(send("POST", calls, "caller=second").status, 200u);
}

TEST(ReferenceServerStandalone, ListensOnIpv6LoopbackAndReportsTheUrl) {
  reference::ServerConfig config;
  config.host = "::1";
  config.threads = 1;
  config.service.api_key = kTestKey;
  reference::Server server(config);
  try {
    server.start();
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  EXPECT_EQ(server.base_url(), "http://[::1]:" + std::to_string(server.port()));
  RawConnection c("::1", server.port());
  c.send(build_request("GET", "/api/v1/local-agents", {{"Apikey", kTestKey}}));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200u);
}

TEST(ReferenceServerStandalone, StartFailsClearlyWhenThePortIsTaken) {
  reference::ServerConfig config;
  config.service.api_key = kTestKey;
  config.threads = 1;
  reference::Server first(config);
  first.start();
  config.port = first.port();
  reference::Server second(config);
  try {
    second.start();
    FAIL() << "second server started on a taken port";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(first.port())), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crh::test
