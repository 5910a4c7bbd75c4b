// The scripts' sh prelude and the C++ twins of its readers.
#include "contracts/reproducer_sh.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/curl.hpp"

namespace crh::contracts {

std::string sh_word(std::string_view text, std::string_view secret) {
  const bool control = std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (!control) return core::shell_word(text, secret);
  std::string format;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '\\' || c == '%' || c == '\'') {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", u);
      format += octal;
    } else {
      format += c;
    }
  }
  return "\"$(printf '" + format + "')\"";
}

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

std::optional<std::string> item_text(const std::string& body, const std::string& key, const std::string& id) {
  for (std::size_t at = body.find('{'); at != std::string::npos; at = body.find('{', at + 1)) {
    const auto end = body.find('{', at + 1);
    std::string line = body.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    for (const std::string& form : {"\"" + key + "\":\"" + id + "\"", "\"" + key + "\":" + id})
      if (line.compare(0, form.size(), form) == 0 && form.size() < line.size() &&
          (line[form.size()] == ',' || line[form.size()] == '}')) {
        while (!line.empty() && std::string_view("]},\t\n\r ").find(line.back()) != std::string_view::npos) line.pop_back();
        return line;
      }
  }
  return std::nullopt;
}

int tagged_count(const std::string& body, const std::string& field) {
  int n = 0;
  std::size_t from = 0;
  for (;;) {
    const auto end = body.find_first_of(",{", from);
    std::string_view piece(body.data() + from, (end == std::string::npos ? body.size() : end) - from);
    while (!piece.empty() && (piece.front() == ' ' || piece.front() == '\t' || piece.front() == '\n')) piece.remove_prefix(1);
    const std::string name = "\"" + field + "\"";
    if (piece.substr(0, name.size()) == name) {
      auto rest = piece.substr(name.size());
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
      if (!rest.empty() && rest.front() == ':') {
        rest.remove_prefix(1);
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
        n += !rest.empty() && rest.front() == '"';
      }
    }
    if (end == std::string::npos) return n;
    from = end + 1;
  }
}

std::string media_type(std::string_view content_type) {
  auto end = content_type.find(';');
  std::string out(content_type.substr(0, end));
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

const char* const kShPrelude = R"sh(LC_ALL=C; export LC_ALL
base=${CRH_BASE_URL:-@BASE@}
[ -n "${CRH_API_KEY:-}" ] || { echo "export CRH_API_KEY (the target's key) first" >&2; exit 2; }
d=$(mktemp -d) || exit 2
# untag_made: untags every alias the script tagged (listed in $d/made)
untag_made() {
  [ -f "$d/made" ] || return 0
  for a in $(cat "$d/made"); do curl -sS -o /dev/null -X DELETE "$base"@UNTAG@ -H "Apikey: $CRH_API_KEY" || :; done
  : > "$d/made"
}
trap 'untag_made; rm -rf "$d"' EXIT
trap 'exit 2' HUP INT TERM
# send ARGS: curl ARGS; the answer in $d/body and $d/head, its status in $status (000: no answer)
send() { status=$(curl -sS -o "$d/body" -D "$d/head" -w '%{http_code}' "$@" 2>"$d/err") || status=000; }
# the answer's body, its instants masked, at most 400 bytes
shown() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+(Z|[+-][0-9:]+)?/(an instant)/g; s/[0-9]{10,}(\.[0-9]+)?/(a long number)/g' "$@"; }
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
  [ -z "$notes" ] || echo "  note:$notes"
  exit 0
}
# picked N VAR SAME OTHERS: the tag of step N picked the alias each tag of SAME picked and none of OTHERS picked,
# as in the failing run (the order of picks, whatever the aliases are)
picked() {
  eval "now=\$$2"
  for other in $3; do
    eval "was=\$$other"
    [ "$now" = "$was" ] || { echo "not reproduced (exit 0): the tag of step $1 picked alias $now, not the alias an earlier tag picked ($was) as in the failing run"; exit 0; }
  done
  for other in $4; do
    eval "was=\$$other"
    [ "$now" != "$was" ] || { echo "not reproduced (exit 0): the tag of step $1 picked alias $now, as an earlier tag did, which it did not in the failing run"; exit 0; }
  done
}
# item KEY ID: the object of the answer that holds ID under KEY, as one line (nothing when none does)
item() { tr '{' '\n' < "$d/body" | grep -E "^\"$1\"[[:space:]]*:[[:space:]]*\"?$2\"?[,}]" | sed 's/[]},[:space:]]*$//' | sed -n 1p; }
# tagged N FIELD COUNT: the list of step N shows as many aliases tagged (a string under FIELD) as in the failing
# run, else a note for the end: the state the failure needs may not hold here
notes=''
tagged() {
  now=$(tr ',{' '\n\n' < "$d/body" | grep -c "^[[:space:]]*\"$2\"[[:space:]]*:[[:space:]]*\"" || :)
  [ "$now" = "$3" ] || notes="$notes step $1's list shows $now alias(es) tagged, the failing run's showed $3: the state the failure rests on may not hold here."
}
# read KEY: the first value under "KEY" in the answer (a string or a number)
read_field() { tr ',{}' '\n\n\n' < "$d/body" | sed -n "s/^[[:space:]]*\"$1\"[[:space:]]*:[[:space:]]*\"\{0,1\}\([^\"]*\)\"\{0,1\}[[:space:]]*\$/\1/p" | sed -n 1p; }
)sh";

}  // namespace crh::contracts
