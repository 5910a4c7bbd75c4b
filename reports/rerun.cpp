// Rerun commands for one contract check, read from the document.
#include "reports/rerun.hpp"

#include <cstdio>

#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"

namespace crh::reports {
namespace k = results::keys;

std::string shell_quote(std::string_view word) {
  auto safe = [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(static_cast<char>(c)) != std::string_view::npos;
  };
  bool plain = !word.empty(), control = false;
  for (unsigned char c : word) {
    plain = plain && safe(c);
    control = control || c < 0x20 || c == 0x7f;
  }
  if (plain) return std::string(word);
  if (!control) {
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  // bash's $'...': a control byte as \xHH, so the line stays one line and
  // the terminal is not driven by it.
  std::string out = "$'";
  for (unsigned char c : word) {
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      if (c == '\'' || c == '\\') out += '\\';
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

std::string rerun_command(const results::DocView& contract, std::string_view check_id) {
  std::string out = "crh contract";
  const auto options = contract.find(k::envelope::config).find(k::contract_config::rerun).find(k::rerun::options);
  if (options.is_array()) {
    for (const auto& o : options.items()) out += " " + shell_quote(o.str());
  } else {  // an older document: the line it always had
    const auto target = contract[k::envelope::target];
    if (!target[k::target::embedded].boolean())
      out += " --base-url " + shell_quote(target[k::target::base_url].str()) + " --channel " +
             shell_quote(target[k::target::channel].str());
  }
  return out + " --check " + shell_quote(check_id);
}

bool rerun_reads_key_file(const results::DocView& contract) {
  return contract.find(k::envelope::config).find(k::contract_config::rerun).find(k::rerun::key_source).str() ==
         k::rerun::key_from_file;
}

std::string reproducer_script(const results::DocView& contract, const results::DocView& check) {
  namespace k = results::keys;
  const auto body = check.find(k::check::reproducer);
  if (!body.is_string() || body.str().empty()) return {};
  const std::string text = body.str();
  const auto headline_end = text.find('\n');
  const std::string headline = text.substr(0, headline_end);
  const std::string rest = headline_end == std::string::npos ? "" : text.substr(headline_end + 1);
  return "#!/bin/sh\n" + headline + "\n# rerun (the same check as it ran): " +
         rerun_command(contract, check[k::check::id].str()) + "\n" + rest;
}

}  // namespace crh::reports
