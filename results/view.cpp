// The lenient view of result documents.
#include "results/view.hpp"

#include <algorithm>

namespace crh::results {
namespace json = boost::json;

void MissingFields::add(std::string path) {
  if (std::find(paths_.begin(), paths_.end(), path) == paths_.end()) paths_.push_back(std::move(path));
}

std::string MissingFields::footnote(std::size_t shown) const {
  if (paths_.empty()) return {};
  std::string out = "missing from the document: ";
  for (std::size_t i = 0; i < paths_.size() && i < shown; ++i) out += (i ? ", " : "") + paths_[i];
  if (paths_.size() > shown) out += " and " + std::to_string(paths_.size() - shown) + " more";
  return out;
}

DocView::DocView(const json::value& root, std::string path, std::shared_ptr<MissingFields> missing)
    : value_(&root),
      path_(std::move(path)),
      missing_(missing ? std::move(missing) : std::make_shared<MissingFields>()) {}

DocView::DocView(const json::object& root, std::string path, std::shared_ptr<MissingFields> missing)
    : object_(&root),
      path_(std::move(path)),
      missing_(missing ? std::move(missing) : std::make_shared<MissingFields>()) {}

const json::object* DocView::object() const {
  if (object_) return object_;
  return value_ && value_->is_object() ? &value_->get_object() : nullptr;
}

void DocView::record(std::string_view what) const {
  missing_->add((path_.empty() ? std::string("the document") : path_) + std::string(what));
}

DocView DocView::find(std::string_view key) const {
  const auto* o = object();
  std::string path = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  return child(o ? o->if_contains(key) : nullptr, std::move(path));
}

DocView DocView::at(std::string_view key) const {
  DocView out = find(key);
  if (out.present() || !present()) return out;
  if (is_object()) out.record("");
  else record(" (not an object)");
  return out;
}

std::string DocView::str() const {
  if (is_string()) return std::string(value_->get_string());
  if (present()) record(" (not a string)");
  return {};
}

double DocView::num() const {
  if (is_number()) return value_->to_number<double>();
  if (present()) record(" (not a number)");
  return 0.0;
}

std::optional<double> DocView::maybe_num() const {
  if (is_number()) return value_->to_number<double>();
  return std::nullopt;
}

std::uint64_t DocView::count() const {
  if (value_ && value_->is_uint64()) return value_->get_uint64();
  if (value_ && value_->is_int64() && value_->get_int64() >= 0) return static_cast<std::uint64_t>(value_->get_int64());
  if (present()) record(" (not a whole number >= 0)");
  return 0;
}

bool DocView::boolean() const {
  if (is_bool()) return value_->get_bool();
  if (present()) record(" (not true or false)");
  return false;
}

std::vector<DocView> DocView::items() const {
  std::vector<DocView> out;
  if (!is_array()) {
    if (present()) record(" (not an array)");
    return out;
  }
  const auto& a = value_->get_array();
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(child(&a[i], path_ + "[" + std::to_string(i) + "]"));
  return out;
}

std::vector<std::pair<std::string, DocView>> DocView::fields() const {
  std::vector<std::pair<std::string, DocView>> out;
  const auto* o = object();
  if (!o) {
    if (present()) record(" (not an object)");
    return out;
  }
  out.reserve(o->size());
  for (const auto& [k, v] : *o) {
    std::string name(k);
    out.emplace_back(name, child(&v, path_.empty() ? name : path_ + "." + name));
  }
  return out;
}

}  // namespace crh::results
