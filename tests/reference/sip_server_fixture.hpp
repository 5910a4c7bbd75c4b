// The reference started in-process with HTTP and SIP on ephemeral loopback
// ports, a short T1, and helpers that place calls and read the HTTP view.
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory>

#include "reference/server.hpp"
#include "sip_test_client.hpp"
#include "support/raw_http.hpp"

namespace crh::test {

class SipServerTest : public ::testing::Test {
 protected:
  static constexpr const char* kKey = "sip-test-key-41d2";

  void start(reference::FaultSet faults = {}, std::chrono::microseconds delay = {},
             std::string sip_listen = "127.0.0.1:0") {
    reference::ServerConfig config;
    config.threads = 1;
    config.service.api_key = kKey;
    config.service.faults = faults;
    config.answer_delay = delay;
    config.sip_listen = std::move(sip_listen);
    config.sip_t1 = std::chrono::milliseconds(50);
    server_ = std::make_unique<reference::Server>(std::move(config));
    server_->start();
  }
  void TearDown() override {
    if (server_) server_->stop();
  }
  unsigned short sip_port() const { return server_->sip_port(); }

  HttpResponse http(std::string_view method, std::string_view target, std::string_view body = {}) {
    std::vector<Header> headers{{"Apikey", kKey}};
    if (!body.empty()) headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
    RawConnection c("127.0.0.1", server_->port());
    c.send(build_request(method, target, headers, body));
    auto r = c.read_response();
    return r ? *r : HttpResponse{};
  }
  // Tags channel 1's least recently used alias; its number.
  std::string tag_alias(std::string_view tag = "sip") {
    auto r = http("POST", "/channels/1/alias-numbers/tag", "tag=" + std::string(tag) + "&minutes=10");
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200 ? std::string(r.json().at("number").as_string()) : "";
  }
  // The HTTP view's bound caller of the alias with `number` ("" when none).
  std::string bound_caller(std::string_view number) {
    const auto list = http("GET", "/channels/1/alias-numbers").json();
    for (const auto& a : list.at("aliases").as_array())
      if (a.at("number").as_string() == number && a.at("bound_caller").is_string())
        return std::string(a.at("bound_caller").as_string());
    return "";
  }
  static SipRequest call(std::string number, std::string caller, std::string branch) {
    SipRequest r;
    r.number = std::move(number);
    r.caller = std::move(caller);
    r.call_id = "call-" + branch;
    r.branch = std::move(branch);
    r.body = "v=0\r\no=a 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\n";
    return r;
  }
  // Sends an INVITE; expects 100 Trying first and returns the final answer.
  std::optional<SipReply> invite(SipTestPeer& peer, const SipRequest& request) {
    peer.send(request.bytes(peer, sip_port()));
    auto first = peer.read();
    if (!first) return std::nullopt;
    EXPECT_EQ(first->status, 100u) << first->raw;
    if (first->status != 100) return first;
    return peer.read_final();
  }
  // The next response whose CSeq is `cseq`, skipping others (a 2xx retransmitted meanwhile).
  static std::optional<SipReply> read_for(SipTestPeer& peer, std::string_view cseq) {
    for (int i = 0; i < 20; ++i) {
      auto r = peer.read();
      if (!r || r->header("CSeq") == cseq) return r;
    }
    return std::nullopt;
  }
  // The ACK for `final` (same branch for a non-2xx, §17.1.1.3; a new one for a 2xx, §13.2.2.4).
  void ack(SipTestPeer& peer, const SipRequest& invite, const SipReply& final) {
    SipRequest request = invite.as("ACK");
    request.to_tag = final.to_tag();
    if (final.status < 300) request.branch += "-ack";
    peer.send(request.bytes(peer, sip_port()));
  }

  std::unique_ptr<reference::Server> server_;
};

}  // namespace crh::test
