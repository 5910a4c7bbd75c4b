// capture_session: see capture_session.hpp
#include "capture_session.hpp"

#include <iostream>
#include <optional>

#include <boost/json.hpp>

#include "results/keys_capture.hpp"
#include "results/verdict.hpp"
#include "flags.hpp"

namespace crh::runners {

namespace capture_keys = results::keys::live_capture;

struct CaptureSession::Impl {
  bool asked = false;
  std::optional<capture::LiveCapture> live;
  capture::LiveSummary summary;  // final once stopped
  bool stopped = false;
};

CaptureSession::CaptureSession() : impl_(std::make_unique<Impl>()) {}
CaptureSession::~CaptureSession() {
  if (impl_->asked && !impl_->stopped) stop();
}

int CaptureSession::start(const CaptureFlags& flags, const core::Target& target, const std::string& command) {
  if (flags.file.empty()) return results::kExitOk;
  impl_->asked = true;
  capture::LiveConfig config;
  config.file = flags.file;
  config.target_host = target.base.host;
  try {
    config.target_port = static_cast<std::uint16_t>(std::stoul(target.base.port));
  } catch (const std::exception&) {
    config.target_port = 80;
  }
  config.interface = flags.interface;
  config.buffer_bytes = static_cast<int>(flags.buffer_bytes);
  config.limit_bytes = flags.limit_bytes;
  config.api_key = target.api_key;
  if (target.calls.sip) {
    // SIP calls are recorded too, over UDP and TCP (issue 26).
    config.sip_host = target.calls.sip_target.host;
    config.sip_port = target.calls.sip_target.port;
    if (config.sip_port == 0)
      std::cerr << command << ": the SIP target's port is not known yet: the capture records HTTP only\n";
  }
  impl_->live.emplace(std::move(config));
  const auto& summary = impl_->live->summary();
  if (summary.made) return results::kExitOk;
  impl_->summary = summary;
  impl_->stopped = true;
  if (flags.required) {
    std::cerr << command << ": --capture-required: no capture made: " << summary.not_made << "\n";
    return results::kExitUnreachable;
  }
  // Said once, here; the result document and the summary repeat it as data.
  std::cerr << command << ": no capture made: " << summary.not_made
            << "; the run goes on without it (--capture-required makes this an error)\n";
  return results::kExitOk;
}

bool CaptureSession::asked() const { return impl_->asked; }
bool CaptureSession::running() const { return impl_->live && !impl_->stopped && impl_->live->running(); }

const capture::LiveSummary& CaptureSession::stop() {
  if (!impl_->stopped && impl_->live) {
    impl_->summary = impl_->live->stop();
    impl_->stopped = true;
  }
  return impl_->summary;
}

bool CaptureSession::made() const { return impl_->stopped && impl_->summary.made; }
const std::string& CaptureSession::file() const { return impl_->summary.file; }
const capture::LiveSummary& CaptureSession::summary() const { return impl_->summary; }

void CaptureSession::add_to(boost::json::object& document) {
  if (!impl_->asked) return;
  document[capture_keys::section] = capture_document(stop());
}

boost::json::object capture_document(const capture::LiveSummary& s) {
  boost::json::object o;
  o[capture_keys::made] = s.made;
  o[capture_keys::file] = s.file;
  if (!s.made) {
    o[capture_keys::not_made] = s.not_made;
    if (!s.interface.empty()) o[capture_keys::interface] = s.interface;
    if (!s.filter.empty()) o[capture_keys::filter] = s.filter;
    return o;
  }
  o[capture_keys::interface] = s.interface;
  o[capture_keys::filter] = s.filter;
  o[capture_keys::packets] = s.packets;
  o[capture_keys::bytes] = s.bytes;
  o[capture_keys::kernel_received] = s.kernel_received;
  o[capture_keys::kernel_dropped] = s.kernel_dropped;
  o[capture_keys::interface_dropped] = s.interface_dropped;
  o[capture_keys::counted_twice] = s.counted_twice;
  o[capture_keys::lost_packets] = s.lost_packets();
  o[capture_keys::limit_bytes] = s.limit_bytes;
  o[capture_keys::limit_reached] = s.limit_reached;
  o[capture_keys::redactions] = s.redactions;
  o[capture_keys::checksums_recomputed] = s.checksums_recomputed;
  boost::json::array warnings;
  for (const auto& w : s.warnings) warnings.emplace_back(w);
  o[capture_keys::warnings] = std::move(warnings);
  return o;
}

}  // namespace crh::runners
