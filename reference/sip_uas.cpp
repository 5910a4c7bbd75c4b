// What each SIP request gets from the reference. An INVITE is decided once,
// by Service::sip_call; its retransmissions get the last response again.
#include "sip_uas.hpp"

#include <cstdio>

namespace crh::reference {
namespace {

constexpr std::string_view kAllow = "INVITE, ACK, CANCEL, BYE, OPTIONS";
// Methods the reference knows but does not take (405); any other is 501.
constexpr std::string_view kKnownMethods[] = {"REGISTER", "SUBSCRIBE", "NOTIFY", "INFO", "UPDATE",
                                              "PRACK",    "MESSAGE",   "REFER",  "PUBLISH"};

std::string bracketed(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// The top Via with received= and rport= filled in (§18.2.1, RFC 3581), so the
// response finds its way back to where the request came from.
std::string with_received(std::string_view via_text, const SipPeer& peer) {
  auto via = parse_via(via_text);
  if (!via || peer.host.empty()) return std::string(via_text);
  auto semi = via_text.find(';');
  std::string out(via_text.substr(0, semi));
  bool rport = false;
  std::string_view params = semi == std::string_view::npos ? std::string_view{} : via_text.substr(semi + 1);
  while (!params.empty()) {
    auto next = params.find(';');
    std::string_view item = params.substr(0, next);
    params = next == std::string_view::npos ? std::string_view{} : params.substr(next + 1);
    auto eq = item.find('=');
    std::string_view name = item.substr(0, eq);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    if (iequals(name, "received")) continue;
    if (iequals(name, "rport") && eq == std::string_view::npos) {
      rport = true;
      out += ";rport=" + std::to_string(peer.port);
      continue;
    }
    out += ";" + std::string(item);
  }
  if (rport || via->host != peer.host) out += ";received=" + peer.host;
  return out;
}

// The headers every response to `m` copies (§8.2.6.2): Via (all, in order), From, Call-ID, CSeq.
std::string echo_headers(const SipMessage& m, const SipPeer& peer) {
  std::string out;
  bool top = true;
  for (auto via : m.all("Via")) {
    out += "Via: " + (top ? with_received(via, peer) : std::string(via)) + "\r\n";
    top = false;
  }
  out += "From: " + std::string(m.header("From").value_or("")) + "\r\n";
  out += "Call-ID: " + std::string(m.header("Call-ID").value_or("")) + "\r\n";
  out += "CSeq: " + std::string(m.header("CSeq").value_or("")) + "\r\n";
  return out;
}

std::string to_tag_of(const SipMessage& m) {
  auto to = parse_address(m.header("To").value_or(""));
  return to ? param(to->params, "tag").value_or("") : "";
}

std::string reason_of(unsigned status) {
  switch (status) {
    case 100: return "Trying";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 420: return "Bad Extension";
    case 481: return "Call/Transaction Does Not Exist";
    case 487: return "Request Terminated";
    case 501: return "Not Implemented";
    default: return "Unknown";
  }
}

std::string response_bytes(unsigned status, std::string_view reason, const std::string& echo, std::string_view to,
                           std::string_view extra, std::string_view body) {
  std::string out = "SIP/2.0 " + std::to_string(status) + " " + std::string(reason) + "\r\n" + echo;
  out += "To: " + std::string(to) + "\r\n";
  out += extra;
  out += "Server: crh-reference\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out += body;
  return out;
}

}  // namespace

std::string transaction_key(const SipMessage& m, std::string_view method) {
  auto vias = m.all("Via");
  auto via = vias.empty() ? std::nullopt : parse_via(vias.front());
  std::string branch = via ? param(via->params, "branch").value_or("") : "";
  if (branch.starts_with("z9hG4bK"))  // RFC 3261 §17.2.3: branch, sent-by and method
    return branch + "|" + via->host + ":" + std::to_string(via->port) + "|" + std::string(method);
  // RFC 2543 peers: what identifies the request instead.
  auto from = parse_address(m.header("From").value_or(""));
  auto cseq = parse_cseq(m.header("CSeq").value_or(""));
  return "2543|" + std::string(m.header("Call-ID").value_or("")) + "|" +
         std::to_string(cseq ? cseq->number : 0) + "|" + (from ? param(from->params, "tag").value_or("") : "") +
         "|" + std::string(method);
}

SipUas::SipUas(SipUasConfig config, Service& service, Send send)
    : config_(std::move(config)), service_(service), send_(std::move(send)), tx_(config_.t1, config_.capacity),
      random_(std::random_device{}()) {}

void SipUas::on_message(const SipMessage& m, const SipPeer& peer, SipClock::time_point now) {
  if (!m.is_request) return;  // a UAS that sends no requests expects no responses
  ++counters_.requests;
  if (auto defect = request_defect(m); !defect.empty()) {
    ++counters_.bad_requests;
    if (m.method != "ACK" && !m.all("Via").empty() && parse_via(m.all("Via").front()))
      answer_once(m, peer, 400, "Bad Request - " + defect);
    return;
  }
  if (m.method == "ACK") return ack(m, transaction_key(m, "INVITE"), now);
  const std::string key = transaction_key(m, m.method);
  if (auto* tx = tx_.find(key)) {  // a retransmission: the same answer, nothing decided again
    ++counters_.retransmissions;
    if (!tx->last_response.empty()) send_(peer, tx->last_response);
    return;
  }
  if (m.method != "CANCEL") {
    if (auto require = m.header("Require")) {  // §8.2.2.3: no extension is supported
      auto& tx = tx_.open(key, m.method == "INVITE", peer, now);
      fill(tx, m);
      return respond(tx, 420, reason_of(420), now, "Unsupported: " + std::string(*require) + "\r\n");
    }
  }
  if (m.method == "INVITE") return invite(m, peer, key, now);
  if (m.method == "CANCEL") return cancel(m, peer, key, now);
  auto& tx = tx_.open(key, false, peer, now);
  fill(tx, m);
  const std::string allow = "Allow: " + std::string(kAllow) + "\r\n";
  if (m.method == "OPTIONS") return respond(tx, 200, "OK", now, allow + "Accept: application/sdp\r\n");
  if (m.method == "BYE") {
    const std::string dialog = tx.call_id + "|" + to_tag_of(m);
    if (!tx_.dialog(dialog)) return respond(tx, 481, reason_of(481), now);
    tx_.close_dialog(dialog);
    return respond(tx, 200, "OK", now);
  }
  for (auto known : kKnownMethods)
    if (m.method == known) return respond(tx, 405, reason_of(405), now, allow);
  respond(tx, 501, reason_of(501), now, allow);
}

void SipUas::fill(ServerTransaction& tx, const SipMessage& m) {
  tx.echo = echo_headers(m, tx.peer);
  tx.to = std::string(m.header("To").value_or(""));
  tx.call_id = std::string(m.header("Call-ID").value_or(""));
  std::string existing = to_tag_of(m);
  tx.add_tag = existing.empty();
  tx.to_tag = tx.add_tag ? new_tag() : existing;
}

void SipUas::invite(const SipMessage& m, const SipPeer& peer, const std::string& key, SipClock::time_point now) {
  auto& tx = tx_.open(key, true, peer, now);
  const bool in_dialog = !to_tag_of(m).empty();
  fill(tx, m);
  for (auto rr : m.all("Record-Route")) tx.record_route += "Record-Route: " + std::string(rr) + "\r\n";
  tx.number = uri_user(m.uri);
  // The caller: P-Asserted-Identity when present (a trusted proxy's word), else From.
  auto pai = m.header("P-Asserted-Identity");
  auto who = parse_address(pai ? *pai : *m.header("From"));
  tx.caller = who ? uri_user(who->uri) : "";
  auto at = m.uri.find('@');
  std::string host = at == std::string::npos ? "" : m.uri.substr(at + 1);
  host = host.substr(0, host.find_first_of(";?>"));
  if (!host.empty() && host.front() == '[') host = host.substr(1, host.find(']') - 1);
  else host = host.substr(0, host.find(':'));
  tx.uri_host = host;
  respond(tx, 100, reason_of(100), now);
  if (in_dialog) {  // a re-INVITE: the session stays as it is, if the dialog is ours
    if (auto* d = tx_.dialog(tx.call_id + "|" + tx.to_tag); d && d->confirmed) {
      std::string extra = "Contact: " + contact(tx) + "\r\nContent-Type: application/sdp\r\n";
      return respond(tx, 200, "OK", now, extra, sdp(tx));
    }
    return respond(tx, 481, reason_of(481), now);
  }
  if (tx.caller.empty()) return respond(tx, 400, "Bad Request - no calling number in From", now);
  const auto delay = std::chrono::duration_cast<SipClock::duration>(config_.answer_delay);
  if (delay.count() <= 0) return decide(key, tx.serial, now);
  schedule(now + delay, [this, key, serial = tx.serial](SipClock::time_point t) { decide(key, serial, t); });
}

void SipUas::decide(const std::string& key, std::uint64_t serial, SipClock::time_point now) {
  auto* tx = tx_.find(key);
  if (!tx || tx->serial != serial || tx->last_status >= 200) return;  // cancelled or forgotten meanwhile
  SipCallReply reply = service_.sip_call(tx->number, tx->caller);
  if (!reply.then) return finish(*tx, reply.status, now);
  Task apply = [this, key, serial, then = std::move(reply.then)](SipClock::time_point t) {
    auto* later = tx_.find(key);
    if (!later || later->serial != serial || later->last_status >= 200) return;
    finish(*later, then(), t);
  };
  if (reply.yield) deferred_.push_back(std::move(apply));
  else schedule(now + reply.wait, std::move(apply));
}

void SipUas::finish(ServerTransaction& tx, CallStatus status, SipClock::time_point now) {
  switch (status) {
    case CallStatus::connected: {
      ++counters_.connected;
      std::string extra = tx.record_route + "Contact: " + contact(tx) + "\r\nAllow: " + std::string(kAllow) +
                          "\r\nContent-Type: application/sdp\r\n";
      tx_.open_dialog(tx.call_id + "|" + tx.to_tag, tx.key, now);
      return respond(tx, 200, "OK", now, extra, sdp(tx));
    }
    case CallStatus::locked:
      ++counters_.refused;
      return respond(tx, 403, reason_of(403), now);
    case CallStatus::unknown_channel:
    case CallStatus::unknown_alias:
      ++counters_.not_found;
      return respond(tx, 404, reason_of(404), now);
  }
}

void SipUas::ack(const SipMessage& m, const std::string& key, SipClock::time_point now) {
  if (auto* tx = tx_.find(key); tx && tx->last_status >= 300) return tx_.acknowledged(*tx, now);
  // The ACK of a 2xx is its own transaction (§17.1.1.3); the dialog finds its INVITE.
  auto* d = tx_.dialog(std::string(m.header("Call-ID").value_or("")) + "|" + to_tag_of(m));
  if (!d) return;
  d->confirmed = true;
  if (auto* tx = tx_.find(d->invite_key)) tx_.acknowledged(*tx, now);
}

void SipUas::cancel(const SipMessage& m, const SipPeer& peer, const std::string& key, SipClock::time_point now) {
  auto* invite_tx = tx_.find(transaction_key(m, "INVITE"));
  auto& tx = tx_.open(key, false, peer, now);
  fill(tx, m);
  if (!invite_tx) return respond(tx, 481, reason_of(481), now);
  // §9.2: the CANCEL's 200 carries the INVITE's To tag; a pending INVITE ends with 487.
  if (tx.add_tag) tx.to_tag = invite_tx->to_tag;
  respond(tx, 200, "OK", now);
  if (invite_tx->last_status < 200) {
    ++counters_.cancelled;
    respond(*invite_tx, 487, reason_of(487), now);
  }
}

void SipUas::respond(ServerTransaction& tx, unsigned status, std::string_view reason, SipClock::time_point now,
                     std::string_view extra, std::string_view body) {
  // A 100 carries the To as sent (§8.2.6.1); every other response our tag.
  std::string to = tx.to;
  if (status > 100 && tx.add_tag) to += ";tag=" + tx.to_tag;
  std::string bytes = response_bytes(status, reason, tx.echo, to, extra, body);
  send_(tx.peer, bytes);
  tx_.sent(tx, std::move(bytes), status, now);
}

void SipUas::answer_once(const SipMessage& m, const SipPeer& peer, unsigned status, std::string_view reason,
                         std::string_view extra) {
  std::string to(m.header("To").value_or(""));
  if (auto parsed = parse_address(to); parsed && !param(parsed->params, "tag")) to += ";tag=" + new_tag();
  send_(peer, response_bytes(status, reason, echo_headers(m, peer), to, extra, {}));
}

std::string SipUas::contact(const ServerTransaction& tx) const {
  const std::string host = config_.contact_host.empty() ? tx.uri_host : config_.contact_host;
  std::string user = tx.number.empty() ? "" : tx.number + "@";
  return "<sip:" + user + bracketed(host) + ":" + std::to_string(config_.contact_port) +
         (tx.peer.reliable() ? ";transport=tcp" : "") + ">";
}

std::string SipUas::sdp(const ServerTransaction& tx) const {
  const std::string host = config_.contact_host.empty() ? tx.uri_host : config_.contact_host;
  const std::string family = host.find(':') != std::string::npos ? "IP6" : "IP4";
  return "v=0\r\no=crh 1 1 IN " + family + " " + host + "\r\ns=crh\r\nc=IN " + family + " " + host +
         "\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n";
}

std::string SipUas::new_tag() {
  char text[40];
  std::snprintf(text, sizeof text, "%016llx%llx", static_cast<unsigned long long>(random_()),
                static_cast<unsigned long long>(++tag_counter_));
  return text;
}

void SipUas::schedule(SipClock::time_point at, Task task) { scheduled_.push({at, ++task_seq_, std::move(task)}); }

void SipUas::tick(SipClock::time_point now) {
  while (!scheduled_.empty() && scheduled_.top().at <= now) {
    Task task = scheduled_.top().task;
    scheduled_.pop();
    task(now);
  }
  tx_.tick(now, [this](const ServerTransaction& tx) { send_(tx.peer, tx.last_response); });
}

bool SipUas::run_deferred(SipClock::time_point now) {
  if (deferred_.empty()) return false;
  std::vector<Task> tasks;
  tasks.swap(deferred_);
  for (auto& task : tasks) task(now);
  return true;
}

SipClock::time_point SipUas::next_due() const {
  auto next = tx_.next_due();
  if (!scheduled_.empty()) next = std::min(next, scheduled_.top().at);
  return next;
}

}  // namespace crh::reference
