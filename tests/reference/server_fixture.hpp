// Starts the reference service in-process on an ephemeral loopback port and
// talks to it over real sockets (one connection per request unless asked).
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory>

#include "reference/server.hpp"
#include "support/raw_http.hpp"

namespace crh::test {

inline constexpr const char* kTestKey = "test-key-7f3a9c";

class ServerFixture : public ::testing::Test {
 protected:
  void start(reference::FaultSet faults = {},
             std::chrono::milliseconds minute = std::chrono::seconds(60),
             reference::Fixtures fixtures = reference::default_fixtures(), reference::MutantSet mutants = {}) {
    reference::ServerConfig config;
    config.threads = 2;
    config.service.api_key = kTestKey;
    config.service.faults = faults;
    config.service.mutants = mutants;
    config.service.minute = minute;
    config.fixtures = std::move(fixtures);
    server_ = std::make_unique<reference::Server>(std::move(config));
    server_->start();
  }
  void SetUp() override { start(); }

  unsigned short port() const { return server_->port(); }

  static std::vector<Header> with_key(std::vector<Header> extra = {}) {
    extra.push_back({"Apikey", kTestKey});
    return extra;
  }

  // One request on a fresh connection; the body is form-encoded unless a
  // Content-Type is among `headers`.
  HttpResponse send(std::string_view method, std::string_view target, std::string_view body = {},
                    std::vector<Header> headers = with_key()) {
    if (!body.empty()) {
      bool typed = false;
      for (const auto& h : headers) typed |= h.name == "Content-Type";
      if (!typed) headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
    }
    RawConnection c("127.0.0.1", port());
    c.send(build_request(method, target, headers, body));
    auto r = c.read_response();
    if (!r) {
      ADD_FAILURE() << "no answer to " << method << " " << target;
      return {};
    }
    return *r;
  }

  std::unique_ptr<reference::Server> server_;
};

// The service's error shape: the given status, application/json, and a JSON
// object with a non-empty string msg.
inline ::testing::AssertionResult IsError(const HttpResponse& r, unsigned status) {
  if (r.status != status)
    return ::testing::AssertionFailure() << "expected HTTP " << status << ", got " << r.status
                                         << " with body " << r.body;
  if (r.header("content-type").rfind("application/json", 0) != 0)
    return ::testing::AssertionFailure() << "expected Content-Type application/json, got \""
                                         << r.header("content-type") << "\"";
  auto v = r.json();
  if (!v.is_object() || !v.as_object().contains("msg") || !v.at("msg").is_string() ||
      v.at("msg").as_string().empty())
    return ::testing::AssertionFailure() << "expected a JSON object with a non-empty string msg, got "
                                         << r.body;
  return ::testing::AssertionSuccess();
}

}  // namespace crh::test
