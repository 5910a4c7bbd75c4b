// Exploration (issue 25): random sequences of operations drawn to reach the
// spec's edges, every answer judged by the model of the spec (oracle/model),
// and a failing sequence shrunk to a short reproducer. The steps:
//   generate.cpp  the next step, drawn from a seed and what the model knows
//   replay.cpp    sends steps through a Wire, judges and teaches the model
//   shrink.cpp    drops and simplifies steps while the failure stays
// The live Wire (HTTP to the target) is in contracts/suites/explore.cpp; the
// tests drive these through a Wire of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/http.hpp"
#include "core/profile.hpp"
#include "oracle/model.hpp"

namespace crh::contracts::explore {

// Where the key goes and what it is. The model only knows a request is
// authenticated, has no key or a wrong one; the forms are how a loose
// comparison or a key accepted from the wrong place shows.
enum class KeyForm : std::uint8_t {
  proper,       // Apikey: the key
  missing,      // no Apikey header
  empty,        // Apikey: (empty)
  random,       // Apikey: a random key of the same length
  same_prefix,  // Apikey: the key's first 8 characters, then others
  other_case,   // Apikey: the key with upper and lower case swapped (a different key unless it has no letters)
  longer,       // Apikey: the key and one more character
  shorter,      // Apikey: the key without its last character
  in_query,     // no Apikey header; ?apikey=KEY&api_key=KEY
  bearer,       // no Apikey header; Authorization: Bearer KEY
  cookie,       // no Apikey header; Cookie: Apikey=KEY
  x_api_key,    // no Apikey header; X-Api-Key: KEY
};
oracle::Auth auth_of(KeyForm form, std::string_view key);
std::string_view to_string(KeyForm form);

struct Step {
  enum class Kind : std::uint8_t {
    request,       // one operation
    burst,         // calls of one alias by several callers, released at one instant
    before_expiry, // waits until just before the tag made by step `alias_of` ends (the margin before it)
    after_expiry,  // waits until just after it ends (the margin after it)
  };
  Kind kind = Kind::request;
  std::uint32_t serial = 0;      // stable while shrinking: later steps name a tag step by it
  oracle::Operation op;          // request and burst (the first caller); at_ms is set when sent
  KeyForm key = KeyForm::proper;
  bool trailing_slash = false;   // the path ends in '/' (the spec is silent: the answer or a refusal)
  bool encode_all = false;       // every byte of the id percent-encoded (%63%72...: the same id, RFC 3986 6.2.2.2)
  // untag, call, burst: the alias the tag step with this serial picked (0:
  // op.id as written); waits: the tag step whose expiry is waited for.
  std::uint32_t alias_of = 0;
  std::vector<std::string> also_callers;  // burst: the callers besides op.caller
  // The GET of an agent after its snooze or wake (R1 compares their forms),
  // or of a database key after its write (E5 reads it back), drawn beside the
  // seed's stream: not counted in the sequence's length nor in --explore, so
  // a seed draws the other steps as it did before follow-ups were added.
  bool follow_up = false;
  // Sent no earlier than this (ms since the sequence began): a replay keeps
  // the time a step was first sent at, so a failure that needs a tag's
  // minutes to pass still shows once the steps between are dropped.
  std::int64_t not_before_ms = 0;
};
using Sequence = std::vector<Step>;

// One answer as the wire got it.
struct Answer {
  oracle::ObservedAnswer observed;
  std::string content_type;
  bool timed_out = false;  // no answer within the deadline (not the target's fault, not its success)
  bool dropped = false;    // the connection closed without an answer (sent twice when idempotent)
  std::string curl;        // the request, key as $CRH_API_KEY
  std::string described;   // "HTTP 200 application/json, 40 bytes: {...}" or why there was none
  core::HttpRequest request;  // as sent, for a reproducer script
};

// How steps reach a target: the live one over HTTP, or a test's.
class Wire {
 public:
  virtual ~Wire() = default;
  // Ms since the sequence began (the model's clock).
  virtual std::int64_t now_ms() = 0;
  virtual void sleep_until_ms(std::int64_t at_ms) = 0;
  // The key requests carry: whether a form of it is the key (auth_of).
  virtual std::string_view api_key() const = 0;
  // Sends the operations (one, or a burst's calls released together).
  virtual std::vector<Answer> send(const Step& step, const std::vector<oracle::Operation>& ops) = 0;
  // The run was interrupted (Ctrl-C) or the target is gone: stop between steps.
  virtual bool stopped() { return false; }
  // A wait for a tag's end further off than this is not made (a tag of the
  // profile's maximum minutes).
  virtual std::int64_t longest_wait_ms() { return 600'000; }
};

// What is known of the target to draw steps from, and the draws' edges.
struct Ground {
  std::string channel;
  std::vector<std::string> agents;   // as the target lists them
  std::vector<std::string> aliases;  // of the channel
  std::string caller_base;           // "+1999NNNN": the run's callers
  core::MinutesRange minutes;        // the profile's range
  bool cross_expiry = false;         // waits for tags to end (--slow, or a short --minute-ms)
  int waits = 0;                     // at most this many waits in the whole exploration
  std::int64_t longest_wait_ms = 600'000;
  bool call_hook = true;             // the profile's call hook; false: no calls are drawn
};

// The database keys exploration may create (the spec has no DELETE): fixed,
// under the probe prefix, named in the README.
const std::vector<std::string>& probe_keys();
// The tag names it sets (the restore finds tags by the prefix).
const std::vector<std::string>& probe_tags();

class Generator {
 public:
  Generator(std::uint64_t seed, Ground ground);
  // A sequence's opening: the reads that let the model predict.
  Sequence opening();
  // The next step, drawn from what `model` knows after `sent` (steps so far, with their serials).
  Step next(const oracle::Model& model, const Sequence& sent);
  // Draws a sequence length in [lo, hi].
  std::size_t length(std::size_t lo, std::size_t hi);
  std::uint32_t serial() { return ++serial_; }

