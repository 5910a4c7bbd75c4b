// The core HTTP client against the reference service and against a server
// that misbehaves on purpose: every failure is a TransportError with a
// sentence, within the deadline, never a hang or a crash.
#include "core/http_client.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

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
  std::atomic<bool> saw_prefix{false};
  ScriptedServer server([&](int fd, const auto&) {
    ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
  });
  BaseUrl base = loopback(server.port());
  base.path_prefix = "/prefix";
  HttpClient client(base);
  auto ex = client.send(get("/x"));
  ASSERT_TRUE(ex.answered());
  EXPECT_EQ(ex.response->body, "{}");
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

}  // namespace
}  // namespace crh::core
