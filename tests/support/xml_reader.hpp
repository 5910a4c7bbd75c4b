// A small XML reader for tests: enough of XML 1.0 to prove the HTML report
// and the JUnit XML well-formed (balanced elements, quoted attributes, only
// the five named entities and character references, no control bytes, one
// root) and to read their element tree, without trusting the writer.
#pragma once

#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crh::test {


struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;  // values with entities decoded
  std::vector<Element> children;
  std::string text;  // character data directly inside, entities decoded

  std::optional<std::string> attr(std::string_view key) const {
    for (const auto& [k, v] : attrs)
      if (k == key) return v;
    return std::nullopt;
  }
  // Every element below this one with that name, at any depth, in document order.
  std::vector<const Element*> descendants(std::string_view tag) const {
    std::vector<const Element*> out;
    for (const auto& c : children) {
      if (c.name == tag) out.push_back(&c);
      auto deeper = c.descendants(tag);
      out.insert(out.end(), deeper.begin(), deeper.end());
    }
    return out;
  }
  // The children with that name.
  std::vector<const Element*> all(std::string_view tag) const {
    std::vector<const Element*> out;
    for (const auto& c : children)
      if (c.name == tag) out.push_back(&c);
    return out;
  }
  const Element* child(std::string_view tag) const {
    auto v = all(tag);
    return v.empty() ? nullptr : v.front();
  }
};

class XmlReader {
 public:
  explicit XmlReader(std::string_view text) : s_(text) {}

  // The root element, or nullopt with error() saying where and why.
  std::optional<Element> parse() {
    Element root;
    if (s_.substr(0, 5) == "<?xml") {
      auto end = s_.find("?>");
      if (end == std::string_view::npos) return fail("unterminated XML declaration");
      i_ = end + 2;
    }
    skip_space();
    if (s_.substr(i_, 9) == "<!DOCTYPE") {  // HTML's; no internal subset
      auto end = s_.find('>', i_);
      if (end == std::string_view::npos) return fail("unterminated DOCTYPE");
      i_ = end + 1;
      skip_space();
    }
    if (!element(root)) return std::nullopt;
    skip_space();
    if (i_ != s_.size()) return fail("content after the root element");
    return root;
  }
  const std::string& error() const { return error_; }

 private:
  std::nullopt_t fail(const std::string& why) {
    if (error_.empty()) error_ = why + " at offset " + std::to_string(i_);
    return std::nullopt;
  }
  bool failed(const std::string& why) {
    fail(why);
    return false;
  }
  bool at_end() const { return i_ >= s_.size(); }
  void skip_space() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  static bool name_char(char c, bool first) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalpha(u) || c == '_' || c == ':' || (!first && (std::isdigit(u) || c == '-' || c == '.'));
  }
  bool name(std::string& out) {
    const auto start = i_;
    while (!at_end() && name_char(s_[i_], i_ == start)) ++i_;
    out = std::string(s_.substr(start, i_ - start));
    return !out.empty() || failed("expected a name");
  }
  // One character of character data or an attribute value, entities decoded.
  bool char_data(std::string& out) {
    const auto c = static_cast<unsigned char>(s_[i_]);
    if (c == '<') return failed("raw '<' in text");
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return failed("control byte in text");
    if (c == 0x7f) return failed("DEL byte in text");
    if (c != '&') {
      out.push_back(static_cast<char>(c));
      ++i_;
      return true;
    }
    const auto semi = s_.find(';', i_);
    if (semi == std::string_view::npos || semi - i_ > 10) return failed("raw '&' in text");
    const auto entity = s_.substr(i_ + 1, semi - i_ - 1);
    if (entity == "amp") out += '&';
    else if (entity == "lt") out += '<';
    else if (entity == "gt") out += '>';
    else if (entity == "quot") out += '"';
    else if (entity == "apos") out += '\'';
    else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x';
      const long cp = std::stol(std::string(entity.substr(hex ? 2 : 1)), nullptr, hex ? 16 : 10);
      if (cp < 0x20 && cp != 9 && cp != 10 && cp != 13) return failed("character reference to a control byte");
      out += cp < 0x80 ? std::string(1, static_cast<char>(cp)) : "?";
    } else {
      return failed("unknown entity &" + std::string(entity) + ";");
    }
    i_ = semi + 1;
    return true;
  }
  bool element(Element& e) {
    if (at_end() || s_[i_] != '<') return failed("expected '<'");
    ++i_;
    if (!name(e.name)) return false;
    std::set<std::string> seen;
    for (;;) {
      const auto before = i_;
      skip_space();
      if (at_end()) return failed("unterminated start tag <" + e.name);
      if (s_.substr(i_, 2) == "/>") {
        i_ += 2;
        return true;
      }
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      if (i_ == before) return failed("no space before an attribute of <" + e.name);
      std::string key, value;
      if (!name(key)) return false;
      if (!seen.insert(key).second) return failed("duplicate attribute " + key);
      if (at_end() || s_[i_] != '=') return failed("expected '=' after " + key);
      ++i_;
      if (at_end() || s_[i_] != '"') return failed("attribute " + key + " is not in double quotes");
      ++i_;
      while (!at_end() && s_[i_] != '"')
        if (!char_data(value)) return false;
      if (at_end()) return failed("unterminated attribute " + key);
      ++i_;
      e.attrs.emplace_back(key, value);
    }
    for (;;) {
      if (at_end()) return failed("unterminated element <" + e.name + ">");
      if (s_.substr(i_, 2) == "</") {
        i_ += 2;
        std::string closing;
        if (!name(closing)) return false;
        if (closing != e.name) return failed("</" + closing + "> closes <" + e.name + ">");
        skip_space();
        if (at_end() || s_[i_] != '>') return failed("unterminated end tag");
        ++i_;
        return true;
      }
      if (s_[i_] == '<') {
        if (s_.substr(i_, 2) == "<!" || s_.substr(i_, 2) == "<?") return failed("unexpected markup declaration");
        e.children.emplace_back();
        if (!element(e.children.back())) return false;
      } else if (!char_data(e.text)) {
        return false;
      }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::string error_;
};

}  // namespace crh::test
