// The SIP side of the pcap check (issue 26), private to capture/: the calls
// the capture holds, gathered message by message, and what the HTTP side
// tells about them (which alias a number is, the aliases' tag epochs).
// pcap_check_sip.cpp gathers; pcap_check_sip_report.cpp judges and reports.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/pcap_check.hpp"
#include "core/api.hpp"

namespace crh::capture::judging {

// A tag of an alias as its exchange shows it (capture time, ns).
struct TagSpan {
  std::int64_t invoke = 0, complete = 0;
  std::int64_t lifetime_ns = 0;  // 0: unlimited or unknown
};

struct SipCalls {
  static constexpr std::size_t kMaxCalls = 100'000;  // Call-IDs followed; later ones are counted only
  static constexpr std::size_t kWhyKept = 20;

  struct Call {
    SipCallSeen seen;
    std::uint64_t order = 0;  // of its first INVITE
    std::uint32_t cseq = 0;   // the last INVITE transaction's CSeq number
    std::string branch, sender;  // its top Via branch and sender, to tell retransmissions from proxy hops
    std::string answer_sender;   // who sent its final answer
  };
  std::unordered_map<std::string, Call> calls;  // by Call-ID
  std::uint64_t next_order = 0;
  std::uint64_t messages = 0, unreadable = 0, answers_without_invite = 0, calls_not_followed = 0;
  std::vector<std::string> unreadable_why;

  // From the HTTP exchanges: the alias (as the binding check keys it) each
  // number is, and each alias's tags and untags.
  std::unordered_map<std::string, std::string> alias_of_number;
  std::unordered_map<std::string, std::vector<TagSpan>> tags;
  std::unordered_map<std::string, std::vector<std::int64_t>> untags;  // their invoke times

  void add(WireSipMessage&& m);
  // An alias object, or a list of them (a tag's or the aliases list's
  // answer): each alias's number under `number_field` (an alias without one
  // is its own number), keyed "prefix + id".
  void learn_numbers(const boost::json::value& body, const core::FieldNames& names, const std::string& number_field,
                     const std::string& prefix);
};

// The "sip" section of the check's document (results/keys_capture.hpp's
// pcap_sip); `start_ns`: the capture's first packet, the zero of its times.
boost::json::object sip_document(const SipReport& report, std::int64_t start_ns);

}  // namespace crh::capture::judging
