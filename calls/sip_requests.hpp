// The requests of one SIP call, built as bytes: the INVITE (and its
// authenticated retry), the ACK of a failure within its transaction
// (RFC 3261 §17.1.1.3), the ACK and BYE of a dialog (§12.1.2, §13.2.2.4),
// the CANCEL (§9.1), and the answers to requests the peer sends. Internal.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "calls/sip_message.hpp"

namespace crh::calls::sip {

// What every request of one call shares.
struct CallParty {
  std::string request_uri;  // the INVITE's, from the URI template
  std::string sent_by;      // the local "host:port" for Via
  bool tcp = false;
  std::string local_ip;     // for the SDP offer, without brackets
  bool ip6 = false;
  std::string from;         // "<sip:CALLER@HOST>;tag=..."
  std::string to;           // "<REQUEST-URI>"
  std::string call_id;
  std::string contact;      // "<sip:CALLER@HOST:PORT>"
};

// The dialog a 2xx made: where in-dialog requests go and through which proxies.
struct DialogPath {
  std::string remote_target;       // the 2xx's Contact URI (the Request-URI when absent)
  std::vector<std::string> route;  // Record-Route reversed
  std::string to;                  // the 2xx's To, with its tag
};

// `n` random lowercase hex digits (thread-safe).
std::string random_hex(std::size_t n);
std::string new_branch();  // "z9hG4bK" and randomness (§8.1.1.7)

// `auth_name` is Authorization or Proxy-Authorization (empty: none).
std::string invite(const CallParty& party, std::string_view branch, unsigned cseq, std::string_view auth_name = {},
                   std::string_view auth_value = {});
std::string ack_of_failure(const CallParty& party, std::string_view invite_branch, unsigned cseq,
                           std::string_view to_with_tag);
DialogPath dialog_of(const Message& ok, const CallParty& party);
std::string in_dialog(const CallParty& party, const DialogPath& dialog, std::string_view method,
                      std::string_view branch, unsigned cseq);
std::string cancel(const CallParty& party, std::string_view invite_branch, unsigned cseq);
// A response to a request from the peer (an in-dialog BYE, OPTIONS...).
std::string answer(const Message& request, unsigned status, std::string_view reason);

}  // namespace crh::calls::sip
