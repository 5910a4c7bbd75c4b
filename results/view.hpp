// The lenient reading of a result document for renderers (terminal, JUnit,
// HTML): a report shows what is there, never throws on a missing or mistyped
// field, and says what it did not find. The strict reading, which refuses such
// a document, is results/json_read.hpp (`crh report` merging shards).
//
//   results::DocView doc(document);
//   const double rate = doc[keys::load::totals][keys::totals::achieved_rate].num();  // 0 when absent
//   ... doc.missing_footnote()  // "missing from the document: totals.achieved_rate"
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace crh::results {

// The fields a rendering looked for and did not find, shared by every view of
// one document: paths such as "loads[0].totals.achieved_rate", or
// "checks[2].outcome (not a string)" for one of another type; each once, in
// the order first met.
class MissingFields {
 public:
  void add(std::string path);
  const std::vector<std::string>& paths() const { return paths_; }
  bool empty() const { return paths_.empty(); }

  // "missing from the document: a, b" (at most `shown` paths, then how many
  // more), or empty when nothing was missing.
  std::string footnote(std::size_t shown = 12) const;

 private:
  std::vector<std::string> paths_;
};

// A view of one value of a document, or of nothing. The document must outlive
// its views. Looking a key up records the path when the value is an object
// without it, or not an object; reading a value records it when it is of
// another type. A view of nothing records nothing more: its absence was
// recorded where it arose (or was allowed, see find).
class DocView {
 public:
  DocView() : missing_(std::make_shared<MissingFields>()) {}  // nothing, recording into a list of its own
  explicit DocView(const boost::json::value& root, std::string path = {},
                   std::shared_ptr<MissingFields> missing = std::make_shared<MissingFields>());
  explicit DocView(const boost::json::object& root, std::string path = {},
                   std::shared_ptr<MissingFields> missing = std::make_shared<MissingFields>());
  // A view of a temporary would dangle.
  explicit DocView(boost::json::value&&, std::string = {}, std::shared_ptr<MissingFields> = {}) = delete;
  explicit DocView(boost::json::object&&, std::string = {}, std::shared_ptr<MissingFields> = {}) = delete;

  // The field `key`; a view of nothing, recorded, when absent.
  DocView at(std::string_view key) const;
  DocView operator[](std::string_view key) const { return at(key); }
  // The field `key` where documents may lack it by design (the race section,
  // fields of older versions): a view of nothing, not recorded, when absent.
  DocView find(std::string_view key) const;

  // The value, or a neutral one ("", 0, false, nothing) when absent or of
  // another type (recorded).
  std::string str() const;
  double num() const;
  std::uint64_t count() const;  // a whole number >= 0
  bool boolean() const;
  std::vector<DocView> items() const;                           // of an array, paths "key[i]"
  std::vector<std::pair<std::string, DocView>> fields() const;  // of an object, paths "key.name"
  // The number, or nothing when absent or not a number (a null is an answer
  // here, e.g. "no change measured": not recorded).
  std::optional<double> maybe_num() const;

  bool present() const { return value_ || object_; }
  explicit operator bool() const { return present(); }
  bool is_object() const { return object() != nullptr; }
  bool is_array() const { return value_ && value_->is_array(); }
  bool is_string() const { return value_ && value_->is_string(); }
  bool is_number() const { return value_ && value_->is_number(); }
  bool is_bool() const { return value_ && value_->is_bool(); }
  bool is_null() const { return value_ && value_->is_null(); }

  // The JSON itself, for what a view does not interpret (a histogram, a config shown whole).
  const boost::json::value* value() const { return value_; }
  const boost::json::object* object() const;

  const std::string& path() const { return path_; }
  const MissingFields& missing() const { return *missing_; }
  std::string missing_footnote() const { return missing_->footnote(); }

 private:
  struct Child {};
  DocView(Child, const boost::json::value* v, std::string path, std::shared_ptr<MissingFields> missing)
      : value_(v), path_(std::move(path)), missing_(std::move(missing)) {}
  DocView child(const boost::json::value* v, std::string path) const { return {Child{}, v, std::move(path), missing_}; }
  void record(std::string_view what) const;

  const boost::json::value* value_ = nullptr;
  const boost::json::object* object_ = nullptr;  // a root given as an object
  std::string path_;
  std::shared_ptr<MissingFields> missing_;  // never null
};

}  // namespace crh::results
