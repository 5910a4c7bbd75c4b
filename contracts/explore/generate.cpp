// Drawing steps: every endpoint and the call hook, with inputs at the edges
// the issue names (callers sharing a prefix or suffix or differing by '+',
// odd values, minutes around the profile's range, calls across a tag's whole
// lifetime, lists read in every state, trailing slashes, wrong keys).
#include "contracts/explore/explore.hpp"

#include <algorithm>

namespace crh::contracts::explore {

using Endpoint = core::api::Operation;

const std::vector<std::string>& probe_keys() {
  static const std::vector<std::string> keys{
      "crh-probe-x",   "crh-probe-X", "crh-probe-x.", "crh-probe-x.y", "crh-probe-x y",
      "crh-probe-x%y", "crh-probe-é", "crh-probe-x-", "crh-probe-xy",
  };
  return keys;
}

const std::vector<std::string>& probe_tags() {
  static const std::vector<std::string> tags{"crh-probe-a", "crh-probe-b", "crh-probe-A", "crh-probe-a ",
                                             "crh-probe-a-tag-name-longer-than-thirty-two-bytes-é"};
  return tags;
}

std::string_view to_string(KeyForm form) {
  switch (form) {
    case KeyForm::proper: return "the key";
    case KeyForm::missing: return "no Apikey header";
    case KeyForm::empty: return "an empty Apikey";
    case KeyForm::random: return "a random key of the same length";
    case KeyForm::same_prefix: return "a key sharing the first 8 characters";
    case KeyForm::other_case: return "the key with its case swapped";
    case KeyForm::longer: return "the key with one more character";
    case KeyForm::shorter: return "the key without its last character";
    case KeyForm::in_query: return "the key in the query string, no Apikey header";
    case KeyForm::bearer: return "the key as a Bearer token, no Apikey header";
    case KeyForm::cookie: return "the key in a Cookie, no Apikey header";
    case KeyForm::x_api_key: return "the key in X-Api-Key, no Apikey header";
  }
  return "?";
}

oracle::Auth auth_of(KeyForm form, std::string_view key) {
  switch (form) {
    case KeyForm::proper: return oracle::Auth::key;
    case KeyForm::other_case:
      // A key without letters is itself with its case swapped.
      return std::any_of(key.begin(), key.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); })
                 ? oracle::Auth::wrong
                 : oracle::Auth::key;
    case KeyForm::missing:
    case KeyForm::in_query:
    case KeyForm::bearer:
    case KeyForm::cookie:
    case KeyForm::x_api_key: return oracle::Auth::missing;
    default: return oracle::Auth::wrong;
  }
}

Generator::Generator(std::uint64_t seed, Ground ground)
    : rng_(seed), follow_ups_(seed ^ 0x9e3779b97f4a7c15ULL), ground_(std::move(ground)) {
  if (ground_.aliases.empty()) ground_.aliases = {"1"};
  if (ground_.agents.empty()) ground_.agents = {"1"};
}

std::size_t Generator::pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
bool Generator::chance(double p) { return std::bernoulli_distribution(p)(rng_); }
std::size_t Generator::length(std::size_t lo, std::size_t hi) { return lo + pick(hi - lo + 1); }

// Distinct callers that a loose comparison would take for one another.
std::string Generator::caller() {
  const std::string a = ground_.caller_base + "00", b = ground_.caller_base + "01";
  switch (pick(10)) {
    case 0: return a.substr(1);                             // without '+'
    case 1: return a.substr(0, a.size() - 1) + "9";          // all but the last digit shared
    case 2: return "+2" + a.substr(2);                      // the same suffix
    case 3: return a + "1";                                 // a is its prefix, another length
    case 4: return ground_.caller_base + "02";
    case 5:
    case 6: return b;
    default: return a;
  }
}

std::string Generator::agent_id() {
  if (!chance(0.1)) return any(ground_.agents);
  // Unknown ids that cannot be read as a listed one, whatever the target's
  // ids are (a numeric id may well take "0101" for 101).
  return pick(2) == 0 ? "crh-probe-agent" : any(ground_.agents) + "9";
}

std::string Generator::minutes() {
  const auto lo = ground_.minutes.min, hi = ground_.minutes.max;
  if (ground_.cross_expiry && chance(0.6)) return std::to_string(std::max<std::int64_t>(lo, 1));
  switch (pick(16)) {
    case 0: return std::to_string(lo - 1);
    case 1: return std::to_string(hi);
    case 2: return std::to_string(hi + 1);
    case 3: return "0";
    case 4: return "-1";
    case 5: return hi > lo ? std::to_string(lo) + ".5" : "1.5";
    case 6: return "abc";
    case 7: return "";
    case 8: return "99999999999999999999";
    case 9: return std::to_string(lo) + "e0";
    default: return std::to_string(std::clamp<std::int64_t>(lo + static_cast<std::int64_t>(pick(10)), lo, hi));
  }
}

