// A failed check's exchanges as a POSIX sh script.
#include "contracts/reproducer.hpp"

#include <boost/json.hpp>
#include <cstdio>
#include <set>

#include "core/api.hpp"
#include "core/curl.hpp"

namespace crh::contracts {
namespace json = boost::json;
using core::api::Operation;

namespace {

constexpr std::string_view kMarker = "\x01";  // percent-encoded: %01

// What the script has read from an answer: the shell variable and the run's value.
struct Captured {
  std::string var;    // "v1"
  std::string value;  // "3"
};

// A text as one shell word, the key written as $CRH_API_KEY and the replay's
// stand-in (an offered variant of the key) as its shell expression.
std::string word(std::string_view text, const Replay& step, const core::Target& target) {
  if (step.stand_in.empty()) return core::shell_word(text, target.api_key);
  std::string out;
  for (std::size_t pos = 0;;) {
    const auto hit = text.find(step.stand_in, pos);
    const auto piece = text.substr(pos, hit == std::string_view::npos ? std::string_view::npos : hit - pos);
    if (!piece.empty()) out += core::shell_word(piece, target.api_key);
    if (hit == std::string_view::npos) return out.empty() ? "''" : out;
    out += step.stand_in_shell;
    pos = hit + step.stand_in.size();
  }
}

// The key of the alias id a tag answered: where to read it from next time.
std::optional<std::string> id_key(const json::value& v, const core::FieldNames& names, const std::string& id) {
  if (const auto* o = v.if_object()) {
    for (const auto& key : names.alias_id)
      if (const auto* f = o->if_contains(key)) {
        if (f->is_string() && f->get_string() == id) return key;
        if (f->is_int64() && std::to_string(f->get_int64()) == id) return key;
      }
    for (const auto& [k, child] : *o)
      if (auto found = id_key(child, names, id)) return found;
  }
  return std::nullopt;
}

// The request's target with an alias the script read earlier written as its
// variable ("/channels/1/alias-numbers/"$v1"/calls"), as shell words.
std::string target_words(const Replay& step, const core::Target& target, const std::vector<Captured>& captured) {
  const auto& r = step.request;
  const auto whole = [&] { return word(r.target, step, target); };
  const auto seen = core::api::recognize(target.dialect.call_hook, r.method, r.target);
  if (!seen || (seen->op != Operation::untag && seen->op != Operation::call)) return whole();
  const auto var = std::find_if(captured.begin(), captured.end(), [&](const Captured& c) { return c.value == seen->id; });
  if (var == captured.end()) return whole();
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
std::string curl_args(const Replay& step, const core::Target& target, const std::vector<Captured>& captured) {
  const auto& r = step.request;
  std::string out;
  if (r.method != "GET" || !r.body.empty()) out += "-X " + core::shell_word(r.method) + " ";
  if (r.method == "HEAD") out = "-I ";
  out += "\"$base\"" + target_words(step, target, captured);
  // curl drops a header given with no value ("Name:"); "Name;" sends it empty.
  for (const auto& h : r.headers)
    out += " -H " + (h.value.empty() ? core::shell_word(h.name + ";") : word(h.name + ": " + h.value, step, target));
  if (!r.body.empty()) out += " --data-binary " + word(r.body, step, target);
  return out;
}

// The run's answer as the script compares it, the aliases read earlier by
// their variables: a JSON string "3" under any key but a channel's.
std::string expected_words(const std::string& body, const std::vector<Captured>& captured) {
  std::string out, literal;
  const auto flush = [&] {
    if (!literal.empty()) out += core::shell_word(literal);
    literal.clear();
  };
  for (std::size_t i = 0; i < body.size();) {
    bool replaced = false;
    if (body[i] == '"')
      for (const auto& c : captured) {
        const std::string quoted = "\"" + c.value + "\"";
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
        out += "\"$" + c.var + "\"";
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

// What keys() in the script prints for `body`: every quoted name before a
// colon, sorted, each followed by a space.
std::string field_names(const std::string& body) {
  std::set<std::string> names;
  std::string line;
  const auto take = [&] {
    auto at = line.find_first_not_of(" \t\r\n");
    if (at != std::string::npos && line[at] == '"') {
      const auto end = line.find('"', at + 1);
      if (end != std::string::npos) {
        const auto colon = line.find_first_not_of(" \t", end + 1);
        if (colon != std::string::npos && line[colon] == ':') names.insert(line.substr(at, end - at + 1));
      }
    }
    line.clear();
  };
  for (char c : body) {
    if (c == ',' || c == '{' || c == '}' || c == '[' || c == '\n') take();
    else line += c;
  }
  take();
  std::string out;
  for (const auto& n : names) out += n + " ";
  return out;
}

std::string seconds(std::chrono::microseconds us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(us.count()) / 1e6);
  return text;
}

std::string media_type(std::string_view content_type) {
  auto end = content_type.find(';');
  std::string out(content_type.substr(0, end));
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// The comment lines of `text`, one per line of it.
std::string comment(const std::string& text) {
  std::string out = "# ";
  for (char c : text) out += c == '\n' ? std::string("\n# ") : std::string(1, c);
  return out + "\n";
}

const char* kHelpers = R"sh(LC_ALL=C; export LC_ALL
base=${CRH_BASE_URL:-@BASE@}
[ -n "${CRH_API_KEY:-}" ] || { echo "export CRH_API_KEY (the target's key) first" >&2; exit 2; }
d=$(mktemp -d) || exit 2
made=''
undo() {
  for a in $made; do curl -sS -o /dev/null -X DELETE "$base"@UNTAG@ -H "Apikey: $CRH_API_KEY" || :; done
  rm -rf "$d"
}
trap undo EXIT
trap 'exit 2' HUP INT TERM
# send ARGS: curl ARGS; the answer in $d/body and $d/head, its status in $status (000: no answer)
send() { status=$(curl -sS -o "$d/body" -D "$d/head" -w '%{http_code}' "$@" 2>"$d/err") || status=000; }
# the answer's body, its instants masked, at most 400 bytes
shown() { sed -E 's/"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+(Z|[+-][0-9:]+)?"/"(an instant)"/g' "$@"; }
excerpt() { dd bs=400 count=1 2>/dev/null < "$d/body"; }
media() { tr -d '\r' < "$d/head" | sed -n 's/^[Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Tt][Yy][Pp][Ee]:[[:space:]]*\([^;[:space:]]*\).*/\1/p' | tr '[:upper:]' '[:lower:]' | sed -n '$p'; }
# keys: the field names of the answer, sorted (the form of the answer, not its values)
keys() { tr ',{}[' '\n\n\n\n' < "$1" | sed -n 's/^[[:space:]]*\("[^"]*"\)[[:space:]]*:.*/\1/p' | sort -u | tr '\n' ' '; }
# step N WHAT STATUS MEDIA KEYS [BODY]: the step answered as in the failing run (status, type, field names, and
# the body but for its instants when given: a list's items hold what other clients did), else it ends
step() {
  [ "$status" = "$3" ] && { [ "$status" = 000 ] || { [ "$(media)" = "$4" ] && [ "$(keys "$d/body")" = "$5" ] &&
    { [ $# -lt 6 ] || [ "$(shown "$d/body")" = "$(printf '%s' "$6" | shown)" ]; }; }; } && return 0
  echo "not reproduced (exit 0): step $1 ($2) answered otherwise than in the failing run, before the step that failed: the service no longer fails this way, or the state the failure needs does not hold here"
  echo "  this time: HTTP $status $(media) $(excerpt)"
  echo "  the failing run: HTTP $3 $4 with the fields $5"
  exit 0
}
# read KEY: the first value under "KEY" in the answer (a string or a number)
read_field() { tr ',{}' '\n\n\n' < "$d/body" | sed -n "s/^[[:space:]]*\"$1\"[[:space:]]*:[[:space:]]*\"\{0,1\}\([^\"]*\)\"\{0,1\}[[:space:]]*\$/\1/p" | sed -n 1p; }
)sh";

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

}  // namespace

std::string reproducer(const CheckResult& r, const core::Target& target) {
  if (r.outcome != Outcome::fail) return {};
  const std::string what = first_must(r);
  const std::string head = "# crh reproducer of " + r.id + ": ";
  if (r.needs_one_instant)
    return head + "this failure shows only with callers released at one instant, which a shell cannot do: run the "
                  "rerun line below\n" + comment("What failed: " + what);
  if (!r.failing_step)
    return head + "the check failed before it sent anything: run the rerun line below\n" + comment("What failed: " + what);
  const std::size_t last = *r.failing_step;
  for (std::size_t i = 0; i <= last; ++i)
    if (!r.evidence[i].replay)
      return head + "not self-contained: step " + std::to_string(i + 1) + " (" + r.evidence[i].curl +
             ") is no HTTP request a shell script can send: run the rerun line below\n" +
             comment("What failed: " + what);

  core::api::Sent untag{.id = std::string(kMarker), .channel = target.channel};
  const std::string untag_path = core::api::request_as_sent(target, Operation::untag, untag).target;
  std::string body = head + "sends its " + std::to_string(last + 1) +
                     " request(s) again; exit 1 when the service answers the last as in the failing run, 0 when it "
                     "does not (or when a step before it answers otherwise: the state it needs does not hold there)\n";
  body += comment("What failed: " + what);
  body += "# Needs curl and CRH_API_KEY (the target's key); CRH_BASE_URL=http://host:port sends it elsewhere.\n"
          "# Every alias it tags is untagged when it ends.\n";
  body += replaced(replaced(kHelpers, "@BASE@", core::shell_word(target.base.to_string())), "@UNTAG@",
                   replaced(core::shell_word(untag_path), "%01", "'\"$a\"'"));

  std::vector<Captured> captured;
  std::chrono::microseconds previous{0};
  for (std::size_t i = 0; i <= last; ++i) {
    const Replay& step = *r.evidence[i].replay;
    const std::string n = std::to_string(i + 1);
    // The step as the script sends it, its alias the one read this time.
    const std::string label = core::shell_word(step.request.method + " ") + target_words(step, target, captured);
    if (i > 0 && step.at - previous > std::chrono::milliseconds(100))
      body += "sleep " + seconds(step.at - previous) + "  # the pause the check made here\n";
    previous = step.at;
    body += "\necho " + core::shell_word("step " + n + ": ") + label + "\n";
    body += "send " + curl_args(step, target, captured) + "\n";
    const std::string run_status = step.status == 0 ? "000" : std::to_string(step.status);
    // An alias a tag picked: read, named by a variable, untagged at the end.
    const auto seen = core::api::recognize(target.dialect.call_hook, step.request.method, step.request.target);
    std::optional<Captured> picked;
    if (seen && seen->op == Operation::tag && step.status == 200) {
      boost::system::error_code ec;
      const auto answer = json::parse(step.body, ec);
      const auto id = ec ? std::nullopt : core::api::tagged_alias_id(target.dialect.fields, answer);
      const auto key = id ? id_key(answer, target.dialect.fields, *id) : std::nullopt;
      if (key) picked = Captured{"v" + std::to_string(captured.size() + 1), *id};
      if (picked) {
        const std::string var = picked->var;
        body += var + "=$(read_field " + core::shell_word(*key) + "); [ -n \"$" + var + "\" ] && made=\"$made $" + var +
                "\"\n";
      }
    }
    // A list holds what other clients did, a tag answer the alias the service
    // chose: their form is compared, not their values.
    const bool chosen = seen && (seen->op == Operation::list_aliases || seen->op == Operation::list_agents ||
                                 seen->op == Operation::tag);
    if (i < last)
      body += "step " + n + " " + label + " " + run_status + " " + core::shell_word(media_type(step.content_type)) +
              " " + core::shell_word(field_names(step.body)) +
              (chosen || step.status == 0 ? "" : " " + expected_words(step.body, captured)) + "\n";
    if (i == last) {
      const std::string expected = step.status == 0 ? "" : expected_words(step.body, captured);
      body += "\nexpected=" + expected + "\n";
      std::string same = "[ \"$status\" = " + run_status + " ]";
      if (step.status != 0) {
        same += " && [ \"$(media)\" = " + core::shell_word(media_type(step.content_type)) + " ]";
        same += " && [ \"$(shown \"$d/body\")\" = \"$(printf '%s' \"$expected\" | shown)\" ]";
      }
      body += "if " + same + "; then\n";
      body += "  echo " + core::shell_word("REPRODUCED (exit 1): step " + n + " answered as in the failing run") + "\n";
      body += "  echo " + core::shell_word("  the failure: " + what) + "\n";
      body += "  echo \"  this time: HTTP $status $(excerpt)\"\n  exit 1\nfi\n";
      body += "echo " + core::shell_word("not reproduced (exit 0): step " + n + " answered otherwise than in the failing run") + "\n";
      body += "echo \"  this time: HTTP $status $(excerpt)\"\n";
      body += "echo " + core::shell_word("  the failing run got: " + r.evidence[i].answer) + "\n";
      body += "exit 0\n";
    }
    if (picked) captured.push_back(*picked);
  }
  return body;
}

}  // namespace crh::contracts
