// The preflight: which answers to its two reads (the agent list, the
// channel's aliases) are a user's mistake that stops the run, and which are a
// service's own answers, right or wrong, for the checks to judge. Each class
// is tried on a scripted target that answers by path.
#include "core/preflight.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "support/scripted_server.hpp"

namespace crh::core {
namespace {

using namespace std::chrono_literals;
using test::ScriptedServer;

struct Answer {
  std::string status, type, body, extra_headers;
};

std::string wire(const Answer& a) {
  return "HTTP/1.1 " + a.status + "\r\nContent-Type: " + a.type + "\r\n" + a.extra_headers +
         "Content-Length: " + std::to_string(a.body.size()) + "\r\nConnection: close\r\n\r\n" + a.body;
}

const Answer kAgents{"200 OK", "application/json", R"({"agents":[{"id":"101","state":"available"}]})", ""};
const Answer kAliases{"200 OK", "application/json", R"({"aliases":[{"id":"1","tag":null}]})", ""};
const Answer kNginx502{"502 Bad Gateway", "text/html",
                       "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad "
                       "Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
                       ""};
const Answer kHtml500{"500 Internal Server Error", "text/html; charset=utf-8",
                      "<!DOCTYPE html>\n<html><head><title>Error</title></head><body><pre>TypeError</pre></body></html>",
                      ""};
const Answer kPlain503{"503 Service Unavailable", "text/plain", "Service Unavailable\n", ""};
const Answer kNotFound{"404 Not Found", "application/json", R"({"msg":"no such route"})", ""};

// A target answering the agent list with `agents` and everything else with `aliases`.
struct Target2 {
  std::function<Answer(const std::string& head)> route;
  ScriptedServer* self = nullptr;
  ScriptedServer server{[this](int fd, const auto&) { ScriptedServer::write_all(fd, wire(route(self->last_head()))); }};
  Target2(Answer agents, Answer aliases)
      : route([=](const std::string& head) { return head.find("/local-agents") != std::string::npos ? agents : aliases; }) {
    self = &server;
  }
  Target target() const {
    Target t;
    std::string why;
    t.base = *parse_base_url("http://127.0.0.1:" + std::to_string(server.port()), why);
    t.api_key = "preflight-test-key-7c1a";
    return t;
  }
};

std::optional<PreflightStop> run(const Answer& agents, const Answer& aliases) {
  Target2 t(agents, aliases);
  return preflight(t.target(), ExpectedStatuses{}, 2000ms);
}

TEST(Preflight, ACorrectServiceGoesOn) {
  EXPECT_FALSE(run(kAgents, kAliases));
  EXPECT_FALSE(run({"200 OK", "application/json", "[]", ""}, kAliases)) << "an empty agent list is no mistake";
}

TEST(Preflight, WhatAWholeTargetAnswersWhenItIsNotTheServiceStops) {
  for (const auto& a : {kNginx502, kHtml500, kPlain503}) {
    const auto stop = run(a, a);
    ASSERT_TRUE(stop) << a.body;
    EXPECT_TRUE(stop->answered);
    EXPECT_NE(stop->line().find("HTTP " + a.status.substr(0, 3)), std::string::npos) << stop->line();
  }
}

TEST(Preflight, OneOddAnswerOfAServiceIsForTheChecksToJudge) {
  for (const auto& a : {kNginx502, kHtml500, kPlain503}) {
    EXPECT_FALSE(run(kAgents, a)) << "the aliases answered " << a.status << " " << a.type;
    EXPECT_FALSE(run(a, kAliases)) << "the agents answered " << a.status << " " << a.type;
  }
  // A wrong type under the list's own field is the service's bug, not a missing API.
  EXPECT_FALSE(run({"200 OK", "application/json", R"({"agents":"aaaa"})", ""},
                   {"200 OK", "application/json", R"({"aliases":"aaaa"})", ""}));
}

TEST(Preflight, ARedirectAwayStopsOnEitherRead) {
  for (const auto* where : {"https://127.0.0.1/x", "http://192.0.2.1:8080/x"}) {
    const Answer away{"302 Found", "text/html", "<html></html>", std::string("Location: ") + where + "\r\n"};
    EXPECT_TRUE(run(away, away)) << where;
    EXPECT_TRUE(run(kAgents, away)) << where;
  }
  const Answer to_self{"302 Found", "application/json", "{}", "Location: /elsewhere\r\n"};
  EXPECT_FALSE(run(kAgents, to_self)) << "a redirect to itself is the service's own answer";
}

TEST(Preflight, TheKeyChannelAndPathMistakesEachSayWhatToCheck) {
  const auto key = run({"401 Unauthorized", "application/json", R"({"msg":"bad key"})", ""}, kAliases);
  ASSERT_TRUE(key);
  EXPECT_NE(key->mistake.find("CRH_API_KEY"), std::string::npos) << key->mistake;
  EXPECT_NE(key->mistake.find("the right one too"), std::string::npos) << "a service refusing every key looks the same";
  const auto channel = run(kAgents, kNotFound);
  ASSERT_TRUE(channel);
  EXPECT_NE(channel->mistake.find("--channel"), std::string::npos) << channel->mistake;
  const auto path = run(kNotFound, kNotFound);
  ASSERT_TRUE(path);
  EXPECT_NE(path->mistake.find("--base-url"), std::string::npos) << path->mistake;
  const auto empty = run({"200 OK", "application/json", "{}", ""}, {"200 OK", "application/json", "{}", ""});
  ASSERT_TRUE(empty);
  EXPECT_NE(empty->mistake.find("list"), std::string::npos) << empty->mistake;
}

TEST(Preflight, AliasIdsUnderOtherNamesStopOnlyWhenAProfileNamedThem) {
  const Answer other_names{"200 OK", "application/json", R"({"numbers":[{"alias_uid":"a-1"}]})", ""};
  Target2 t(kAgents, other_names);
  auto target = t.target();
  EXPECT_FALSE(preflight(target, ExpectedStatuses{}, 2000ms)) << "the defaults: the checks read the ids leniently";
  target.dialect.fields.alias_id = {"alias_number_id"};
  const auto stop = preflight(target, ExpectedStatuses{}, 2000ms);
  ASSERT_TRUE(stop);
  EXPECT_NE(stop->mistake.find("--profile"), std::string::npos) << stop->mistake;
}

TEST(Preflight, NothingListeningIsUnreachableAndNeverShowsTheKey) {
  std::string url;
  {
    Target2 t(kAgents, kAliases);
    url = t.target().base.to_string();
  }
  Target t;
  std::string why;
  t.base = *parse_base_url(url, why);
  t.api_key = "preflight-test-key-7c1a";
  const auto stop = preflight(t, ExpectedStatuses{}, 2000ms);
  ASSERT_TRUE(stop);
  EXPECT_FALSE(stop->answered);
  EXPECT_EQ(stop->line().find(t.api_key), std::string::npos);
}

}  // namespace
}  // namespace crh::core