std::string Generator::value() {
  static const std::vector<std::string> odd{
      "v", "", " v ", "a  b", "é", "日本語", "🙂", "e\u0301", "\u202Eabc", "null", "\"q\"", "a&b=c", "+", "%20",
      "line\nbreak", "tab\there", "0", "{}",
  };
  // Long, not huge: the spec shows no size, and a service may cap it.
  if (chance(0.1)) return std::string(200 + pick(800), 'x') + "y";
  if (chance(0.08)) return "";
  if (chance(0.3)) return "v" + std::to_string(pick(1000));
  return any(odd);
}

// A call of one of the channel's aliases by a drawn caller. Two draws are
// never a call's arguments: their order would be unspecified (clang's differs
// from gcc's, so one seed explored otherwise in its builds). They are made in
// the order gcc made them (the caller first), so seeds explore as before.
oracle::Operation Generator::call_of_any_alias(const std::string& channel) {
  std::string who = caller();
  const std::string& alias = any(ground_.aliases);
  return oracle::ops::call(channel, alias, std::move(who));
}

Sequence Generator::opening() {
  // Two keys a loose comparison would take for one (case, a dot), or any two.
  static const std::vector<std::pair<std::string, std::string>> near{
      {"crh-probe-x", "crh-probe-X"}, {"crh-probe-x", "crh-probe-x."}, {"crh-probe-x.y", "crh-probe-xy"},
      {"crh-probe-x", "crh-probe-x-"}};
  const auto& pair = any(near);
  keys_ = chance(0.5) ? std::vector<std::string>{pair.first, pair.second}
                      : std::vector<std::string>{any(probe_keys()), any(probe_keys())};
  spree_ = 0;
  Sequence out;
  Step aliases;
  aliases.serial = serial();
  aliases.op = oracle::ops::list_aliases(ground_.channel);
  out.push_back(aliases);
  Step agents;
  agents.serial = serial();
  agents.op = oracle::ops::list_agents();
  out.push_back(agents);
  return out;
}

