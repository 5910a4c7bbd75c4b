// The model's private steps, shared by its files: which file holds what.
//   model_state.cpp    the facts: starts, lookups, liveness, the least-recently-used picks, minutes
//   model_predict.cpp  predict(): each endpoint's statuses and fields
//   model_observe.cpp  observe(): what an answer teaches, and forgetting what others may touch
//   model_check.cpp    check(): the answer against the prediction; reading fields under the profile's names
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "oracle/model.hpp"

namespace crh::oracle::model_parts {

// The possible picks of a tag on a channel at a time (spec 4.2, DESIGN.md §3:
// among the untagged aliases, the one whose last use is oldest).
struct Picks {
  std::vector<std::string> possible;  // aliases the tag may pick (empty with `unseen`: any)
  std::vector<Excluded> excluded;     // aliases it may not, with the rule and why
  bool certain_free = false;          // some alias is certainly untagged: the tag must succeed
  bool maybe_free = false;            // some alias may be untagged (or one not seen yet may exist)
};
Picks possible_picks(const ChannelFacts& channel, std::int64_t at_ms, const ModelClock& clock);

// The model's name of a database key: the key, or its ASCII lower case when
// the profile says the target's keys are case-insensitive (database_keys).
std::string entry_key(const core::Profile& profile, const std::string& key);

// A tag's minutes as an integer; nothing when the text is not one ("abc",
// "1.5", ""). Values beyond 64 bits saturate.
std::optional<std::int64_t> parse_minutes(const std::string& text);

// at + minutes × minute_ms, saturated.
std::int64_t expiry_of(std::int64_t at_ms, std::int64_t minutes, std::int64_t minute_ms);

// Builds a StatusExpectation from the causes that apply.
class Expect {
 public:
  Expect(std::string_view ok_rule, std::string_view refusal_rule);
  // A refusal is required (a 200 breaks `rule`).
  void must_refuse(const std::vector<unsigned>& statuses, std::string_view rule, const std::string& why);
  // The profile expects a refusal; the MUST rules accept a 200.
  void should_refuse(const std::vector<unsigned>& statuses, std::string_view rule, const std::string& why);
  // Either answer: what decides it is open.
  void may_refuse(const std::vector<unsigned>& statuses, std::string_view rule, const std::string& why);
  // The MUST rules accept a refusal, the profile expects 200 (a refusal breaks `rule` as a SHOULD).
  void refusal_tolerated(std::string_view rule, const std::string& why);
  // Which rule a refusal breaks when none is accepted.
  void success_rule(std::string_view rule) { s_.refusal_rule = rule; }
  bool must_refused() const { return !s_.ok; }
  StatusExpectation done() const { return s_; }

 private:
  void add(const std::vector<unsigned>& statuses, std::string_view rule, const std::string& why);
  StatusExpectation s_;
};

// ---- reading answers under the profile's names (model_check.cpp) ----

std::optional<boost::json::value> json_body(const ObservedAnswer& answer);
// A field as text: a string as it is, null as "", anything else as JSON.
std::optional<std::string> field_text(const boost::json::value& object, const std::string& name);
// The state field as JSON text, when the object has one.
std::optional<std::string> state_text(const core::FieldNames& names, const boost::json::value& agent);
// The tag of an alias answer, or of the first object inside it that has one.
std::optional<std::string> answer_tag(const core::FieldNames& names, const boost::json::value& body);

}  // namespace crh::oracle::model_parts
