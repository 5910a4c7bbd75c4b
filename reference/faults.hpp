// Fault modes of the reference service: each breaks exactly one documented
// behaviour, so the harness can prove that it catches that breakage.
#pragma once

#include <bitset>
#include <optional>
#include <span>
#include <string_view>

namespace crh::reference {

enum class Fault {
  auth_missing_ok,         // a request without Apikey is accepted
  auth_wrong_ok,           // any Apikey value is accepted
  auth_skip_database,      // database endpoints ignore the key
  rejected_write_applies,  // a database POST refused for its key is stored anyway
  error_no_msg,            // error bodies carry no msg
  error_status_200,        // not-found is answered 200 (with a msg)
  text_errors,             // errors as text/plain
  snooze_shape,            // snooze answers {"ok":true}
  lru_mru,                 // tag picks the most recently used alias
  tag_minutes_optional,    // tag without minutes is accepted
  binding_last_caller,     // each new caller takes the alias over
  binding_racy,            // the bind is check-then-act with a yield between
  expiry_never,            // tags never expire
  delete_tag_noop,         // delete answers 200 but the tag stays
  db_first_write_wins,     // later writes of a key are ignored
  slow_tag,                // tag answers 20 ms later
  auth_key_prefix,         // only the first 8 characters of the Apikey are compared
  auth_key_case,           // the Apikey is compared without regard to case
  auth_key_query,          // without an Apikey header, the key in the query string is accepted
  auth_key_bearer,         // without an Apikey header, the key in Authorization is accepted
  auth_key_cookie,         // without an Apikey header, the key in a Cookie is accepted
  wake_types,              // wake answers the agent's id as a JSON number
  binding_per_tag_name,    // the caller lock is kept per (channel, tag name), not per alias
  expiry_sliding,          // each call of a tagged alias restarts the tag's lifetime
  binding_racy_turn,       // like binding_racy, but the gap is one event-loop turn
  binding_survives_retag,  // the bound caller outlives the tag: a new tag of the alias is locked to it
  crash_unknown_wake,      // waking an unknown agent closes the connection without an answer
  count_
};

struct FaultInfo {
  Fault fault;
  std::string_view name;         // as given to --fault
  std::string_view description;  // one line for --list-faults
};

// Every fault mode, in a stable order.
std::span<const FaultInfo> all_faults();

// The fault named `name` (as on the command line), if there is one.
std::optional<Fault> fault_by_name(std::string_view name);

class FaultSet {
 public:
  void add(Fault f) { bits_.set(static_cast<std::size_t>(f)); }
  bool has(Fault f) const { return bits_.test(static_cast<std::size_t>(f)); }
  bool empty() const { return bits_.none(); }

 private:
  std::bitset<static_cast<std::size_t>(Fault::count_)> bits_;
};

}  // namespace crh::reference