 private:
  std::mt19937_64 rng_;
  std::mt19937_64 follow_ups_;  // whether a follow-up GET comes: its own stream
  Ground ground_;
  std::uint32_t serial_ = 0;
  std::vector<std::string> keys_;  // the sequence's keys: few, so writes and reads meet
  std::size_t spree_ = 0;          // tags to come in a row: every alias tagged, then one more
  std::size_t pick(std::size_t n);
  bool chance(double p);
  template <class T>
  const T& any(const std::vector<T>& v) {
    return v[pick(v.size())];
  }
  std::string caller();
  oracle::Operation call_of_any_alias(const std::string& channel);
  std::string agent_id();
  std::string minutes();
  std::string value();
};

// A step as sent: its operations with their times and what came back.
struct Sent {
  Step step;
  std::vector<oracle::Operation> ops;  // resolved (alias ids, times)
  std::vector<Answer> answers;
  std::string note;  // a wait: until when and why
  std::string picked;  // a tag answered 200: the alias it names
};

struct Failure {
  std::size_t step = 0;  // index into Replay::sent
  std::vector<oracle::Divergence> divergences;  // MUST first
  std::string_view rule() const { return divergences.front().rule; }
};

struct Replay {
  std::vector<Sent> sent;
  std::optional<Failure> failure;            // the first MUST divergence
  std::vector<std::pair<std::size_t, oracle::Divergence>> should;  // SHOULD divergences (step, what), first of each rule
  std::set<std::string> rules;               // the rules the predictions named
  std::size_t operations = 0;                // requests sent
  std::size_t follow_ups = 0;                // of which follow-up GETs (Step::follow_up): not drawn, not budgeted
  std::size_t timeouts = 0;                  // answers that did not come within the deadline
  std::size_t throttled = 0;                 // answers "not now" (core::throttled): judged by no rule
  std::int64_t margin_ms = 0;                // the last margin either side of a tag's end (expiry_margin_ms)
  bool interrupted = false;
};

// The margin either side of a tag's expiry within which either answer is
// accepted, from the slowest answer seen so far: the time a request is sent
// is not the time the target handles it.
std::int64_t expiry_margin_ms(std::int64_t slowest_answer_ms);

// Sends `sequence` from a fresh model (what the target holds is unknown),
// judging each answer; stops at the first MUST divergence.
Replay replay(const Sequence& sequence, const oracle::Model& start, const core::Profile& profile, Wire& wire);

// Judges one step's answers against the model and advances it (replay's
// heart, exposed so a driver can explore with a generator in the loop).
class Judge {
 public:
  Judge(oracle::Model start, const core::Profile& profile) : model_(std::move(start)), profile_(profile) {}
  const oracle::Model& model() const { return model_; }
  // Sends `step` through `wire` and judges it; appends to `out`.
  void step(const Step& step, Wire& wire, Replay& out);

 private:
  oracle::Model model_;
  const core::Profile& profile_;
  std::int64_t slowest_ms_ = 0;
  // Agent id: the last snooze or wake answered 200 (what it was, its body),
  // judged for its form against the next GET of that agent.
  std::map<std::string, std::pair<std::string, std::string>> forms_;
  std::optional<oracle::Divergence> same_form(const oracle::Operation& op, const oracle::ObservedAnswer& a);
};

// Shrinks a failing sequence: drops chunks of steps, then single steps, then
// simplifies what is left (the proper key, no trailing slash, fewer callers,
// plainer values), replaying each candidate; keeps a candidate that still
// breaks `rule`. At most `budget` replays.
struct Shrunk {
  Sequence sequence;
  Replay replay;     // of `sequence`: its failure
  std::size_t replays = 0;
  bool interrupted = false;
};
Shrunk shrink(const Sequence& failing, const Replay& failed, std::string_view rule,
              const std::function<Replay(const Sequence&)>& run, std::size_t budget,
              const std::function<bool()>& stopped = {});

}  // namespace crh::contracts::explore
