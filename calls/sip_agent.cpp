// The SIP user-agent client's thread, transactions and timers.
#include "calls/sip_agent.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "calls/sip_digest.hpp"

namespace crh::calls::sip {
namespace {

constexpr std::chrono::milliseconds kT2{4000};  // RFC 3261 T2: the cap of non-INVITE retransmissions
constexpr int kMaxReacks = 8;                   // re-ACKs of a repeated final answer; a flood gets no more
constexpr std::size_t kMaxProvisional = 16;

// Characters a SIP URI's user part takes as they are (RFC 3261 §25.1).
std::string escape_user(const std::string& user) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : user) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 std::string_view("-_.!~*'()&=+$,;?/").find(static_cast<char>(c)) != std::string_view::npos;
    if (plain) out += static_cast<char>(c);
    else out += {'%', hex[c >> 4], hex[c & 15]};
  }
  return out;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

UserAgentClient::UserAgentClient(const SipDriverConfig& config) : config_(config) {
  std::string why;
  auto target = resolve(config.target.host, config.target.port, why);
  if (!target) throw std::runtime_error("SIP target " + config.target.text() + ": " + why);
  target_ = *target;
  auto local = local_address_towards(target_, why);
  if (!local) throw std::runtime_error("SIP target " + config.target.text() + ": " + why);
  local_ = *local;
  if (!config.target.tcp) {
    fd_ = open_udp(*local, local_, why);
    if (fd_ < 0) throw std::runtime_error("SIP driver's UDP socket: " + why);
  }
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  thread_ = std::thread([this] { run(); });
}

