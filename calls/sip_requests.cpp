// The requests of one SIP call, written through sip::serialize.
#include "calls/sip_requests.hpp"

#include <algorithm>
#include <mutex>
#include <random>

namespace crh::calls::sip {
namespace {

Message request(const CallParty& p, std::string_view method, std::string uri, std::string_view branch,
                unsigned cseq, std::string to) {
  Message m;
  m.request = true;
  m.method = std::string(method);
  m.uri = std::move(uri);
  m.headers.push_back({"Via", std::string(p.tcp ? "SIP/2.0/TCP " : "SIP/2.0/UDP ") + p.sent_by +
                                  ";branch=" + std::string(branch) + ";rport"});
  m.headers.push_back({"Max-Forwards", "70"});
  m.headers.push_back({"From", p.from});
  m.headers.push_back({"To", std::move(to)});
  m.headers.push_back({"Call-ID", p.call_id});
  m.headers.push_back({"CSeq", std::to_string(cseq) + " " + std::string(method)});
  return m;
}

std::string sdp_offer(const CallParty& p) {
  const char* family = p.ip6 ? "IP6" : "IP4";
  return "v=0\r\no=crh 1 1 IN " + std::string(family) + " " + p.local_ip + "\r\ns=crh\r\nc=IN " + family + " " +
         p.local_ip + "\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=sendrecv\r\n";
}

}  // namespace

std::string random_hex(std::size_t n) {
  static std::mutex lock;
  static std::mt19937_64 engine{std::random_device{}()};
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(n, '0');
  std::lock_guard guard(lock);
  for (auto& c : out) c = digits[engine() & 15];
  return out;
}

std::string new_branch() { return "z9hG4bK" + random_hex(16); }

std::string invite(const CallParty& p, std::string_view branch, unsigned cseq, std::string_view auth_name,
                   std::string_view auth_value) {
  Message m = request(p, "INVITE", p.request_uri, branch, cseq, p.to);
  m.headers.push_back({"Contact", p.contact});
  if (!auth_name.empty()) m.headers.push_back({std::string(auth_name), std::string(auth_value)});
  m.headers.push_back({"Allow", "INVITE, ACK, CANCEL, BYE, OPTIONS"});
  m.headers.push_back({"User-Agent", "crh"});
  m.headers.push_back({"Content-Type", "application/sdp"});
  m.body = sdp_offer(p);
  return serialize(m);
}

std::string ack_of_failure(const CallParty& p, std::string_view invite_branch, unsigned cseq,
                           std::string_view to_with_tag) {
  return serialize(request(p, "ACK", p.request_uri, invite_branch, cseq, std::string(to_with_tag)));
}

DialogPath dialog_of(const Message& ok, const CallParty& p) {
  DialogPath d;
  const std::string* contact = ok.find("Contact");
  d.remote_target = contact ? uri_of(*contact) : std::string{};
  if (d.remote_target.empty()) d.remote_target = p.request_uri;
  for (auto rr : ok.all("Record-Route")) d.route.emplace_back(rr);
  std::reverse(d.route.begin(), d.route.end());  // the UAC's route set (§12.1.2)
  const std::string* to = ok.find("To");
  d.to = to ? *to : p.to;
  return d;
}

std::string in_dialog(const CallParty& p, const DialogPath& d, std::string_view method, std::string_view branch,
                      unsigned cseq) {
  Message m = request(p, method, d.remote_target, branch, cseq, d.to);
  // Loose routing (;lr) keeps the remote target as Request-URI; every route
  // the proxies recorded goes in Route, in order.
  for (const auto& r : d.route) m.headers.push_back({"Route", r});
  if (method == "BYE") m.headers.push_back({"User-Agent", "crh"});
  return serialize(m);
}

std::string cancel(const CallParty& p, std::string_view invite_branch, unsigned cseq) {
  return serialize(request(p, "CANCEL", p.request_uri, invite_branch, cseq, p.to));
}

std::string answer(const Message& req, unsigned status, std::string_view reason) {
  Message m;
  m.status = status;
  m.reason = std::string(reason);
  for (const char* name : {"Via", "From", "To", "Call-ID", "CSeq"})
    for (auto v : req.all(name)) m.headers.push_back({name, std::string(v)});
  return serialize(m);
}

}  // namespace crh::calls::sip
