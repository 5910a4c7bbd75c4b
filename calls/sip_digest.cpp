// Digest authentication: MD5 with qop=auth when offered, nc=00000001.
#include "calls/sip_digest.hpp"

#include <boost/uuid/detail/md5.hpp>


namespace crh::calls::sip {

std::string md5_hex(std::string_view bytes) {
  boost::uuids::detail::md5 hash;
  hash.process_bytes(bytes.data(), bytes.size());
  boost::uuids::detail::md5::digest_type digest;
  hash.get_digest(digest);
  // Since Boost 1.71 the digest's memory holds the 16 bytes in MD5's order.
  const auto* raw = reinterpret_cast<const unsigned char*>(digest);
  std::string hex(32, '0');
  static constexpr char digits[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) {
    hex[2 * i] = digits[raw[i] >> 4];
    hex[2 * i + 1] = digits[raw[i] & 15];
  }
  return hex;
}

std::optional<std::map<std::string, std::string>> digest_params(std::string_view challenge) {
  while (!challenge.empty() && (challenge.front() == ' ' || challenge.front() == '\t')) challenge.remove_prefix(1);
  auto lower = [](std::string s) {
    for (auto& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return s;
  };
  if (challenge.size() < 7 || lower(std::string(challenge.substr(0, 7))) != "digest ") return std::nullopt;
  std::map<std::string, std::string> params;
  std::string_view rest = challenge.substr(7);
  std::size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t' || rest[i] == ',')) ++i;
    std::size_t eq = rest.find('=', i);
    if (eq == std::string_view::npos) break;
    std::string name = lower(std::string(rest.substr(i, eq - i)));
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    i = eq + 1;
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
    std::string value;
    if (i < rest.size() && rest[i] == '"') {
      for (++i; i < rest.size() && rest[i] != '"'; ++i) {
        if (rest[i] == '\\' && i + 1 < rest.size()) ++i;
        value += rest[i];
      }
      ++i;  // the closing quote
    } else {
      while (i < rest.size() && rest[i] != ',') value += rest[i++];
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    }
    params[name] = value;
  }
  return params;
}

DigestAnswer answer_digest(std::string_view challenge, std::string_view method, std::string_view uri,
                           std::string_view user, std::string_view password, std::string_view cnonce) {
  DigestAnswer a;
  auto params = digest_params(challenge);
  if (!params) return a.error = "the challenge is not Digest", a;
  auto get = [&](const char* k) { auto it = params->find(k); return it == params->end() ? std::string{} : it->second; };
  std::string realm = get("realm"), nonce = get("nonce"), algorithm = get("algorithm"), qops = get("qop");
  if (nonce.empty()) return a.error = "the challenge has no nonce", a;
  if (!algorithm.empty() && algorithm != "MD5" && algorithm != "md5")
    return a.error = "the challenge asks for algorithm " + algorithm + "; only MD5 is supported", a;
  bool qop_auth = false;
  for (std::size_t start = 0; start <= qops.size() && !qops.empty();) {
    auto comma = qops.find(',', start);
    std::string token = qops.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!token.empty() && token.front() == ' ') token.erase(0, 1);
    while (!token.empty() && token.back() == ' ') token.pop_back();
    if (token == "auth") qop_auth = true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (!qops.empty() && !qop_auth) return a.error = "the challenge offers qop=" + qops + " without auth", a;
  std::string ha1 = md5_hex(std::string(user) + ":" + realm + ":" + std::string(password));
  std::string ha2 = md5_hex(std::string(method) + ":" + std::string(uri));
  const std::string nc = "00000001";
  std::string response = qop_auth ? md5_hex(ha1 + ":" + nonce + ":" + nc + ":" + std::string(cnonce) + ":auth:" + ha2)
                                  : md5_hex(ha1 + ":" + nonce + ":" + ha2);
  std::string& v = a.header_value;
  v = "Digest username=\"" + std::string(user) + "\", realm=\"" + realm + "\", nonce=\"" + nonce + "\", uri=\"" +
      std::string(uri) + "\", response=\"" + response + "\", algorithm=MD5";
  if (qop_auth) v += ", cnonce=\"" + std::string(cnonce) + "\", nc=" + nc + ", qop=auth";
  if (auto o = params->find("opaque"); o != params->end()) v += ", opaque=\"" + o->second + "\"";
  return a;
}

}  // namespace crh::calls::sip
