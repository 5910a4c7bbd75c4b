// Each fault mode, started on its own server, breaks the one behaviour it
// names (and the same scenario holds on a healthy server). A fault mode
// without an entry here fails FaultModes.EveryFaultHasAScenario.
#include <set>

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
      {Fault::slow_tag,
       [](ServerFixture& f) {
         auto t0 = std::chrono::steady_clock::now();
         bool ok = !tag_alias(probe(f)).empty();
         return ok && std::chrono::steady_clock::now() - t0 >= 20ms;
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
