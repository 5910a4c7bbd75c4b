// A failed check's exchanges as a POSIX sh script.
#include "contracts/reproducer.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "core/api.hpp"
#include "contracts/reproducer_sh.hpp"
#include "contracts/reproducer_timing.hpp"
#include "core/curl.hpp"
#include "core/http1.hpp"

namespace crh::contracts {
namespace json = boost::json;
using core::api::Operation;

namespace {

constexpr std::string_view kMarker = "\x01";  // percent-encoded: %01

// What the script has read from an answer: the shell variable and the run's value.
struct Captured {
  std::string var;    // "v1"
  std::string value;  // "3"
  bool id = false;    // the alias id (else another field of the alias picked)
};

// A text as one shell word, the key written as $CRH_API_KEY and the replay's
// stand-in (an offered variant of the key) as its shell expression.
std::string word(std::string_view text, const ReplayStep& step, const core::Target& target) {
  if (step.stand_in.empty()) return sh_word(text, target.api_key);
  std::string out;
  for (std::size_t pos = 0;;) {
    const auto hit = text.find(step.stand_in, pos);
    const auto piece = text.substr(pos, hit == std::string_view::npos ? std::string_view::npos : hit - pos);
    if (!piece.empty()) out += sh_word(piece, target.api_key);
    if (hit == std::string_view::npos) return out.empty() ? "''" : out;
    out += step.stand_in_shell;
    pos = hit + step.stand_in.size();
  }
}

// The object of a tag's answer that holds the alias id it answered, and the
// key of the id there.
const json::object* alias_object(const json::value& v, const core::FieldNames& names, const std::string& id,
                                 std::string& key) {
  if (const auto* o = v.if_object()) {
    for (const auto& k : names.alias_id)
      if (const auto* f = o->if_contains(k))
        if ((f->is_string() && f->get_string() == id) || (f->is_int64() && std::to_string(f->get_int64()) == id)) {
          key = k;
          return o;
        }
    for (const auto& [k, child] : *o)
      if (const auto* found = alias_object(child, names, id, key)) return found;
  }
  return nullptr;
}

// What the service chose when it picked the alias: its id (under `id_key`)
// and every other string field but the tag sent and instants, as (key,
// value) pairs, the id first.
std::vector<std::pair<std::string, std::string>> chosen_fields(const json::object& alias, const std::string& id_key,
                                                               const std::string& id, const core::FieldNames& names) {
  std::vector<std::pair<std::string, std::string>> out{{id_key, id}};
  for (const auto& [k, v] : alias) {
    // A channel's id may equal an alias's: it is the check's, not the service's choice.
    if (!v.is_string() || k == id_key || k == names.alias_tag || k == names.alias_expiry ||
        std::string_view(k).find("channel") != std::string_view::npos)
      continue;
    const std::string value(v.get_string());
    const bool instant = value.size() >= 10 && value[4] == '-' && value[7] == '-';
    if (!value.empty() && !instant) out.push_back({std::string(k), value});
  }
  return out;
}

// The request's target with an alias the script read earlier written as its
// variable ("/channels/1/alias-numbers/"$v1"/calls"), as shell words.
std::string target_words(const ReplayStep& step, const core::Target& target, const std::vector<Captured>& captured) {
  const auto& r = step.request;
  const auto whole = [&] { return word(r.target, step, target); };
  const auto seen = core::api::recognize(target.dialect.call_hook, r.method, r.target);
  if (!seen || (seen->op != Operation::untag && seen->op != Operation::call)) return whole();
  // The latest alias of that id: the same alias tagged again may be another one next time.
  const auto var = std::find_if(captured.rbegin(), captured.rend(),
                                 [&](const Captured& c) { return c.id && c.value == seen->id; });
  if (var == captured.rend()) return whole();
  core::api::Sent sent{.id = std::string(kMarker), .channel = seen->channel, .caller = "x"};
  const auto path = [&] {
    const std::string t = core::api::request_as_sent(target, seen->op, sent).target;
    return t.substr(0, t.find('?'));
  };
  const std::string marked = path();
  sent.id = seen->id;
  const std::string valued = path();
  const auto at = marked.find("%01");
  if (at == std::string::npos || valued.size() + 3 < marked.size()) return whole();
  const std::size_t length = valued.size() + 3 - marked.size();
  if (r.target.compare(0, at + length, valued, 0, at + length) != 0) return whole();
  return word(r.target.substr(0, at), step, target) + "\"$" + var->var + "\"" +
         word(r.target.substr(at + length), step, target);
}

// The curl arguments after "send": method, URL, headers, body.
std::string curl_args(const ReplayStep& step, const core::Target& target, const std::vector<Captured>& captured) {
  const auto& r = step.request;
  std::string out;
  if (r.method != "GET" || !r.body.empty()) out += "-X " + sh_word(r.method) + " ";
  if (r.method == "HEAD") out = "-I ";
  out += "\"$base\"" + target_words(step, target, captured);
  // curl drops a header given with no value ("Name:"); "Name;" sends it empty.
  for (const auto& h : r.headers)
    out += " -H " + (h.value.empty() ? sh_word(h.name + ";") : word(h.name + ": " + h.value, step, target));
  if (!r.body.empty()) out += " --data-binary " + word(r.body, step, target);
  return out;
}

// The run's answer as the script compares it, the aliases read earlier by
// their variables: a JSON string "3" under any key but a channel's.
std::string expected_words(const std::string& body, const std::vector<Captured>& captured) {
  std::string out, literal;
  const auto flush = [&] {
    if (!literal.empty()) out += sh_word(literal);
    literal.clear();
  };
  for (std::size_t i = 0; i < body.size();) {
    bool replaced = false;
    if (body[i] == '"')
      for (auto c = captured.rbegin(); c != captured.rend(); ++c) {
        const std::string quoted = "\"" + c->value + "\"";
        if (body.compare(i, quoted.size(), quoted) != 0) continue;
        // Only a value: after a colon, and not a channel's.
        auto before = body.find_last_not_of(" \t", i == 0 ? 0 : i - 1);
        if (i == 0 || before == std::string::npos || body[before] != ':') continue;
        const auto key_end = body.rfind('"', before);
        const auto key_start = key_end == std::string::npos || key_end == 0 ? std::string::npos
                                                                             : body.rfind('"', key_end - 1);
        const std::string key =
            key_start == std::string::npos ? "" : body.substr(key_start + 1, key_end - key_start - 1);
        if (key.find("channel") != std::string::npos) continue;
        literal += '"';
        flush();
        out += "\"$" + c->var + "\"";
        literal += '"';
        i += quoted.size();
        replaced = true;
        break;
      }
    if (!replaced) literal += body[i++];
  }
  flush();
  return out.empty() ? "''" : out;
}

std::string seconds(std::chrono::microseconds us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(us.count()) / 1e6);
  return text;
}

// The comment lines of `text`, one per line of it.
std::string comment(const std::string& text) {
  std::string out = "# ";
  for (char c : text) out += c == '\n' ? std::string("\n# ") : std::string(1, c);
  return out + "\n";
}

std::string replaced(std::string text, std::string_view from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string first_must(const CheckResult& r) {
  for (const auto& f : r.findings)
    if (f.severity == Severity::must) return "rule " + std::string(f.rule) + ": " + f.text;
  return r.message;
}

// The script's lines, step by step: what it read from the answers so far.
class Script {
 public:
  Script(const CheckResult& r, const core::Target& target, std::chrono::microseconds failing_at)
      : r_(r), target_(target), failing_at_(failing_at) {}

  void step(std::size_t i, bool last) {
    const ReplayStep& step = *r_.evidence[i].replay;
    const std::string n = std::to_string(i + 1);
    // The step as the script sends it, its alias the one read this time.
    const std::string label = sh_word(step.request.method + " ") + target_words(step, target_, captured_);
    const auto at = last ? failing_at_ : step.at;
    if (sent_any_ && at - previous_ >= std::chrono::milliseconds(20))
      out_ += "sleep " + seconds(at - previous_) + "  # the pause the check made here\n";
    sent_any_ = true;
    previous_ = at;
    out_ += "\necho " + sh_word("step " + n + ": ") + label + "\n";
    out_ += "send " + curl_args(step, target_, captured_) + "\n";
    const auto seen = core::api::recognize(target_.dialect.call_hook, step.request.method, step.request.target);
    const bool tag = seen && seen->op == Operation::tag;
    std::vector<Captured> picked;
    std::optional<std::string> picked_id;
    if (tag) picked = read_pick(step, picked_id);
    const std::string status = step.status == 0 ? "000" : std::to_string(step.status);
    // Values are compared where they are the service's answer to this
    // check alone: not a list before the last (it holds what other clients
    // did), not a tag before the last (the alias it chose, compared by the
    // order of picks), not a refusal (its msg is free text: its form is
    // compared). The failing step's values are compared whatever it is: a
    // "reproduced" must never come from a correct service.
    const bool chosen = seen && (seen->op == Operation::list_aliases || seen->op == Operation::list_agents);
    // A success to a request without the right key fails on its status
    // alone: its values are whatever the service holds now.
    const bool keyed = std::any_of(step.request.headers.begin(), step.request.headers.end(), [&](const core::Header& h) {
      return core::http1::iequals(h.name, "Apikey") && h.value == target_.api_key;
    });
    const bool values = step.status != 0 && step.status < 400 && (last ? keyed : !chosen && !tag);
    // The last tag's answer is compared as it was when it is judged on the
    // alias it picked (R2); else that alias is the one picked this time.
    std::vector<Captured> known = captured_;
    if (!judged_on_pick()) known.insert(known.end(), picked.begin(), picked.end());
    const std::string expected = !values ? "" : last && tag ? expected_words(step.body, known)
                                                            : expected_words(step.body, captured_);
    if (!last) {
      out_ += "step " + n + " " + label + " " + status + " " + sh_word(media_type(step.content_type)) + " " +
              sh_word(field_names(step.body)) + (values ? " " + expected : "") + "\n";
      if (picked_id) order_of_picks(n, picked.front().var, *picked_id);
      if (seen && seen->op == Operation::list_aliases && step.status == 200)
        out_ += "tagged " + n + " " + sh_word(target_.dialect.fields.alias_tag) + " " +
                std::to_string(tagged_count(step.body, target_.dialect.fields.alias_tag)) + "\n";
    } else {
      if (picked_id) order_of_picks(n, picked.front().var, *picked_id);
      std::string same = "[ \"$status\" = " + status + " ]";
      if (step.status != 0)
        same += " && [ \"$(media)\" = " + sh_word(media_type(step.content_type)) + " ] && [ \"$(keys \"$d/body\")\" = " +
                sh_word(field_names(step.body)) + " ]";
      const bool alias_list = seen && seen->op == Operation::list_aliases && !picks_.empty();
      if (values && alias_list) {
        // The list of the aliases this script tagged: each as it was listed
        // (or not listed) in the failing run; other aliases hold what others did.
        for (const auto& [var, id] : picks_) {
          const auto listed = item_text(step.body, id_key_, id);
          const std::string got = "\"$(item " + sh_word(id_key_) + " \"$" + var + "\" | shown)\"";
          same += listed ? " && [ " + got + " = \"$(printf '%s' " + expected_words(*listed, captured_) + " | shown)\" ]"
                         : " && [ -z " + got + " ]";
        }
      } else if (values) {
        out_ += "\nexpected=" + expected + "\n";
        same += " && [ \"$(shown \"$d/body\")\" = \"$(printf '%s' \"$expected\" | shown)\" ]";
      }
      out_ += "if " + same + "; then\n";
      out_ += "  echo " + sh_word("REPRODUCED (exit 1): step " + n + " answered as in the failing run") + "\n";
      out_ += "  echo " + sh_word("  the failure: " + first_must(r_)) + "\n";
      out_ += "  echo \"  this time: HTTP $status $(excerpt)\"\n  exit 1\nfi\n";
      out_ += "echo " + sh_word("not reproduced (exit 0): step " + n + " answered otherwise than in the failing run") + "\n";
      out_ += "echo \"  this time: HTTP $status $(excerpt)\"\n";
      out_ += "echo " + sh_word("  the failing run got: " + r_.evidence[i].answer) + "\n";
      out_ += "[ -z \"$notes\" ] || echo \"  note:$notes\"\nexit 0\n";
    }
    captured_.insert(captured_.end(), picked.begin(), picked.end());
  }

  const std::string& text() const { return out_; }

  bool judged_on_pick() const {
    return std::any_of(r_.findings.begin(), r_.findings.end(),
                       [](const Finding& f) { return f.severity == Severity::must && f.rule == "R2"; });
  }

 private:
  const CheckResult& r_;
  const core::Target& target_;
  std::chrono::microseconds failing_at_;  // when the failing step is sent (failing_time)
  std::string out_;
  std::vector<Captured> captured_;
  int tags_ = 0;
  std::string id_key_;  // where the last tag answer held the alias id
  std::vector<std::pair<std::string, std::string>> picks_;  // each tag's variable and the run's alias id
  std::chrono::microseconds previous_{0};
  bool sent_any_ = false;

  // An alias a tag picked: read into variables (its id first), untagged at
  // the end. A tag the failing run saw refused may be taken this time: it is
  // untagged at the end too.
  std::vector<Captured> read_pick(const ReplayStep& step, std::optional<std::string>& picked_id) {
    std::vector<Captured> picked;
    const auto& names = target_.dialect.fields;
    boost::system::error_code ec;
    const auto answer = step.status == 200 ? json::parse(step.body, ec) : json::value();
    const auto id = step.status == 200 && !ec ? core::api::tagged_alias_id(names, answer) : std::nullopt;
    std::string key;
    const auto* alias = id ? alias_object(answer, names, *id, key) : nullptr;
    if (!alias) {
      out_ += "t=$(read_field " + sh_word(id_key_.empty() ? names.alias_id.front() : id_key_) +
              "); [ \"$status\" = 200 ] && [ -n \"$t\" ] && echo \"$t\" >> \"$d/made\"\n";
      return picked;
    }
    const std::string tag = "v" + std::to_string(++tags_);
    for (const auto& [field, value] : chosen_fields(*alias, key, *id, names)) {
      const std::string var = picked.empty() ? tag : tag + "_" + std::to_string(picked.size() + 1);
      out_ += var + "=$(read_field " + sh_word(field) + ")\n";
      picked.push_back({var, value, picked.empty()});
    }
    out_ += "[ \"$status\" = 200 ] && [ -n \"$" + tag + "\" ] && echo \"$" + tag + "\" >> \"$d/made\"\n";
    id_key_ = key;
    picked_id = id;
    return picked;
  }

  // Which earlier picks it repeats, as in the failing run: the order of the
  // picks is what a wrong choice changes, whatever the aliases are.
  void order_of_picks(const std::string& n, const std::string& var, const std::string& id) {
    std::string same, others;
    for (const auto& [earlier, earlier_id] : picks_) (earlier_id == id ? same : others) += " " + earlier;
    if (!picks_.empty())
      out_ += "picked " + n + " " + var + " " + sh_word(same) + " " + sh_word(others) + "\n";
    picks_.push_back({var, id});
  }
};

// One request of the set-up as a "send" line, its alias (if any) the shell's "$a".
std::string setup_send(const core::Target& target, Operation op, core::api::Sent sent) {
  ReplayStep step;
  step.request = core::api::request_as_sent(target, op, sent);
  step.request.headers.push_back({"Apikey", target.api_key});
  return "send " + replaced(curl_args(step, target, {}), "%01", "'\"$a\"'") + "\n";
}

// What the failing run had found when the check began, made again before
// its requests: the database entries the check reads as the run had left them
// (its last write to each spelling of each key), every alias of the channel
// once tagged, called and untagged when calls had bound callers before (a
// lock a service keeps past its tag shows only then), and every alias tagged
// when the failing step is a tag the run saw refused. Empty when the run
// shows none of these. `before`: the run's exchanges before the check's.
std::string set_up(const CheckResult& r, std::size_t first, std::size_t last, const core::Target& target,
                   const std::vector<ReplayStep>& before, std::string& what) {
  const auto& hook = target.dialect.call_hook;
  const auto decoded = [](const std::string& id) { return core::api::percent_decode(id).value_or(id); };
  std::set<std::string> keys, callers;
  bool tags = false, tag_before_last = false;
  for (std::size_t i = first; i <= last; ++i) {
    const auto& q = r.evidence[i].replay->request;
    const auto seen = core::api::recognize(hook, q.method, q.target);
    if (!seen) continue;
    if (seen->op == Operation::call) callers.insert(core::api::request_parameter(q, hook.parameter).value_or(""));
    if (seen->op == Operation::db_get || seen->op == Operation::db_set) keys.insert(decoded(seen->id));
    if (seen->op == Operation::tag && seen->channel == target.channel) {
      tags = true;
      tag_before_last = tag_before_last || i < last;
    }
  }
  std::string out;
  std::vector<const ReplayStep*> writes;  // the last write of each spelling, in the run's order
  std::optional<std::string> caller;      // a caller the run connected before, not one of the check's
  for (const auto& step : before) {
    const auto seen = core::api::recognize(hook, step.request.method, step.request.target);
    if (!seen || step.status != 200) continue;
    if (seen->op == Operation::db_set && keys.count(decoded(seen->id))) {
      std::erase_if(writes, [&](const ReplayStep* w) { return w->request.target == step.request.target; });
      writes.push_back(&step);
    }
    if (seen->op == Operation::call && seen->channel == target.channel && !caller)
      if (auto c = core::api::request_parameter(step.request, hook.parameter); c && !callers.count(*c)) caller = c;
  }
  for (const auto* w : writes) out += "send " + curl_args(*w, target, {}) + "\n";
  if (!writes.empty()) what = "the database entries it reads written as the run had left them";
  const auto& failing = *r.evidence[last].replay;
  const auto failing_op = core::api::recognize(hook, failing.request.method, failing.request.target);
  const bool fill = failing_op && failing_op->op == Operation::tag && failing.status != 200 && failing.status != 0 &&
                    !tag_before_last && core::api::request_parameter(failing.request, "tag") &&
                    core::api::request_parameter(failing.request, "minutes");
  const bool cycle = tags && caller && hook.enabled;
  if (!cycle && !fill) return out;
  const auto also = [&](const std::string& more) { what += (what.empty() ? "" : "; ") + more; };
  if (cycle) also("every alias of the channel tagged, called by " + *caller + " and untagged, as callers had been bound before");
  if (fill) also("every alias of the channel tagged, as when the run's tag was refused");
  const std::string id_key = target.dialect.fields.alias_id.front();
  const core::api::Sent tag{.channel = target.channel, .tag = "crh-probe-set-up", .minutes = "10"};
  out += setup_send(target, Operation::list_aliases, {.channel = target.channel});
  out += "n=$(tr ',{' '\\n\\n' < \"$d/body\" | grep -c '^[[:space:]]*\"'" + sh_word(id_key) +
         "'\"[[:space:]]*:' || :)\n";
  if (cycle) {
    out += "i=0\nwhile [ \"$i\" -lt \"$n\" ]; do\n  " + setup_send(target, Operation::tag, tag);
    out += "  a=$(read_field " + sh_word(id_key) + "); [ \"$status\" = 200 ] && [ -n \"$a\" ] || break\n";
    out += "  echo \"$a\" >> \"$d/made\"\n";
    out += "  " + setup_send(target, Operation::call,
                              {.id = std::string(kMarker), .channel = target.channel, .caller = *caller});
    out += "  " + setup_send(target, Operation::untag, {.id = std::string(kMarker), .channel = target.channel});
    out += "  i=$((i + 1))\ndone\n";
  }
  if (fill) {
    out += "i=0\nwhile [ \"$i\" -le \"$n\" ]; do\n  " + setup_send(target, Operation::tag, tag);
    out += "  a=$(read_field " + sh_word(id_key) + "); [ \"$status\" = 200 ] && [ -n \"$a\" ] || break\n";
    out += "  echo \"$a\" >> \"$d/made\"; i=$((i + 1))\ndone\n";
  }
  return out;
}

}  // namespace

std::optional<std::size_t> first_step(const CheckResult& r) {
  if (!r.failing_step) return std::nullopt;
  const std::size_t last = *r.failing_step;
  // A run-wide check's evidence cites other checks' exchanges: the one that
  // failed is sent alone, out of the sequence it was part of.
  return r.evidence[last].replay && r.evidence[last].replay->cited ? last : 0;
}

std::string reproducer(const CheckResult& r, const core::Target& target, const std::vector<ReplayStep>& before) {
  if (r.outcome != Outcome::fail) return {};
  const std::string what = first_must(r);
  const std::string head = "# crh reproducer of " + r.id + ": ";
  const auto cannot = [&](const std::string& why) {
    return head + why + ": run the rerun line below\n" + comment("What failed: " + what) + "echo " +
           sh_word("not reproducible by a script (exit 2): " + why + "; run the rerun line at the top of "
                            "this file") +
           "\nexit 2\n";
  };
  if (r.needs_one_instant)
    return cannot("this failure shows only with callers released at one instant, which a shell cannot do");
  if (!r.failing_step) return cannot("the check failed before it sent anything");
  const std::size_t last = *r.failing_step;
  const std::size_t first = *first_step(r);
  for (std::size_t i = first; i <= last; ++i)
    if (!r.evidence[i].replay)
      return cannot("not self-contained: step " + std::to_string(i + 1) + " (" + r.evidence[i].curl +
                    ") is no HTTP request a shell script can send");
  const auto when = failing_time(r, first, last, target);
  if (!when.cannot.empty()) return cannot(when.cannot);

  core::api::Sent untag{.id = std::string(kMarker), .channel = target.channel};
  const std::string untag_path = core::api::request_as_sent(target, Operation::untag, untag).target;
  std::string out = head + "sends " + (first == last ? "the request that failed" : "its " + std::to_string(last + 1) +
                                                                                      " requests") +
                    " again; exit 1 when the service answers as in the failing run, 0 when it does not (a step "
                    "before the last answering otherwise: the state the failure needs does not hold there); what "
                    "the run shows the check had found is set up first\n";
  out += comment("What failed: " + what);
  if (first == last && last > 0)
    out += "# The check that made it sent it among others; sent alone it may find another state.\n";
  if (!when.moved.empty()) out += comment(when.moved);
  out += "# Needs curl and CRH_API_KEY (the target's key); CRH_BASE_URL=http://host:port sends it elsewhere.\n"
         "# Every alias it tags is untagged when it ends.\n";
  out += replaced(replaced(kShPrelude, "@BASE@", sh_word(target.base.to_string())), "@UNTAG@",
                  replaced(sh_word(untag_path), "%01", "'\"$a\"'"));
  Script script(r, target, when.at);
  for (std::size_t i = first; i <= last; ++i) script.step(i, i == last);
  std::string state;
  const std::string found = set_up(r, first, last, target, before, state);
  if (!found.empty()) out += "\necho " + sh_word("set-up: " + state) + "\n" + found;
  return out + script.text();
}

}  // namespace crh::contracts
