// Each fault mode, started on its own server, breaks the one behaviour it
// names (and the same scenario holds on a healthy server). A fault mode
// without an entry here fails FaultModes.EveryFaultHasAScenario.
#include <cstring>
#include <set>
#include <thread>

#include "server_fixture.hpp"
#include "support/naming.hpp"

namespace crh::test {
namespace {
using namespace std::chrono_literals;
using reference::Fault;

struct FaultScenario {
  Fault fault;
  // Returns true when the broken behaviour is observed on the server under test.
  std::function<bool(ServerFixture&)> broken;
};

// Gives a test body access to the fixture's protected helpers.
struct Probe : ServerFixture {
  using ServerFixture::port;
  using ServerFixture::send;
  using ServerFixture::start;
  using ServerFixture::with_key;
  void TestBody() override {}
};

Probe& probe(ServerFixture& f) { return static_cast<Probe&>(f); }

std::string tag_alias(Probe& p, const char* body = "tag=t&minutes=1440") {
  auto r = p.send("POST", "/channels/1/alias-numbers/tag", body);
  if (r.status != 200 || !r.json().is_object() || !r.json().as_object().contains("id")) return {};
  return std::string(r.json().at("id").as_string());
}

bool error_has_msg(const HttpResponse& r) { return IsError(r, r.status); }

// The agents list asked with the header `name: value` alone (none when the
// name is empty; no Apikey unless it is named) is answered 200.
bool agents_open(Probe& p, const std::string& name, const std::string& value, std::string_view query = "") {
  std::vector<Header> headers;
  if (!name.empty()) headers.push_back({name, value});
  return p.send("GET", "/api/v1/local-agents" + std::string(query), "", headers).status == 200;
}

// A request that keeps a server thread busy for milliseconds once its last
// byte comes: a database write with thousands of distinct form parameters.
// (The reference service answers it 200 and stores "busy" under "busy".)
std::string busy_request() {
  std::string body = "value=busy";
  for (int i = 0; body.size() < 60'000; ++i) body += "&p" + std::to_string(i) + "=1";
  return build_request("POST", "/database/busy",
                       Probe::with_key({{"Content-Type", "application/x-www-form-urlencoded"}}), body);
}

// All of `requests[i]` but its last byte goes to `conns[i]`.
void send_all_but_last(std::vector<std::unique_ptr<RawConnection>>& conns, const std::vector<std::string>& requests) {
  for (std::size_t i = 0; i < conns.size(); ++i)
    conns[i]->send(std::string_view(requests[i]).substr(0, requests[i].size() - 1));
}

// One race of `n` callers of a freshly tagged alias; returns how many
// connected, and deletes the tag. A window of one event-loop turn lets a
// second caller in only when its request is already queued on the same
// server thread. So two slow requests (the server deals connections to its
// two threads in turn: one each) are completed first and the callers' right
// after: while the threads are busy, the callers' requests pile up and are
// queued together when each thread is free again.
int race_once(Probe& p, int round, int n) {
  std::string alias = tag_alias(p);
  std::string calls = "/channels/1/alias-numbers/" + alias + "/calls";
  std::vector<std::unique_ptr<RawConnection>> conns;
  std::vector<std::string> requests;
  for (int i = 0; i < 2 + n; ++i) {
    conns.push_back(std::make_unique<RawConnection>("127.0.0.1", p.port()));
    requests.push_back(i < 2 ? busy_request()
                             : build_request("POST", calls,
                                             p.with_key({{"Content-Type", "application/x-www-form-urlencoded"}}),
                                             "caller=r" + std::to_string(round) + "c" + std::to_string(i)));
  }
  send_all_but_last(conns, requests);
  std::this_thread::sleep_for(20ms);  // time to read all that: only the last bytes are left
  for (std::size_t i = 0; i < conns.size(); ++i)
    conns[i]->send(std::string_view(requests[i]).substr(requests[i].size() - 1));
  int connected = 0;
  for (std::size_t i = 0; i < conns.size(); ++i) {
    auto r = conns[i]->read_response();
    connected += i >= 2 && r && r->status == 200;
  }
  p.send("DELETE", "/channels/1/alias-numbers/" + alias + "/tag");
  return connected;
}

const std::vector<FaultScenario>& scenarios() {
  static const std::vector<FaultScenario> all{
      {Fault::auth_missing_ok,
       [](ServerFixture& f) { return probe(f).send("GET", "/api/v1/local-agents", "", {}).status == 200; }},
      {Fault::auth_wrong_ok,
       [](ServerFixture& f) {
         return probe(f).send("GET", "/api/v1/local-agents", "", {{"Apikey", "wrong"}}).status == 200;
       }},
      {Fault::auth_skip_database,
       [](ServerFixture& f) {
         auto& p = probe(f);
         bool db_open = p.send("POST", "/database/k", "value=v", {}).status == 200;
         bool agents_closed = p.send("GET", "/api/v1/local-agents", "", {}).status == 401;
         return db_open && agents_closed;
       }},
      {Fault::rejected_write_applies,
       [](ServerFixture& f) {
         auto& p = probe(f);
         bool refused = p.send("POST", "/database/k", "value=sneaky", {{"Apikey", "wrong"}}).status == 401;
         auto r = p.send("GET", "/database/k");
         return refused && r.status == 200 && r.json().at("value") == "sneaky";
       }},
      {Fault::error_no_msg,
       [](ServerFixture& f) {
         auto r = probe(f).send("GET", "/api/v1/local-agents/999");
         return r.status == 404 && !error_has_msg(r);
       }},
      {Fault::error_status_200,
       [](ServerFixture& f) {
         auto r = probe(f).send("GET", "/api/v1/local-agents/999");
         return r.status == 200 && r.json().is_object() && r.json().as_object().contains("msg");
       }},
      {Fault::text_errors,
       [](ServerFixture& f) {
         auto r = probe(f).send("GET", "/nope");
         return r.status == 404 && r.header("content-type").rfind("text/plain", 0) == 0;
       }},
      {Fault::snooze_shape,
       [](ServerFixture& f) {
         auto& p = probe(f);
         auto r = p.send("PUT", "/api/v1/local-agents/101/snooze");
         bool snoozed = p.send("GET", "/api/v1/local-agents/101").json().at("state") == "snoozed";
         return r.status == 200 && r.json() == boost::json::parse(R"({"ok":true})") && snoozed;
       }},
      {Fault::lru_mru,
       [](ServerFixture& f) {
         auto& p = probe(f);
         std::string first = tag_alias(p);
         p.send("DELETE", "/channels/1/alias-numbers/" + first + "/tag");
         return tag_alias(p) == first;
       }},
      {Fault::tag_minutes_optional,
       [](ServerFixture& f) { return probe(f).send("POST", "/channels/1/alias-numbers/tag", "tag=t").status == 200; }},
      {Fault::binding_last_caller,
       [](ServerFixture& f) {
         auto& p = probe(f);
         std::string calls = "/channels/1/alias-numbers/" + tag_alias(p) + "/calls";
         p.send("POST", calls, "caller=first");
         return p.send("POST", calls, "caller=second").status == 200 &&
                p.send("POST", calls, "caller=first").status == 200;
       }},
      {Fault::binding_racy,
       [](ServerFixture& f) {
         // Eight callers sent back to back: every check lands inside the 5 ms yield.
         auto& p = probe(f);
         std::string calls = "/channels/1/alias-numbers/" + tag_alias(p) + "/calls";
         std::vector<std::unique_ptr<RawConnection>> conns;
         for (int i = 0; i < 8; ++i) conns.push_back(std::make_unique<RawConnection>("127.0.0.1", p.port()));
         for (int i = 0; i < 8; ++i)
           conns[i]->send(build_request("POST", calls,
                                        p.with_key({{"Content-Type", "application/x-www-form-urlencoded"}}),
                                        "caller=c" + std::to_string(i)));
         int connected = 0;
         for (auto& c : conns) {
           auto r = c->read_response();
           connected += r && r->status == 200;
         }
         return connected > 1;
       }},
      {Fault::expiry_never,
       [](ServerFixture& f) {
         auto& p = probe(f);
         std::string id = tag_alias(p, "tag=t&minutes=1");
         std::this_thread::sleep_for(150ms);  // the minute is 50 ms here
         auto list = p.send("GET", "/channels/1/alias-numbers").json().at("aliases").as_array();
         for (const auto& a : list)
           if (a.at("id") == id.c_str()) return a.at("tag") == "t";
         return false;
       }},
      {Fault::delete_tag_noop,
       [](ServerFixture& f) {
         auto& p = probe(f);
         std::string id = tag_alias(p);
         bool answered = p.send("DELETE", "/channels/1/alias-numbers/" + id + "/tag").status == 200;
         return answered && p.send("DELETE", "/channels/1/alias-numbers/" + id + "/tag").status == 200;
       }},
      {Fault::db_first_write_wins,
       [](ServerFixture& f) {
         auto& p = probe(f);
         p.send("POST", "/database/k", "value=first");
         bool answered = p.send("POST", "/database/k", "value=second").status == 200;
         return answered && p.send("GET", "/database/k").json().at("value") == "first";
       }},
      {Fault::auth_key_prefix,
       [](ServerFixture& f) {
         std::string truncated(kTestKey, std::strlen(kTestKey) - 1);
         return agents_open(probe(f), "Apikey", truncated) && agents_open(probe(f), "Apikey", truncated + "zz");
       }},
      {Fault::auth_key_case,
       [](ServerFixture& f) {
         std::string upper(kTestKey);
         for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
         return agents_open(probe(f), "Apikey", upper);
       }},
      {Fault::auth_key_query,
       [](ServerFixture& f) {
         return agents_open(probe(f), "", "", std::string("?apikey=") + kTestKey) &&
                agents_open(probe(f), "", "", std::string("?Apikey=") + kTestKey);
       }},
      {Fault::auth_key_bearer,
       [](ServerFixture& f) {
         return agents_open(probe(f), "Authorization", std::string("Bearer ") + kTestKey) &&
                agents_open(probe(f), "Authorization", kTestKey);
       }},
      {Fault::auth_key_cookie,
       [](ServerFixture& f) { return agents_open(probe(f), "Cookie", std::string("a=b; Apikey=") + kTestKey); }},
      {Fault::wake_types,
       [](ServerFixture& f) {
         auto& p = probe(f);
         auto single = p.send("GET", "/api/v1/local-agents/101").json();
         auto woken = p.send("PUT", "/api/v1/local-agents/101/wake").json();
         return single.at("id").is_string() && woken.is_object() && woken.at("id").is_number();
       }},
      {Fault::binding_per_tag_name,
       [](ServerFixture& f) {
         // Two live aliases with the same tag name: binding one must not lock the other.
         auto& p = probe(f);
         std::string a = tag_alias(p, "tag=x&minutes=1440"), b = tag_alias(p, "tag=x&minutes=1440");
         p.send("POST", "/channels/1/alias-numbers/" + a + "/calls", "caller=first");
         return p.send("POST", "/channels/1/alias-numbers/" + b + "/calls", "caller=second").status == 403 &&
                p.send("POST", "/channels/1/alias-numbers/" + b + "/calls", "caller=first").status == 200;
       }},
      {Fault::expiry_sliding,
       [](ServerFixture& f) {
         // A 4-minute tag (200 ms here) called every 10 ms for 2.5 lifetimes:
         // a healthy server ended it 300 ms ago; a sliding lifetime survives
         // any pause of the calls shorter than the lifetime.
         auto& p = probe(f);
         std::string id = tag_alias(p, "tag=t&minutes=4");
         const auto end = std::chrono::steady_clock::now() + 500ms;
         while (std::chrono::steady_clock::now() < end) {
           p.send("POST", "/channels/1/alias-numbers/" + id + "/calls", "caller=first");
           std::this_thread::sleep_for(10ms);
         }
         auto list = p.send("GET", "/channels/1/alias-numbers").json().at("aliases").as_array();
         for (const auto& a : list)
           if (a.at("id") == id.c_str()) return a.at("tag") == "t";
         return false;
       }},
      {Fault::binding_survives_retag,
       [](ServerFixture& f) {
         // One alias: tag, bind "first", delete, tag again; "second" is the
         // new tag's first caller and must connect on a healthy server.
         auto& p = probe(f);
         std::string id = tag_alias(p);
         p.send("POST", "/channels/1/alias-numbers/" + id + "/calls", "caller=first");
         p.send("DELETE", "/channels/1/alias-numbers/" + id + "/tag");
         std::string again;
         for (int i = 0; i < 4 && again != id; ++i) again = tag_alias(p);
         return again == id &&
                p.send("POST", "/channels/1/alias-numbers/" + id + "/calls", "caller=second").status == 403;
       }},
      {Fault::binding_racy_turn,
       [](ServerFixture& f) {
         // Most rounds show it (about 9 in 10 here), but a loaded machine may
         // spread the callers' arrivals: race until two callers connect, up
         // to 30 rounds. A healthy server never lets two connect.
         for (int round = 0; round < 30; ++round)
           if (race_once(probe(f), round, 8) > 1) return true;
         return false;
       }},
      {Fault::crash_unknown_wake,
       [](ServerFixture& f) {
         // No answer at all: the connection ends with nothing read (a healthy server answers 404).
         RawConnection c("127.0.0.1", probe(f).port());
         c.send(build_request("PUT", "/api/v1/local-agents/no-such-agent/wake", Probe::with_key(), ""));
         return !c.read_response(2s);
       }},
      {Fault::slow_tag,
       [](ServerFixture& f) {
         // The fastest of three tags: the fault's timer makes each one late,
         // while a busy machine (ThreadSanitizer in CI, ci23) can hold one
         // healthy tag past 20 ms, hardly three in a row.
         auto fastest = std::chrono::steady_clock::duration::max();
         for (int i = 0; i < 3; ++i) {
           const auto t0 = std::chrono::steady_clock::now();
           if (tag_alias(probe(f)).empty()) return false;
           fastest = std::min(fastest, std::chrono::steady_clock::now() - t0);
         }
         return fastest >= 20ms;
       }},
  };
  return all;
}

std::string name_of(Fault f) {
  for (const auto& info : reference::all_faults())
    if (info.fault == f) return std::string(info.name);
  return "?";
}

TEST(FaultModes, EveryFaultHasAScenario) {
  std::set<Fault> covered;
  for (const auto& s : scenarios()) covered.insert(s.fault);
  for (const auto& info : reference::all_faults())
    EXPECT_TRUE(covered.count(info.fault)) << "no scenario for fault " << info.name;
}

TEST(FaultModes, NamesRoundTrip) {
  for (const auto& info : reference::all_faults()) {
    EXPECT_EQ(reference::fault_by_name(info.name), info.fault);
    EXPECT_FALSE(info.description.empty());
  }
  EXPECT_FALSE(reference::fault_by_name("no-such-fault"));
}

// `crh serve --delay-us`: every answer comes the delay later, and the wait is
// a timer, so one server thread answers many delayed requests at once.
struct DelayedServer {
  explicit DelayedServer(std::chrono::microseconds delay) {
    reference::ServerConfig config;
    config.threads = 1;
    config.service.api_key = kTestKey;
    config.answer_delay = delay;
    server = std::make_unique<reference::Server>(std::move(config));
    server->start();
  }
  std::unique_ptr<reference::Server> server;
};

TEST(AnswerDelay, AGetIsAnsweredAtLeastTheDelayLater) {
  DelayedServer s(30'000us);
  RawConnection c("127.0.0.1", s.server->port());
  for (int i = 0; i < 3; ++i) {  // every answer on a kept connection, not only the first
    auto t0 = std::chrono::steady_clock::now();
    c.send(build_request("GET", "/api/v1/local-agents", Probe::with_key()));
    auto r = c.read_response();
    auto elapsed = std::chrono::steady_clock::now() - t0;
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200u);
    EXPECT_GE(elapsed, 30'000us) << "answer " << i;
  }
}

TEST(AnswerDelay, TheWaitDoesNotHoldTheThread) {
  DelayedServer s(100ms);
  std::vector<std::unique_ptr<RawConnection>> conns;
  for (int i = 0; i < 8; ++i) conns.push_back(std::make_unique<RawConnection>("127.0.0.1", s.server->port()));
  auto t0 = std::chrono::steady_clock::now();
  for (auto& c : conns) c->send(build_request("GET", "/api/v1/local-agents", Probe::with_key()));
  for (auto& c : conns) {
    auto r = c->read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200u);
  }
  auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(elapsed, 100ms);
  // One thread that slept through each delay in turn would take 800 ms.
  EXPECT_LT(elapsed, 400ms);
}

TEST(AnswerDelay, NoneByDefault) { EXPECT_EQ(reference::ServerConfig{}.answer_delay.count(), 0); }

// `crh serve --bind-window-us`: the first call to pass the check binds its
// caller only when the window closes; every call checked before then passes
// too, and none after it.
struct WindowedServer {
  explicit WindowedServer(std::chrono::microseconds window) {
    reference::ServerConfig config;
    config.threads = 1;
    config.service.api_key = kTestKey;
    config.service.bind_window = window;
    server = std::make_unique<reference::Server>(std::move(config));
    server->start();
  }
  HttpResponse call(RawConnection& c, const std::string& alias, const std::string& caller) {
    c.send(build_request("POST", "/channels/1/alias-numbers/" + alias + "/calls",
                         {{"Apikey", kTestKey}, {"Content-Type", "application/x-www-form-urlencoded"}},
                         "caller=" + caller));
    auto r = c.read_response();
    return r ? *r : HttpResponse{};
  }
  std::string tag() {
    RawConnection c("127.0.0.1", server->port());
    c.send(build_request("POST", "/channels/1/alias-numbers/tag",
                         {{"Apikey", kTestKey}, {"Content-Type", "application/x-www-form-urlencoded"}},
                         "tag=t&minutes=1440"));
    auto r = c.read_response();
    return r && r->status == 200 ? std::string(r->json().at("id").as_string()) : std::string();
  }
  std::unique_ptr<reference::Server> server;
};

TEST(BindWindow, CallsInsideTheWindowConnectTooAndNoneAfterIt) {
  WindowedServer s(300ms);
  const std::string alias = s.tag();
  ASSERT_FALSE(alias.empty());
  RawConnection first("127.0.0.1", s.server->port()), second("127.0.0.1", s.server->port());
  const auto t0 = std::chrono::steady_clock::now();
  first.send(build_request("POST", "/channels/1/alias-numbers/" + alias + "/calls",
                           {{"Apikey", kTestKey}, {"Content-Type", "application/x-www-form-urlencoded"}},
                           "caller=first"));
  std::this_thread::sleep_for(20ms);  // well inside the window
  EXPECT_EQ(s.call(second, alias, "second").status, 200u) << "a check inside the window passes";
  auto a = first.read_response();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 200u);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms) << "the first is answered once its bind has landed";
  RawConnection third("127.0.0.1", s.server->port());
  EXPECT_EQ(s.call(third, alias, "third").status, 403u) << "after the window the first caller holds the alias";
  EXPECT_EQ(s.call(first, alias, "first").status, 200u) << "and may call again";
}

TEST(BindWindow, ASecondCallerAfterTheWindowIsRefusedWithoutAnyCallBetween) {
  WindowedServer s(1ms);
  const std::string alias = s.tag();
  ASSERT_FALSE(alias.empty());
  RawConnection c("127.0.0.1", s.server->port());
  EXPECT_EQ(s.call(c, alias, "first").status, 200u);
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(s.call(c, alias, "second").status, 403u);
}

TEST(BindWindow, NoneByDefault) { EXPECT_EQ(reference::ServiceConfig{}.bind_window.count(), 0); }

void PrintTo(const FaultScenario& s, std::ostream* os) { *os << name_of(s.fault); }

class FaultModeTest : public ::testing::TestWithParam<FaultScenario> {};

TEST_P(FaultModeTest, BreaksItsBehaviourAndOnlyWithTheFault) {
  const auto& scenario = GetParam();
  {
    Probe healthy;
    healthy.start({}, 50ms);
    EXPECT_FALSE(scenario.broken(healthy)) << "a healthy server already shows the broken behaviour";
  }
  reference::FaultSet faults;
  faults.add(scenario.fault);
  Probe faulty;
  faulty.start(faults, 50ms);
  EXPECT_TRUE(scenario.broken(faulty)) << "fault " << name_of(scenario.fault) << " had no effect";
}

INSTANTIATE_TEST_SUITE_P(Each, FaultModeTest, ::testing::ValuesIn(scenarios()),
                         [](const auto& info) { return camel_case(name_of(info.param.fault)); });

}  // namespace
}  // namespace crh::test
