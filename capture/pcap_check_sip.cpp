// The SIP calls of a capture gathered message by message (pcap_check_sip.hpp):
// an INVITE opens or renews its call (by Call-ID), a final answer to the
// call's latest INVITE transaction closes it; the same INVITE or answer seen
// again from the same sender is a retransmission, from another sender (a
// proxy's hop) it is not.
#include "capture/pcap_check_sip.hpp"

#include <boost/json.hpp>
#include <charconv>

namespace crh::capture::judging {
namespace sip = calls::sip;
namespace {

std::uint32_t cseq_number(const sip::Message& m) {
  const std::string* cseq = m.find("CSeq");
  if (!cseq) return 0;
  std::uint32_t n = 0;
  const char* begin = cseq->data();
  while (begin < cseq->data() + cseq->size() && (*begin == ' ' || *begin == '\t')) ++begin;
  std::from_chars(begin, cseq->data() + cseq->size(), n);
  return n;
}

std::string top_branch(const sip::Message& m) {
  const auto vias = m.all("Via");
  if (vias.empty()) return {};
  return sip::param_of(vias.front(), "branch").value_or("");
}

// A URI without any password in its user part (sip:user:secret@host).
std::string shown_uri(const std::string& uri) {
  const auto colon = uri.find(':');
  const auto at = uri.find('@');
  if (colon == std::string::npos || at == std::string::npos) return uri;
  const auto second = uri.find(':', colon + 1);
  if (second == std::string::npos || second > at) return uri;
  return uri.substr(0, second) + uri.substr(at);
}

// What a call keeps of a header's text: a hostile capture's 16 KB Call-IDs
// must not make 100,000 calls cost gigabytes.
constexpr std::size_t kKept = 256;
std::string kept(std::string_view text) { return std::string(text.substr(0, kKept)); }

std::string caller_of(const sip::Message& m) {
  if (const std::string* pai = m.find("P-Asserted-Identity")) {
    auto user = sip::user_of(sip::uri_of(*pai));
    if (!user.empty()) return user;
  }
  if (const std::string* from = m.find("From")) return sip::user_of(sip::uri_of(*from));
  return {};
}

}  // namespace

void SipCalls::add(WireSipMessage&& m) {
  if (!m.message) {
    ++unreadable;
    if (unreadable_why.size() < kWhyKept)
      unreadable_why.push_back("frame " + std::to_string(m.at.frame) + " (" + m.source.address + " " +
                               std::to_string(m.source.port) + " to " + m.destination.address + " " +
                               std::to_string(m.destination.port) + (m.tcp ? ", TCP" : ", UDP") + "): " + m.error);
    return;
  }
  ++messages;
  const sip::Message& msg = *m.message;
  const std::string* call_id_header = msg.find("Call-ID");
  if (!call_id_header || call_id_header->empty()) return;
  const std::string id = kept(*call_id_header);
  const std::string* call_id = &id;
  const std::string sender = m.source.address + " " + std::to_string(m.source.port);
  const std::uint32_t cseq = cseq_number(msg);
  if (msg.request) {
    if (msg.method != "INVITE") return;  // ACK, BYE, CANCEL end what an INVITE began: the INVITE's answer says how
    auto it = calls.find(*call_id);
    if (it == calls.end()) {
      if (calls.size() >= kMaxCalls) {
        ++calls_not_followed;
        return;
      }
      it = calls.emplace(*call_id, Call{}).first;
      Call& c = it->second;
      c.order = next_order++;
      c.seen.call_id = *call_id;
      c.seen.invite = m.at;
      c.seen.tcp = m.tcp;
      c.seen.stream = m.stream;
      c.cseq = cseq;
      c.branch = kept(top_branch(msg));
      c.sender = sender;
    } else {
      Call& c = it->second;
      const std::string branch = kept(top_branch(msg));
      if (cseq == c.cseq && branch == c.branch && sender == c.sender) {
        ++c.seen.retransmissions;
      } else if (cseq > c.cseq) {
        // A new transaction of the call (after a 401/407 challenge, say): its answer decides.
        c.cseq = cseq;
        c.branch = branch;
        c.sender = sender;
        c.seen.final_status = 0;
        c.seen.answer = {};
        c.answer_sender.clear();
      }
    }
    Call& c = it->second;
    if (c.seen.caller.empty()) c.seen.caller = kept(caller_of(msg));
    if (c.seen.called.empty()) c.seen.called = kept(sip::user_of(msg.uri));
    if (c.seen.request_uri.empty()) c.seen.request_uri = kept(shown_uri(msg.uri));
    return;
  }
  if (msg.cseq_method() != "INVITE" || msg.status < 200) return;
  auto it = calls.find(*call_id);
  if (it == calls.end()) {
    ++answers_without_invite;
    return;
  }
  Call& c = it->second;
  if (cseq != c.cseq) return;  // an earlier transaction's answer (or its retransmission)
  if (c.seen.final_status == 0) {
    c.seen.final_status = msg.status;
    c.seen.answer = m.at;
    c.answer_sender = sender;
  } else if (msg.status == c.seen.final_status && sender == c.answer_sender) {
    ++c.seen.retransmissions;
  }
}

void SipCalls::learn_numbers(const boost::json::value& body, const core::FieldNames& names,
                             const std::string& number_field, const std::string& prefix) {
  auto learn = [&](const boost::json::value& item) {
    const auto id = core::api::alias_id(names, item);
    if (!id) return;
    std::string number = *id;
    if (const auto* o = item.if_object())
      if (const auto* n = o->if_contains(number_field)) {
        if (n->is_string()) number = std::string(n->get_string());
        else if (n->is_int64()) number = std::to_string(n->get_int64());
      }
    number = kept(number);
    if (alias_of_number.size() < kMaxCalls || alias_of_number.contains(number)) alias_of_number[number] = prefix + *id;
  };
  std::string why;
  if (body.is_object() && core::api::alias_id(names, body)) {
    learn(body);
    return;
  }
  if (auto list = core::api::find_list(body, names.aliases_list, why)) {
    for (const auto& item : *list->items) learn(item);
    return;
  }
  // A tag answer that wraps the alias.
  if (const auto* o = body.if_object())
    for (const auto& [name, value] : *o)
      if (value.is_object() && core::api::alias_id(names, value)) return learn(value);
}

}  // namespace crh::capture::judging
