// The history file: operations appended as JSON lines.
#include "loadgen/history.hpp"

#include <cerrno>
#include <cstring>

namespace crh::loadgen {

HistoryWriter::~HistoryWriter() {
  if (file_) std::fclose(file_);
}

void HistoryWriter::open(const std::string& path) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw HistoryError("cannot write the history to " + path + ": " + std::strerror(errno));
  path_ = path;
}

void HistoryWriter::write(std::span<const oracle::Op> ops) {
  if (!file_) return;
  std::lock_guard lock(mutex_);
  for (const auto& op : ops) {
    buffer_ += oracle::to_json_line(op);
    buffer_.push_back('\n');
  }
  written_ += ops.size();
  if (buffer_.size() >= (1u << 16)) {
    failed_ |= std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size();
    buffer_.clear();
  }
}

void HistoryWriter::close() {
  if (!file_) return;
  std::lock_guard lock(mutex_);
  failed_ |= std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size();
  buffer_.clear();
  failed_ |= std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed_) throw HistoryError("the history file " + path_ + " is incomplete: a write failed");
}

}  // namespace crh::loadgen
