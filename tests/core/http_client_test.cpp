// The core HTTP client against the reference service and against a server
// that misbehaves on purpose: every failure is a TransportError with a
// sentence, within the deadline, never a hang or a crash.
#include "core/http_client.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "reference/server.hpp"
#include "support/naming.hpp"
#include "support/scripted_server.hpp"

namespace crh::core {
namespace {
using namespace std::chrono_literals;
using test::ScriptedServer;

BaseUrl loopback(unsigned short port) { return BaseUrl{"127.0.0.1", std::to_string(port), ""}; }

HttpRequest get(std::string target) { return HttpRequest{"GET", std::move(target), {{"Apikey", "k"}}, ""}; }

TEST(HttpClient, TalksToTheReferenceServiceOverKeepAlive) {
  reference::ServerConfig config;
  config.threads = 1;
  config.service.api_key = "k";
  reference::Server server(config);
  server.start();
  HttpClient client(loopback(server.port()));
  for (int i = 0; i < 3; ++i) {
    auto ex = client.send(get("/api/v1/local-agents/101"));
    ASSERT_TRUE(ex.answered()) << ex.error_detail;
    EXPECT_EQ(ex.response->status, 200u);
    EXPECT_EQ(ex.response->header("content-type"), "application/json");
    EXPECT_NE(ex.response->body.find("\"101\""), std::string::npos);
  }
  auto post = client.send({"POST", "/database/k", {{"Apikey", "k"}, {"Content-Type", "application/x-www-form-urlencoded"}}, "value=v"});
  ASSERT_TRUE(post.answered());
  EXPECT_EQ(post.response->status, 200u);
  auto empty_post = client.send({"POST", "/database/k", {{"Apikey", "k"}}, ""});
  ASSERT_TRUE(empty_post.answered());
  EXPECT_EQ(empty_post.response->status, 400u);
}

TEST(HttpClient, PrefixesTheBasePath) {
  ScriptedServer server([&](int fd, const auto&) {
    ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
  });
  BaseUrl base = loopback(server.port());
  base.path_prefix = "/prefix";
  HttpClient client(base);
  auto ex = client.send(get("/x"));
  ASSERT_TRUE(ex.answered());
  EXPECT_EQ(ex.response->body, "{}");
  const std::string head = server.last_head();
  EXPECT_EQ(head.substr(0, head.find("\r\n")), "GET /prefix/x HTTP/1.1") << head;
}

TEST(HttpClient, RefusedConnectionIsConnectFailed) {
  unsigned short port;
  {
    ScriptedServer closed([](int, const auto&) {});
    port = closed.port();
  }
  HttpClient client(loopback(port), {1000ms});
  auto ex = client.send(get("/"));
  EXPECT_FALSE(ex.answered());
  EXPECT_EQ(ex.error, TransportError::connect_failed);
  EXPECT_NE(ex.error_detail.find(std::to_string(port)), std::string::npos) << ex.error_detail;
}

struct Hostile {
  const char* name;
  ScriptedServer::Behaviour behaviour;
  TransportError expected;
};

std::string big(std::size_t n) { return std::string(n, 'x'); }

const Hostile kHostile[] = {
    {"garbage", [](int fd, const auto&) { ScriptedServer::write_all(fd, "\x01\x02garbage\r\n\r\n"); },
     TransportError::malformed},
    {"bad-status-line", [](int fd, const auto&) { ScriptedServer::write_all(fd, "HTTP/1.1 abc OK\r\n\r\n"); },
     TransportError::malformed},
    {"two-megabyte-body",
     [](int fd, const auto&) {
       ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2097152\r\n\r\n" + big(2097152));
     },
     TransportError::too_large},
    {"endless-chunked-body",
     [](int fd, const std::atomic<bool>& stopping) {
       ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
       const std::string chunk = "1000\r\n" + big(4096) + "\r\n";
       for (int i = 0; i < 5000 && !stopping; ++i)
         if (!ScriptedServer::write_all(fd, chunk)) break;
     },
     TransportError::too_large},
    {"huge-headers",
     [](int fd, const auto&) {
       ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nX-Big: " + big(100000) + "\r\nContent-Length: 0\r\n\r\n");
     },
     TransportError::too_large},
    {"stall",
     [](int, const std::atomic<bool>& stopping) {
       for (int i = 0; i < 300 && !stopping; ++i) std::this_thread::sleep_for(10ms);
     },
     TransportError::timeout},
    {"stall-mid-body",
     [](int fd, const std::atomic<bool>& stopping) {
       ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\":");
       for (int i = 0; i < 300 && !stopping; ++i) std::this_thread::sleep_for(10ms);
     },
     TransportError::timeout},
    {"close-before-answer", [](int, const auto&) {}, TransportError::reset},
    {"reset-before-answer", [](int fd, const auto&) { ScriptedServer::reset_on_close(fd); },
     TransportError::reset},
    {"short-body-then-close",
     [](int fd, const auto&) { ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"); },
     TransportError::reset},
    {"unrequested-switching-protocols",
     [](int fd, const auto&) {
       ScriptedServer::write_all(fd, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
                                     "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
     },
     TransportError::malformed},
};

void PrintTo(const Hostile& h, std::ostream* os) { *os << h.name; }

class HostileServer : public ::testing::TestWithParam<Hostile> {};

TEST_P(HostileServer, GivesATransportErrorWithinTheDeadline) {
  const auto& h = GetParam();
  ScriptedServer server(h.behaviour);
  ClientConfig config;
  config.timeout = 500ms;
  config.body_limit = 1u << 20;
  HttpClient client(loopback(server.port()), config);
  auto t0 = std::chrono::steady_clock::now();
  auto ex = client.send(get("/api/v1/local-agents"));
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_FALSE(ex.answered()) << "status " << (ex.response ? ex.response->status : 0);
  EXPECT_EQ(ex.error, h.expected) << "got " << to_string(ex.error) << ": " << ex.error_detail;
  EXPECT_FALSE(ex.error_detail.empty());
  EXPECT_LT(took, 2s) << "the deadline was 500 ms";
}

INSTANTIATE_TEST_SUITE_P(Each, HostileServer, ::testing::ValuesIn(kHostile),
                         [](const auto& info) { return test::camel_case(info.param.name); });

TEST(HttpClient, RecoversOnANewConnectionAfterAnError) {
  std::atomic<int> served{0};
  ScriptedServer server([&](int fd, const auto&) {
    if (served++ == 0) ScriptedServer::write_all(fd, "garbage\r\n\r\n");
    else ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
  });
  HttpClient client(loopback(server.port()), {500ms});
  EXPECT_FALSE(client.send(get("/")).answered());
  auto second = client.send(get("/"));
  ASSERT_TRUE(second.answered()) << second.error_detail;
  EXPECT_EQ(second.response->body, "ok");
}

// Interim answers (RFC 9110 §15.2): skipped, never taken for the answer, and
// the answer after them still belongs to its own request.

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

TEST(HttpClient, SkipsAContinueAndKeepsLaterAnswersOnTheirRequests) {
  ScriptedServer server([](int fd, const std::atomic<bool>& stopping) {
    ScriptedServer::write_all(fd, kContinue);
    std::this_thread::sleep_for(20ms);  // the final answer in a read of its own
    ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst");
    if (ScriptedServer::read_head(fd, stopping).empty()) return;
    ScriptedServer::write_all(fd, "HTTP/1.1 201 Created\r\nContent-Length: 6\r\n\r\nsecond");
  });
  HttpClient client(loopback(server.port()), {2000ms});
  auto first = client.send(get("/one"));
  ASSERT_TRUE(first.answered()) << first.error_detail;
  EXPECT_EQ(first.response->status, 200u);
  EXPECT_EQ(first.response->body, "first");
  // Same connection (a new one would start with a 100 and "first" again).
  auto second = client.send(get("/two"));
  ASSERT_TRUE(second.answered()) << second.error_detail;
  EXPECT_EQ(second.response->status, 201u);
  EXPECT_EQ(second.response->body, "second");
}

TEST(HttpClient, SkipsEarlyHintsAndKeepsOnlyTheFinalHeaders) {
  ScriptedServer server([](int fd, const auto&) {
    ScriptedServer::write_all(fd,
                              "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n"
                              "Link: </app.js>; rel=preload; as=script\r\n\r\n"
                              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  });
  HttpClient client(loopback(server.port()), {2000ms});
  auto ex = client.send(get("/"));
  ASSERT_TRUE(ex.answered()) << ex.error_detail;
  EXPECT_EQ(ex.response->status, 200u);
  EXPECT_EQ(ex.response->body, "{}");
  EXPECT_EQ(ex.response->header("content-type"), "application/json");
  EXPECT_EQ(ex.response->header("link"), "") << "headers of an interim answer are not the answer's";
}

TEST(HttpClient, SkipsSeveralInterimAnswers) {
  ScriptedServer server([](int fd, const auto&) {
    ScriptedServer::write_all(fd, std::string(kContinue) + "HTTP/1.1 102 Processing\r\n\r\n");
    std::this_thread::sleep_for(10ms);
    ScriptedServer::write_all(fd, "HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
                                  "HTTP/1.1 404 Not Found\r\nContent-Length: 12\r\n\r\n{\"msg\":\"no\"}");
  });
  HttpClient client(loopback(server.port()), {2000ms});
  auto ex = client.send(get("/"));
  ASSERT_TRUE(ex.answered()) << ex.error_detail;
  EXPECT_EQ(ex.response->status, 404u);
  EXPECT_EQ(ex.response->body, "{\"msg\":\"no\"}");
}

// A target that only ever says "100 Continue" must cost at most the deadline.
void expect_error_within_the_deadline(ScriptedServer::Behaviour endless) {
  ScriptedServer server(std::move(endless));
  ClientConfig config;
  config.timeout = 500ms;
  HttpClient client(loopback(server.port()), config);
  auto t0 = std::chrono::steady_clock::now();
  auto ex = client.send(get("/"));
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_FALSE(ex.answered()) << "status " << ex.response->status;
  EXPECT_TRUE(ex.error == TransportError::malformed || ex.error == TransportError::timeout)
      << to_string(ex.error) << ": " << ex.error_detail;
  EXPECT_FALSE(ex.error_detail.empty());
  EXPECT_LT(took, 5s) << "a hang guard: the deadline was 500 ms";
}

TEST(HttpClient, EndlessContinuesEndInAnError) {
  expect_error_within_the_deadline([](int fd, const std::atomic<bool>& stopping) {
    while (!stopping && ScriptedServer::write_all(fd, kContinue)) {
    }
  });
}

TEST(HttpClient, AContinueEvery50MsForeverEndsInAnError) {
  expect_error_within_the_deadline([](int fd, const std::atomic<bool>& stopping) {
    while (!stopping && ScriptedServer::write_all(fd, kContinue)) std::this_thread::sleep_for(50ms);
  });
}

TEST(HttpClient, NamesTheCapOnInterimAnswers) {
  ScriptedServer server([](int fd, const auto&) {
    std::string many;
    for (int i = 0; i < 40; ++i) many += kContinue;
    ScriptedServer::write_all(fd, many + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  });
  HttpClient client(loopback(server.port()), {2000ms});
  auto ex = client.send(get("/"));
  EXPECT_FALSE(ex.answered());
  EXPECT_EQ(ex.error, TransportError::malformed) << ex.error_detail;
  EXPECT_NE(ex.error_detail.find("interim 1xx answers before the final one"), std::string::npos) << ex.error_detail;
}

TEST(HttpClient, PassesASwitchingProtocolsItAskedFor) {
  ScriptedServer server([](int fd, const auto&) {
    ScriptedServer::write_all(fd,
                              "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
  });
  HttpClient client(loopback(server.port()), {2000ms});
  auto ex = client.send({"GET", "/", {{"Upgrade", "websocket"}, {"Connection", "Upgrade"}}, ""});
  ASSERT_TRUE(ex.answered()) << ex.error_detail;
  EXPECT_EQ(ex.response->status, 101u);
}

// Cancellation (ClientConfig::cancel): Ctrl-C must end an exchange long
// before its deadline, and stop the ones after it from starting.

constexpr std::string_view kCancelledDetail = "cancelled: the run was interrupted";

// Sets `flag` after `delay` on a thread of its own.
class SetLater {
 public:
  SetLater(std::atomic<bool>& flag, std::chrono::milliseconds delay)
      : thread_([&flag, delay] {
          std::this_thread::sleep_for(delay);
          flag = true;
        }) {}
  ~SetLater() { thread_.join(); }

 private:
  std::thread thread_;
};

void never_answer(int, const std::atomic<bool>& stopping) {
  while (!stopping) std::this_thread::sleep_for(10ms);
}

TEST(HttpClient, ACancelEndsAnExchangeThatNeverAnswers) {
  ScriptedServer server(never_answer);
  std::atomic<bool> cancel{false};
  ClientConfig config;
  config.timeout = 10s;
  config.cancel = &cancel;
  HttpClient client(loopback(server.port()), config);
  auto t0 = std::chrono::steady_clock::now();
  Exchange ex;
  {
    SetLater later(cancel, 200ms);
    ex = client.send(get("/api/v1/local-agents"));
  }
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_FALSE(ex.answered());
  EXPECT_EQ(ex.error, TransportError::timeout) << to_string(ex.error) << ": " << ex.error_detail;
  EXPECT_EQ(ex.error_detail, kCancelledDetail);
  EXPECT_GE(took, 190ms) << "ended before the cancel";
  // A cancel takes effect within ~100 ms; 3 s is a hang guard (the deadline is 10 s).
  EXPECT_LT(took, 3s) << "the cancel came after 200 ms";

  // Later exchanges fail at once.
  auto t1 = std::chrono::steady_clock::now();
  auto later = client.send(get("/"));
  EXPECT_LT(std::chrono::steady_clock::now() - t1, 500ms);
  EXPECT_EQ(later.error, TransportError::timeout);
  EXPECT_EQ(later.error_detail, kCancelledDetail);
}

TEST(HttpClient, ACancelSetBeforehandFailsAtOnceWithoutConnecting) {
  // A bare listening socket that never accepts: the kernel queues any
  // connection, which then shows as readable.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);

  std::atomic<bool> cancel{true};
  ClientConfig config;
  config.timeout = 10s;
  config.cancel = &cancel;
  HttpClient client(loopback(ntohs(addr.sin_port)), config);
  auto t0 = std::chrono::steady_clock::now();
  auto ex = client.send(get("/"));
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_FALSE(ex.answered());
  EXPECT_EQ(ex.error, TransportError::timeout) << to_string(ex.error) << ": " << ex.error_detail;
  EXPECT_EQ(ex.error_detail, kCancelledDetail);
  EXPECT_LT(took, 500ms);

  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 200), 0) << "the client connected although it was cancelled";
  ::close(fd);
}

TEST(HttpClient, AnUnsetCancelFlagChangesNothing) {
  reference::ServerConfig rconfig;
  rconfig.threads = 1;
  rconfig.service.api_key = "k";
  reference::Server server(rconfig);
  server.start();
  std::atomic<bool> cancel{false};
  ClientConfig config;
  config.cancel = &cancel;
  HttpClient client(loopback(server.port()), config);
  for (int i = 0; i < 3; ++i) {
    auto ex = client.send(get("/api/v1/local-agents/101"));
    ASSERT_TRUE(ex.answered()) << ex.error_detail;
    EXPECT_EQ(ex.response->status, 200u);
    EXPECT_NE(ex.response->body.find("\"101\""), std::string::npos);
  }
  auto post = client.send({"POST", "/database/k", {{"Apikey", "k"}, {"Content-Type", "application/x-www-form-urlencoded"}}, "value=v"});
  ASSERT_TRUE(post.answered()) << post.error_detail;
  EXPECT_EQ(post.response->status, 200u);
}

TEST(HttpClient, AnUnsetCancelFlagKeepsTheDeadline) {
  ScriptedServer server(never_answer);
  std::atomic<bool> cancel{false};
  ClientConfig config;
  config.timeout = 300ms;
  config.cancel = &cancel;
  HttpClient client(loopback(server.port()), config);
  auto t0 = std::chrono::steady_clock::now();
  auto ex = client.send(get("/"));
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(ex.error, TransportError::timeout);
  EXPECT_EQ(ex.error_detail, "no complete answer within 300 ms");
  EXPECT_GE(took, 290ms);
  EXPECT_LT(took, 2s);
}

TEST(HttpClient, ACancelDropsTheConnection) {
  std::atomic<int> connections{0};
  ScriptedServer server([&](int fd, const std::atomic<bool>& stopping) {
    if (connections++ == 0) {
      // Stall until the client goes away (or the test ends).
      while (!stopping) {
        pollfd p{fd, POLLIN, 0};
        char c;
        if (::poll(&p, 1, 10) > 0 && ::recv(fd, &c, 1, MSG_PEEK) <= 0) break;
      }
      return;
    }
    ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  });
  std::atomic<bool> cancel{false};
  ClientConfig config;
  config.timeout = 10s;
  config.cancel = &cancel;
  HttpClient client(loopback(server.port()), config);
  {
    SetLater later(cancel, 100ms);
    auto ex = client.send(get("/"));
    EXPECT_EQ(ex.error_detail, kCancelledDetail);
  }
  cancel = false;  // a new run with the same client
  auto again = client.send(get("/"));
  ASSERT_TRUE(again.answered()) << again.error_detail;
  EXPECT_EQ(again.response->body, "ok");
  EXPECT_EQ(connections.load(), 2) << "the cancelled connection must not be reused";
}

// Bytes no request asked for (issue 22, item 6a): a peer that answers 204 and
// at once an unsolicited 200 must not have its 200 taken as the next request's
// answer. The exchange fails, the connection is closed, the next is fresh.
TEST(HttpClient, BytesAfterAWholeAnswerFailTheExchangeAndCloseTheConnection) {
  std::atomic<int> connections{0};
  ScriptedServer server([&](int fd, const auto&) {
    if (connections++ == 0)
      ScriptedServer::write_all(fd, "HTTP/1.1 204 No Content\r\n\r\n"
                                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    else ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  });
  HttpClient client(loopback(server.port()), {2000ms});
  auto first = client.send(get("/"));
  EXPECT_FALSE(first.answered()) << "a 204 followed by an answer nobody asked for was taken as the answer";
  EXPECT_EQ(first.error, TransportError::malformed);
  EXPECT_NE(first.error_detail.find("HTTP 204"), std::string::npos) << first.error_detail;
  EXPECT_NE(first.error_detail.find("no request asked for"), std::string::npos) << first.error_detail;
  auto second = client.send(get("/"));
  ASSERT_TRUE(second.answered()) << second.error_detail;
  EXPECT_EQ(second.response->body, "ok");
  EXPECT_EQ(connections.load(), 2) << "the connection with the unsolicited bytes must be closed";
}

TEST(HttpClient, BytesArrivingWhileNoRequestWaitsFailTheNextExchangeUnsent) {
  std::atomic<int> connections{0}, requests_on_first{0};
  ScriptedServer server([&](int fd, const std::atomic<bool>& stopping) {
    if (connections++ > 0) {
      ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      return;
    }
    ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst");
    std::this_thread::sleep_for(20ms);  // the client has read the whole answer by now
    ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
    if (!ScriptedServer::read_head(fd, stopping).empty()) ++requests_on_first;
  });
  HttpClient client(loopback(server.port()), {2000ms});
  auto first = client.send(get("/one"));
  ASSERT_TRUE(first.answered()) << first.error_detail;
  EXPECT_EQ(first.response->body, "first");
  std::this_thread::sleep_for(200ms);
  auto second = client.send(get("/two"));
  EXPECT_FALSE(second.answered()) << "the unsolicited 200 was taken as the answer to /two";
  EXPECT_EQ(second.error, TransportError::malformed);
  EXPECT_NE(second.error_detail.find("while no request was waiting"), std::string::npos) << second.error_detail;
  auto third = client.send(get("/three"));
  ASSERT_TRUE(third.answered()) << third.error_detail;
  EXPECT_EQ(third.response->body, "ok");
  EXPECT_EQ(requests_on_first.load(), 0) << "a request was written on the connection after the unsolicited bytes";
  EXPECT_EQ(connections.load(), 2);
}

TEST(HttpClient, A408BeforeAnIdleCloseOnlyReconnects) {
  std::atomic<int> connections{0};
  ScriptedServer server([&](int fd, const auto&) {
    if (connections++ > 0) {
      ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      return;
    }
    ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst");
    std::this_thread::sleep_for(20ms);
    ScriptedServer::write_all(fd, "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });
  HttpClient client(loopback(server.port()), {2000ms});
  ASSERT_TRUE(client.send(get("/one")).answered());
  std::this_thread::sleep_for(200ms);
  auto second = client.send(get("/two"));
  ASSERT_TRUE(second.answered()) << second.error_detail;
  EXPECT_EQ(second.response->body, "ok");
}

TEST(HttpClient, AKeptConnectionTheServerClosedWhileIdleIsReplacedNotLost) {
  // The first connection answers and is then closed by the server (its idle
  // timeout); a POST sent later must go on a new connection, not be written
  // into the closed one and lost unanswered.
  std::atomic<int> connections{0};
  ScriptedServer server([&](int fd, const auto&) {
    const bool first = connections++ == 0;
    ScriptedServer::write_all(fd, first ? "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
                                        : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  });
  HttpClient client(loopback(server.port()), {2000ms});
  ASSERT_TRUE(client.send(get("/one")).answered());
  std::this_thread::sleep_for(200ms);  // the server's close reaches the client
  HttpRequest post{"POST", "/database/k", {{"Content-Type", "application/x-www-form-urlencoded"}}, "value=v"};
  auto second = client.send(post);
  ASSERT_TRUE(second.answered()) << second.error_detail;
  EXPECT_EQ(second.response->body, "ok");
  EXPECT_EQ(connections.load(), 2);
}

}  // namespace
}  // namespace crh::core
