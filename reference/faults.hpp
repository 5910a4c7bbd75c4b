// Fault modes of the reference service: each breaks exactly one documented
// behaviour, so the harness can prove that it catches that breakage.
#pragma once

#include <bitset>
#include <optional>
#include <span>
#include <string_view>

namespace crh::reference {

enum class Fault {
  auth_missing_ok,        // a request without Apikey is accepted
  auth_wrong_ok,          // any Apikey value is accepted
  auth_skip_database,     // database endpoints ignore the key
  rejected_write_applies, // a database POST refused for its key is stored anyway
  error_no_msg,           // error bodies carry no msg
  error_status_200,       // not-found is answered 200 (with a msg)
  text_errors,            // errors as text/plain
  snooze_shape,           // snooze answers {"ok":true}
  lru_mru,                // tag picks the most recently used alias
  tag_minutes_optional,   // tag without minutes is accepted
  binding_last_caller,    // each new caller takes the alias over
  binding_racy,           // the bind is check-then-act with a yield between
  expiry_never,           // tags never expire
  delete_tag_noop,        // delete answers 200 but the tag stays
  db_first_write_wins,    // later writes of a key are ignored
  slow_tag,               // tag answers 20 ms later
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