Step Generator::next(const oracle::Model& model, const Sequence& sent) {
  if (keys_.empty()) keys_ = {probe_keys().front()};
  Step s;
  s.serial = serial();
  // The GET of an agent just snoozed or woken, in the state the answer
  // showed: R1 compares their forms (replay.cpp).
  if (!sent.empty() && sent.back().kind == Step::Kind::request && sent.back().key == KeyForm::proper &&
      (sent.back().op.endpoint == Endpoint::snooze || sent.back().op.endpoint == Endpoint::wake) &&
      std::bernoulli_distribution(0.5)(follow_ups_)) {
    s.op = oracle::ops::get_agent(sent.back().op.id);
    s.follow_up = true;
    return s;
  }
  // The GET of a database key just written: what was stored is read back at
  // once (E5), whatever the sequence draws next.
  if (!sent.empty() && sent.back().kind == Step::Kind::request && sent.back().key == KeyForm::proper &&
      sent.back().op.endpoint == Endpoint::db_set && std::bernoulli_distribution(0.5)(follow_ups_)) {
    s.op = oracle::ops::db_get(sent.back().op.id);
    s.follow_up = true;
    return s;
  }
  std::vector<std::uint32_t> tags;  // the tag steps so far, newest last
  for (const auto& x : sent)
    if (x.kind == Step::Kind::request && x.op.endpoint == Endpoint::tag && x.key == KeyForm::proper) tags.push_back(x.serial);
  const auto recent_tag = [&]() -> std::uint32_t {
    if (tags.empty()) return 0;
    return chance(0.6) ? tags.back() : tags[pick(tags.size())];
  };
  // An alias: one a tag step picked, else one the model knows, else any listed.
  const auto alias = [&](Step& step) {
    step.alias_of = chance(0.75) ? recent_tag() : 0;
    const auto facts = model.channel(ground_.channel);
    if (!facts.aliases.empty() && chance(0.7)) step.op.id = any(facts.aliases).id;
    else step.op.id = any(ground_.aliases);
    if (step.alias_of == 0 && chance(0.06)) step.op.id = chance(0.5) ? "crh-probe-alias" : step.op.id + "9";
  };
  const std::string& ch = ground_.channel;
  // Callers racing for a tag just made: the first-caller-wins rule under concurrency.
  if (ground_.call_hook && !sent.empty() && !tags.empty() && sent.back().serial == tags.back() && chance(0.3)) {
    s.kind = Step::Kind::burst;
    s.op = call_of_any_alias(ch);
    s.alias_of = tags.back();
    const std::size_t more = 1 + pick(5);
    for (std::size_t i = 0; i < more; ++i) s.also_callers.push_back(ground_.caller_base + std::to_string(10 + i));
    return s;
  }
  // Around a tag's end: a call just before it (may it slide the end?), the
  // end itself, then a look (is the tag gone, the lock with it?).
  if (!sent.empty() && ground_.call_hook) {
    const Step& last = sent.back();
    const auto tag_of_wait = last.alias_of;
    if (last.kind == Step::Kind::before_expiry && chance(0.7)) {
      s.op = call_of_any_alias(ch);
      s.alias_of = tag_of_wait;
      return s;
    }
    if (last.kind == Step::Kind::after_expiry && chance(0.8)) {
      switch (pick(3)) {
        case 0: s.op = oracle::ops::list_aliases(ch); break;
        case 1: s.op = oracle::ops::call(ch, any(ground_.aliases), ground_.caller_base + "03"), s.alias_of = tag_of_wait; break;
        default: s.op = oracle::ops::tag(ch, any(probe_tags()), 1);  // is the ended tag's alias free again?
      }
      return s;
    }
    if (sent.size() >= 2 && sent[sent.size() - 2].kind == Step::Kind::before_expiry &&
        last.op.endpoint == Endpoint::call && ground_.waits > 0 && chance(0.6)) {
      --ground_.waits;
      s.kind = Step::Kind::after_expiry;
      s.alias_of = sent[sent.size() - 2].alias_of;
      return s;
    }
  }
  if (spree_ > 0 || chance(0.02)) {  // every alias tagged, then one more: refused, never a live tag replaced
    spree_ = spree_ > 0 ? spree_ - 1 : ground_.aliases.size();
    s.op = oracle::ops::tag(ch, any(probe_tags()), 1);
    s.op.minutes = std::to_string(std::max<std::int64_t>(ground_.minutes.min, 1));
    return s;
  }
  const int roll = static_cast<int>(pick(100));
  if (ground_.cross_expiry && roll < 5 && !tags.empty() && ground_.waits > 0) {
    --ground_.waits;
    s.kind = chance(0.5) ? Step::Kind::before_expiry : Step::Kind::after_expiry;
    s.alias_of = recent_tag();
    return s;
  }
  if (roll < 7) s.op = oracle::ops::list_agents();
  else if (roll < 13) s.op = oracle::ops::get_agent(agent_id());
  else if (roll < 19) s.op = oracle::ops::snooze(agent_id());
  else if (roll < 25) s.op = oracle::ops::wake(agent_id());
  else if (roll < 33) s.op = oracle::ops::db_get(any(keys_));
  else if (roll < 42) {
    std::string v = value();  // before the key: the order gcc gave them as arguments (call_of_any_alias)
    s.op = oracle::ops::db_set(any(keys_), std::move(v));
    if (chance(0.05)) s.op.value.reset();
  } else if (roll < 51) s.op = oracle::ops::list_aliases(ch);
  else if (roll < 63) {
    s.op = oracle::ops::tag(ch, any(probe_tags()), 1);
    s.op.minutes = minutes();
    if (chance(0.04)) s.op.minutes.reset();
    if (chance(0.03)) s.op.tag.reset();
    else if (chance(0.03)) s.op.tag = "";
  } else if (roll < 71) {
    s.op = oracle::ops::untag(ch, "");
    alias(s);
  } else if (!ground_.call_hook) {
    s.op = oracle::ops::list_aliases(ch);
  } else if (roll < 95) {
    s.op = oracle::ops::call(ch, "", caller());
    alias(s);
  } else {
    s.kind = Step::Kind::burst;
    s.op = oracle::ops::call(ch, "", caller());
    alias(s);
    const std::size_t more = 1 + pick(3);
    for (std::size_t i = 0; i < more; ++i) {
      std::string c = ground_.caller_base + std::to_string(10 + i);
      if (c != s.op.caller) s.also_callers.push_back(c);
    }
    return s;
  }
  if (chance(0.08)) {
    static const std::vector<KeyForm> bad{KeyForm::missing, KeyForm::empty,  KeyForm::random,   KeyForm::same_prefix,
                                          KeyForm::other_case, KeyForm::longer, KeyForm::shorter, KeyForm::in_query,
                                          KeyForm::bearer,  KeyForm::cookie, KeyForm::x_api_key};
    s.key = any(bad);
  }
  // Not on a write: a service may take "key/" for a key of its own, which
  // the run's restore does not know to put back.
  if (chance(0.04) && s.op.endpoint != Endpoint::db_set) s.trailing_slash = true;
  if (chance(0.1) && (s.op.endpoint == Endpoint::db_get || s.op.endpoint == Endpoint::db_set)) s.encode_all = true;
  return s;
}

}  // namespace crh::contracts::explore
