// A blocking HTTP/1.1 client over one keep-alive connection, with a deadline
// on every exchange and caps on what it reads: a misbehaving target gets a
// TransportError, never a hang or a crash. One client per thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string_view>

#include "core/base_url.hpp"
#include "core/http.hpp"

namespace crh::core {

struct ClientConfig {
  std::chrono::milliseconds timeout{5000};  // whole exchange: connect, send, receive
  std::size_t header_limit = 64 * 1024;     // bytes of status line and headers, interim 1xx heads included
  std::size_t body_limit = 4u << 20;        // bytes of response body
  // Optional, not owned; must outlive the client. When it becomes true, the
  // exchange in flight ends within ~100 ms and later ones fail at once, each as
  // TransportError::timeout with the detail "cancelled: the run was
  // interrupted"; the connection is dropped. Null: never cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // A 429 ("not now": a rate limit) sent again by send() up to this many
  // times, after the Retry-After it named (seconds, at most 2 s) or a pause
  // of 100 ms doubling; the last answer is returned. 0: a 429 is an answer
  // like any other. For the requests around a run (probes, set-up,
  // restoring); a check sends again itself, to keep each answer as evidence.
  // Set it only where 429 has no other meaning (core::throttled).
  int not_now_retries = 0;
};

// How many times a request answered 429 ("not now") is sent again, by the
// client (ClientConfig::not_now_retries) or by a check keeping each answer.
inline constexpr int kNotNowRetries = 3;

// The wait before sending a request answered 429 again for the again+1-th
// time: what `retry_after` (a Retry-After header in seconds) asks, at most
// 2 s, else 100 ms doubling.
std::chrono::milliseconds not_now_wait(int again, std::string_view retry_after);

// Sleeps not_now_wait(again, retry_after) in steps of 20 ms. False, at once,
// when `again` has reached `retries` or when `cancel` (may be null) became
// true: then the request is not sent again.
bool wait_out_not_now(int again, int retries, std::string_view retry_after, const std::atomic<bool>* cancel);

class HttpClient {
 public:
  HttpClient(BaseUrl base, ClientConfig config = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` (Host, Content-Length added; target joined to the base
  // path) and reads the answer. Reconnects when the previous answer closed the
  // connection. After a transport error the connection is dropped. Interim
  // 1xx answers are skipped (at most 32, within the same deadline); a 101
  // is an answer only when the request carried an Upgrade header. Bytes no
  // request asked for (after a whole answer, or waiting on the kept
  // connection before the request is written) end the exchange as
  // TransportError::malformed and close the connection; in the second case
  // the request is not sent (a 408 before an idle close only reconnects). Once
  // *config.cancel is true, it ends or sends nothing (ClientConfig::cancel);
  // only name resolution, done once per client, does not look at the flag.
  Exchange send(HttpRequest request);

  // send() in three steps, so that requests on many clients can be released
  // at one instant (the race of callers): hold() connects and writes all of
  // `request` but its last byte, so the target cannot act on it yet;
  // release() writes that byte; answer() reads the answer. release() and
  // answer() share a fresh deadline, and the exchange's elapsed time counts
  // from the release. A step that failed makes the later ones do nothing and
  // answer() return the failure. Nothing else may be sent in between.
  void hold(HttpRequest request);
  void release();
  Exchange answer();

  const BaseUrl& base() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace crh::core
