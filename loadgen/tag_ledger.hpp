// The load's own tags, alias by alias, to judge a tag refused as "every alias
// is tagged" (the profile's all_tagged) against the load's history (issue 22,
// item 10): when the load had deleted, with an acknowledged answer, every tag
// it made on some alias before the refused tag was sent, and nothing it sent
// since can have taken that alias, the refusal is a violation with its proof.
//
// It judges only what the load's history makes certain. It takes the load for
// the channel's only tagging client, so it is used only when that holds as far
// as the load can see (unsharded, no tag but crh's own on the channel at
// set-up; the caller decides). An alias is known untagged only once a tag of
// the load returned it (then nobody else held it) and the load's untag of it
// was answered with success; a tag whose answer is unknown (no answer, a 5xx,
// or a success naming no alias) may hold any alias, so it makes every alias
// unknown again; and since the target may run it at any time after it was
// sent, even after the load gave up on it, it may take one alias the load
// frees later: a refusal is a violation only when more aliases are known
// untagged than there were such tags. A refusal is judged only once every tag
// sent before its answer came has answered too. Not thread-safe: the engine
// holds its lock.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "oracle/checker.hpp"
#include "oracle/history.hpp"

namespace crh::loadgen {

class TagLedger {
 public:
  // At most this many refusals wait for the tags in flight with them; later
  // ones are not judged (no false alarm, only a missed one).
  static constexpr std::size_t kMaxPending = 4096;

  // A tag about to be written: its ticket, for tag_done.
  std::uint64_t tag_sent();
  // The tag's answer. `op.alias` is the alias a success returned ("" when
  // none could be read); `refused_all_tagged`: the answer said every alias is
  // tagged. Returns the refusals this answer made certain to be violations.
  std::vector<oracle::Violation> tag_done(std::uint64_t ticket, const oracle::Op& op, bool refused_all_tagged);
  // An untag's answer (op.alias: the alias addressed).
  void untag_done(const oracle::Op& op);

  std::uint64_t judged() const { return judged_; }  // refusals judged (found free alias or not)

 private:
  struct AliasState {
    bool free = false;            // known untagged since `free_since`
    std::uint64_t free_since = 0;  // the ledger's clock when the untag's success came
    oracle::Op tag, untag;         // the load's last tag that returned it, and the untag that freed it
  };
  struct Pending {
    oracle::Op refused;
    std::uint64_t horizon = 0;       // every tag sent before this must have answered
    std::vector<std::string> free;  // aliases known untagged throughout, so far
  };
  std::vector<oracle::Violation> resolve();
  oracle::Violation violation(const Pending& p) const;

  std::uint64_t clock_ = 0;           // orders the ledger's events as the engine saw them
  std::size_t unknown_tags_ = 0;      // tags of unknown outcome so far: each may hold one alias
  std::set<std::uint64_t> in_flight_;  // tickets (send times) of tags not answered yet
  std::unordered_map<std::string, AliasState> aliases_;
  std::vector<Pending> pending_;
  std::uint64_t judged_ = 0;
};

}  // namespace crh::loadgen