UserAgentClient::~UserAgentClient() {
  stopping_ = true;
  wake();
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) close(fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void UserAgentClient::wake() {
  std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

bool UserAgentClient::ensure_connected(std::string& why) {
  std::lock_guard one_at_a_time(connecting_);
  {
    std::lock_guard guard(lock_);
    if (fd_ >= 0) return true;
  }
  Address local;
  int fd = open_tcp(target_, config_.timeout, local, why);
  if (fd < 0) return false;
  {
    std::lock_guard guard(lock_);
    fd_ = fd;
    local_ = local;
  }
  wake();  // the agent polls the new connection
  return true;
}

std::shared_ptr<Call> UserAgentClient::prepare(const std::string& alias, const std::string& caller) {
  auto call = std::make_shared<Call>();
  call->alias = alias;
  call->caller = caller;
  auto number = config_.number_of ? config_.number_of(alias) : std::nullopt;
  if (!number) {
    call->arm_error = "no number for alias " + alias;
    return call;
  }
  call->number = *number;
  std::string why;
  if (config_.target.tcp && !ensure_connected(why)) {
    call->arm_error = "could not connect to " + config_.target.text() + ": " + why;
    return call;
  }
  Address local;
  {
    std::lock_guard guard(lock_);
    local = local_;
  }
  CallParty& p = call->party;
  std::string host = config_.target.host.find(':') != std::string::npos ? "[" + config_.target.host + "]"
                                                                         : config_.target.host;
  p.request_uri = replace_all(replace_all(replace_all(config_.uri_template, "{number}", *number), "{host}", host),
                              "{port}", std::to_string(config_.target.port));
  p.tcp = config_.target.tcp;
  p.sent_by = local.text();
  p.local_ip = local.host_text();
  p.ip6 = local.v6();
  if (p.ip6) p.local_ip = p.local_ip.substr(1, p.local_ip.size() - 2);
  std::string user = escape_user(caller);
  p.from = "<sip:" + user + "@" + local.host_text() + ">;tag=" + random_hex(10);
  p.to = "<" + p.request_uri + ">";
  p.call_id = random_hex(20) + "@" + p.local_ip;
  p.contact = "<sip:" + user + "@" + p.sent_by + (p.tcp ? ";transport=tcp>" : ">");
  call->branch = new_branch();
  call->invite_bytes = invite(p, call->branch, call->cseq);
  return call;
}

bool UserAgentClient::send(std::string_view bytes) {
  if (fd_ < 0) return false;
  return config_.target.tcp ? send_all(fd_, bytes) : send_to(fd_, bytes, target_);
}

void UserAgentClient::fire(const std::shared_ptr<Call>& call) { fire_all({&call, 1}); }

// Every call's bookkeeping under one hold of the lock (the agent's thread
// reading answers waits, rather than cutting into the release), then their
// INVITEs in one sendmmsg (UDP) or one write (TCP).
std::string UserAgentClient::fire_all(std::span<const std::shared_ptr<Call>> calls) {
  std::vector<std::function<void()>> after;
  const bool tcp = config_.target.tcp;
  {
    std::lock_guard guard(lock_);
    auto now = Clock::now();
    std::vector<std::shared_ptr<Call>> firing;
    std::vector<std::string_view> invites;
    for (const auto& call : calls) {
      if (call->fired || !call->arm_error.empty()) continue;
      call->fired = true;
      call->sent = now;
      call->invites_sent = 1;
      call->interval = config_.t1;
      call->next_retransmit = now + config_.t1;
      call->deadline = now + config_.timeout;
      by_branch_[call->branch] = call;  // before the send: an answer may come at once
      active_.push_back(call);
      firing.push_back(call);
      invites.push_back(call->invite_bytes);
    }
    // One buffer the sends read from, the same from round to round: the
    // kernel copies from memory it has mapped already (on a paravirtualised
    // machine a fresh page costs it microseconds, between two INVITEs).
    std::size_t total = 0;
    for (auto v : invites) total += v.size();
    if (release_bytes_.capacity() < total) release_bytes_.reserve(2 * total);
    release_bytes_.clear();
    for (auto& v : invites) {
      const std::size_t at = release_bytes_.size();
      release_bytes_ += v;
      v = std::string_view(release_bytes_).substr(at, v.size());
    }
    bool written = fd_ >= 0;
    if (written && !invites.empty()) {
      if (tcp) written = send_all(fd_, release_bytes_);  // every INVITE, one after another
      else send_many_to(fd_, invites, target_);  // over UDP a lost datagram is sent again by Timer A
    }
    if (!written && tcp)
      for (const auto& call : firing) {
        call->transport_error = "the INVITE could not be written: the TCP connection is gone";
        finish(call, after);
      }
  }
  for (auto& f : after) f();
  return tcp ? "one write of every INVITE (TCP)" : "sendmmsg (UDP)";
}

CallResult UserAgentClient::wait(const std::shared_ptr<Call>& call) {
  std::unique_lock guard(lock_);
  if (!call->arm_error.empty() || !call->fired) {
    CallResult r;
    r.evidence = call->arm_error.empty() ? "the call was never fired" : call->arm_error;
    return r;
  }
  changed_.wait(guard, [&] { return call->result.has_value(); });
  return *call->result;
}

void UserAgentClient::when_done(const std::shared_ptr<Call>& call, std::function<void()> done) {
  {
    std::lock_guard guard(lock_);
    if (call->fired && call->arm_error.empty() && !call->result) {
      call->done = std::move(done);
      return;
    }
  }
  done();
}

// The outcome is decided now; it becomes visible to result() and when_done
// only after `observe` has seen the call (off the lock), so a caller that
// has its result finds the call's record already kept.
void UserAgentClient::finish(const std::shared_ptr<Call>& call, std::vector<std::function<void()>>& after) {
  Call& c = *call;
  if (c.finished) return;
  c.finished = true;
  c.final_at = Clock::now();
  c.linger_until = c.final_at + std::max<std::chrono::milliseconds>(config_.timeout, std::chrono::seconds(2));
  after.push_back([this, call, result = classify(c, config_), record = record_of(c)] {
    if (config_.observe) config_.observe(record);
    std::function<void()> done;
    {
      std::lock_guard guard(lock_);
      call->result = result;
      done = std::move(call->done);
      call->done = nullptr;
    }
    changed_.notify_all();
    if (done) done();
  });
}

void UserAgentClient::start_resend(Call& call, Clock::time_point now) {
  call.resend_interval = config_.t1;
  call.resend_at = now + config_.t1;
  call.resend_deadline = now + config_.timeout;
}

void UserAgentClient::send_cancel(Call& call) {
  if (call.cancel_sent) return;
  call.cancel_bytes = cancel(call.party, call.branch, call.cseq);
  call.cancel_sent = call.cancel_pending = true;
  send(call.cancel_bytes);
  start_resend(call, Clock::now());
}

void UserAgentClient::on_message(Message m, bool from_target, const Address& from,
                                 std::vector<std::function<void()>>& after) {
  if (m.request) {  // the peer's own request (a BYE ending the dialog, OPTIONS): answered, never a call's answer
    if (!from_target) return void(++ignored_);
    if (m.method != "ACK") send(answer(m, m.method == "BYE" || m.method == "OPTIONS" ? 200 : 501,
                                       m.method == "BYE" || m.method == "OPTIONS" ? "OK" : "Not Implemented"));
    return;
  }
  auto vias = m.all("Via");
  auto branch = vias.empty() ? std::nullopt : param_of(vias.front(), "branch");
  auto found = branch ? by_branch_.find(*branch) : by_branch_.end();
  const std::string* call_id = m.find("Call-ID");
  if (found == by_branch_.end() || !call_id || *call_id != found->second->party.call_id) return void(++ignored_);
  auto call = found->second;
  if (!from_target) {  // a peer that is not the target must not decide the call
    ++ignored_;
    ++call->from_elsewhere;
    call->elsewhere = from.text();
    return;
  }
  auto method = m.cseq_method();
  if (method == "INVITE") {
    if (*branch == call->branch) on_invite_answer(call, m, after);
    else if (*branch == call->old_branch && m.status >= 200 && ++call->repeats <= kMaxReacks) send(call->old_ack);
  } else if (method == "BYE" && *branch == call->bye_branch && m.status >= 200) {
    call->bye_pending = false;
    call->bye_status = m.status;
  } else if (method == "CANCEL" && m.status >= 200) {
    call->cancel_pending = false;
  }
}

void UserAgentClient::on_invite_answer(const std::shared_ptr<Call>& call, const Message& m,
                                       std::vector<std::function<void()>>& after) {
  Call& c = *call;
  if (m.status < 200) {
    if (c.status != 0) return;
    if (c.provisional.size() < kMaxProvisional) c.provisional.push_back(m.status);
    if (c.cancel_wanted && !c.cancel_sent) send_cancel(c);  // §9.1: a CANCEL only after a provisional
    return;
  }
  if (c.status != 0) {  // the same final answer again: ACKed again (bounded), counted once
    if (++c.repeats <= kMaxReacks) send(c.ack_bytes);
    return;
  }
  c.status = m.status;
  c.reason = m.reason;
  auto now = Clock::now();
  if (m.status < 300) {
    DialogPath dialog = dialog_of(m, c.party);
    c.ack_bytes = in_dialog(c.party, dialog, "ACK", new_branch(), c.cseq);
    send(c.ack_bytes);
    c.bye_branch = new_branch();
    c.bye_bytes = in_dialog(c.party, dialog, "BYE", c.bye_branch, c.cseq + 1);
    by_branch_[c.bye_branch] = call;
    c.bye_pending = send(c.bye_bytes);
    start_resend(c, now);
    c.cancel_pending = false;  // the 200 ends the INVITE; a CANCEL now changes nothing
    if (c.finished) c.late_final = true;
    finish(call, after);
    return;
  }
  const std::string* to = m.find("To");
  c.ack_bytes = ack_of_failure(c.party, c.branch, c.cseq, to ? *to : c.party.to);
  send(c.ack_bytes);
  if (m.status == 503)
    if (const auto* retry = m.find("Retry-After")) c.retry_after = *retry;
  if (m.status >= 300 && m.status < 400)
    if (const auto* contact = m.find("Contact")) c.redirect_to = uri_of(*contact);
  if ((m.status == 401 || m.status == 407) && !c.finished) {
    c.challenge = m.status;
    const std::string* challenge = m.find(m.status == 401 ? "WWW-Authenticate" : "Proxy-Authenticate");
    if (config_.credentials && !c.auth_tried) {
      auto answer = challenge ? answer_digest(*challenge, "INVITE", c.party.request_uri, config_.credentials->user,
                                              config_.credentials->password, random_hex(16))
                              : DigestAnswer{{}, "no challenge header came with it"};
      c.auth_tried = true;
      if (answer.error.empty()) {  // a new transaction: CSeq+1, a fresh branch (§22.2)
        c.old_branch = c.branch;
        c.old_ack = c.ack_bytes;
        c.branch = new_branch();
        c.cseq += 1;
        c.invite_bytes = invite(c.party, c.branch, c.cseq, m.status == 401 ? "Authorization" : "Proxy-Authorization",
                                answer.header_value);
        by_branch_[c.branch] = call;
        c.status = 0;
        c.reason.clear();
        c.repeats = 0;
        c.interval = config_.t1;
        c.next_retransmit = now + config_.t1;
        c.deadline = now + config_.timeout;
        ++c.invites_sent;
        send(c.invite_bytes);
        return;
      }
      c.auth_error = answer.error;
    }
  }
  c.cancel_pending = false;
  finish(call, after);
}

void UserAgentClient::on_timers(std::vector<std::function<void()>>& after) {
  auto now = Clock::now();
  bool udp = !config_.target.tcp;
  for (auto& call : active_) {
    Call& c = *call;
    if (c.status == 0 && !c.finished) {
      if (udp && c.provisional.empty() && now >= c.next_retransmit) {  // Timer A
        send(c.invite_bytes);
        ++c.invites_sent;
        c.interval *= 2;
        c.next_retransmit = now + c.interval;
      }
      if (now >= c.deadline) {  // Timer B
        c.timed_out = true;
        finish(call, after);
        if (!c.provisional.empty()) send_cancel(c);
        else c.cancel_wanted = true, c.cancel_wait_until = now + std::min(config_.timeout, std::chrono::milliseconds(2000));
      }
    }
    if ((c.bye_pending || c.cancel_pending) && now >= c.resend_deadline) c.bye_pending = c.cancel_pending = false;
    if (udp && (c.bye_pending || c.cancel_pending) && now >= c.resend_at) {  // Timer E
      send(c.bye_pending ? c.bye_bytes : c.cancel_bytes);
      c.resend_interval = std::min(c.resend_interval * 2, kT2);
      c.resend_at = now + c.resend_interval;
    }
  }
  // A call is forgotten once answered, its BYE or CANCEL done, and its final
  // answer's retransmissions have had time to be re-ACKed.
  std::erase_if(active_, [&](const std::shared_ptr<Call>& c) {
    bool gone = c->result && c->finished && !c->bye_pending && !c->cancel_pending && now >= c->linger_until;
    if (gone)
      for (const auto& b : {c->branch, c->old_branch, c->bye_branch}) {
        auto it = by_branch_.find(b);
        if (!b.empty() && it != by_branch_.end() && it->second == c) by_branch_.erase(it);
      }
    return gone;
  });
}

void UserAgentClient::drop_connection(const std::string& why, std::vector<std::function<void()>>& after) {
  close(fd_);
  fd_ = -1;
  for (auto& call : active_) {
    call->bye_pending = call->cancel_pending = false;
    if (call->status == 0 && !call->finished) {
      call->transport_error = why;
      finish(call, after);
    }
  }
}

void UserAgentClient::read_udp() {
  static thread_local std::string buffer(65536, '\0');
  std::vector<std::function<void()>> after;
  for (int n = 0; n < 256; ++n) {  // bounded: the timers run between bursts of a flood
    Address from;
    from.length = sizeof from.storage;
    ssize_t got = recvfrom(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT,
                           reinterpret_cast<sockaddr*>(&from.storage), &from.length);
    if (got < 0) break;
    auto parsed = parse_datagram(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    if (!parsed.message) {
      ++ignored_;
      continue;
    }
    std::lock_guard guard(lock_);
    on_message(std::move(*parsed.message), from.same(target_), from, after);
  }
  for (auto& f : after) f();
}

void UserAgentClient::read_tcp(int fd) {
  static thread_local StreamReader reader;
  static thread_local int reader_fd = -1;
  if (reader_fd != fd) reader = StreamReader{}, reader_fd = fd;  // a new connection, a new stream
  std::vector<std::function<void()>> after;
  char buffer[16384];
  ssize_t got = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  {
    std::lock_guard guard(lock_);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      drop_connection("the TCP connection closed before a final answer", after);
      reader_fd = -1;
    } else if (got > 0) {
      reader.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
      while (auto m = reader.next()) on_message(std::move(*m), true, target_, after);
      if (!reader.error().empty()) {
        ++ignored_;
        drop_connection("the TCP stream from the target broke: " + reader.error(), after);
        reader_fd = -1;
      }
    }
  }
  for (auto& f : after) f();
}

void UserAgentClient::run() {
  while (!stopping_) {
    int fd;
    {
      std::lock_guard guard(lock_);
      fd = fd_;
    }
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {fd, POLLIN, 0}};
    poll(fds, fd >= 0 ? 2 : 1, 5);  // 5 ms: the timers' resolution
    if (fds[0].revents & POLLIN) {
      std::uint64_t n;
      (void)!read(wake_fd_, &n, sizeof n);
    }
    if (fd >= 0 && fds[1].revents) {
      if (config_.target.tcp) read_tcp(fd);
      else read_udp();
    }
    std::vector<std::function<void()>> after;
    {
      std::lock_guard guard(lock_);
      on_timers(after);
    }
    for (auto& f : after) f();
  }
}

bool UserAgentClient::quiet(Clock::time_point now) const {
  return std::none_of(active_.begin(), active_.end(), [&](const std::shared_ptr<Call>& c) {
    bool invite_open = !c->finished || (c->cancel_sent && c->status == 0);
    bool awaiting_provisional = c->cancel_wanted && !c->cancel_sent && c->status == 0 && now < c->cancel_wait_until;
    return invite_open || c->bye_pending || c->cancel_pending || awaiting_provisional;
  });
}

void UserAgentClient::settle() {
  std::vector<std::function<void()>> after;
  {
    std::unique_lock guard(lock_);
    auto now = Clock::now();
    for (auto& c : active_) {
      if (c->status != 0) continue;
      if (!c->provisional.empty()) send_cancel(*c);
      else if (!c->cancel_sent) c->cancel_wanted = true, c->cancel_wait_until = now + std::min(config_.timeout, std::chrono::milliseconds(1000));
    }
    auto deadline = now + config_.timeout + std::chrono::seconds(1);
    while (!quiet(Clock::now()) && Clock::now() < deadline)
      changed_.wait_for(guard, std::chrono::milliseconds(10));
    for (auto& c : active_)
      if (!c->finished) {
        c->settled = true;
        finish(c, after);
      }
  }
  for (auto& f : after) f();
}

}  // namespace crh::calls::sip
