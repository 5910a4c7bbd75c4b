// The scripted SIP peer: one thread, poll(), replies queued with their delays.
#include "support/scripted_sip_peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

namespace crh::test {

namespace sip = calls::sip;
using Clock = std::chrono::steady_clock;

struct ScriptedSipPeer::Pending {
  Clock::time_point at;
  std::string bytes;
  int fd;
  sockaddr_storage to;
  socklen_t to_length;
  bool from_other;
};

namespace {

int bound_socket(const std::string& host, int type, unsigned short& port) {
  sockaddr_storage ss{};
  socklen_t len;
  if (host.find(':') != std::string::npos) {
    auto& a = reinterpret_cast<sockaddr_in6&>(ss);
    a.sin6_family = AF_INET6;
    inet_pton(AF_INET6, host.c_str(), &a.sin6_addr);
    len = sizeof a;
  } else {
    auto& a = reinterpret_cast<sockaddr_in&>(ss);
    a.sin_family = AF_INET;
    inet_pton(AF_INET, host.c_str(), &a.sin_addr);
    len = sizeof a;
  }
  int fd = socket(ss.ss_family, type | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) throw std::runtime_error("peer: bind failed");
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(ss).sin6_port
                                        : reinterpret_cast<sockaddr_in&>(ss).sin_port);
  return fd;
}

}  // namespace

ScriptedSipPeer::ScriptedSipPeer(bool tcp, Script script, std::string host)
    : tcp_(tcp), script_(std::move(script)), host_(std::move(host)) {
  listen_fd_ = bound_socket(host_, tcp ? SOCK_STREAM : SOCK_DGRAM, port_);
  if (tcp) listen(listen_fd_, 16);
  unsigned short other_port;
  other_fd_ = bound_socket(host_, SOCK_DGRAM, other_port);
  if (pipe(wake_) != 0) throw std::runtime_error("peer: pipe failed");
  thread_ = std::thread([this] { run(); });
}

ScriptedSipPeer::~ScriptedSipPeer() {
  {
    std::lock_guard guard(lock_);
    stopping_ = true;
  }
  (void)!write(wake_[1], "x", 1);
  thread_.join();
  for (int fd : connections_) close(fd);
  for (int fd : {listen_fd_, other_fd_, wake_[0], wake_[1]}) close(fd);
}

std::string ScriptedSipPeer::target() const {
  std::string h = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
  return h + ":" + std::to_string(port_) + (tcp_ ? ";transport=tcp" : "");
}

std::vector<sip::Message> ScriptedSipPeer::received() const {
  std::lock_guard guard(lock_);
  return received_;
}

std::vector<sip::Message> ScriptedSipPeer::received(std::string_view method) const {
  std::vector<sip::Message> out;
  for (auto& m : received())
    if (m.method == method) out.push_back(m);
  return out;
}

bool ScriptedSipPeer::wait_for(std::string_view method, std::size_t n, std::chrono::milliseconds limit) const {
  std::unique_lock guard(lock_);
  return changed_.wait_for(guard, limit, [&] {
    std::size_t seen = 0;
    for (auto& m : received_) seen += m.method == method;
    return seen >= n;
  });
}

void ScriptedSipPeer::drop_connections() {
  {
    std::lock_guard guard(lock_);
    drop_ = true;
  }
  (void)!write(wake_[1], "x", 1);
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard guard(lock_);
      if (!drop_) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string ScriptedSipPeer::answer(const sip::Message& request, unsigned status, std::string_view reason,
                                    const std::vector<sip::Header>& extra) const {
  sip::Message m;
  m.status = status;
  m.reason = std::string(reason);
  for (auto v : request.all("Via")) m.headers.push_back({"Via", std::string(v)});
  for (const char* name : {"From", "To", "Call-ID", "CSeq"}) {
    const std::string* v = request.find(name);
    std::string value = v ? *v : "";
    if (std::string_view(name) == "To" && status > 100 && !sip::param_of(value, "tag")) value += ";tag=peer-tag";
    m.headers.push_back({name, value});
  }
  std::string h = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
  if (status < 300 && status > 100)
    m.headers.push_back({"Contact", "<sip:peer@" + h + ":" + std::to_string(port_) + (tcp_ ? ";transport=tcp>" : ">")});
  for (const auto& e : extra) m.headers.push_back(e);
  return sip::serialize(m);
}

std::vector<ScriptedSipPeer::Reply> ScriptedSipPeer::standard(const sip::Message& request) const {
  if (request.method == "BYE" || request.method == "OPTIONS") return {{answer(request, 200, "OK")}};
  if (request.method == "CANCEL") {
    sip::Message invite = request;  // the INVITE's 487 carries its CSeq number with INVITE
    for (auto& h : invite.headers)
      if (h.name == "CSeq") h.value = h.value.substr(0, h.value.find(' ')) + " INVITE";
    return {{answer(request, 200, "OK")}, {answer(invite, 487, "Request Terminated")}};
  }
  return {};
}

void ScriptedSipPeer::handle(const sip::Message& m, int fd, const void* from, unsigned from_length) {
  int nth = 0;
  {
    std::lock_guard guard(lock_);
    received_.push_back(m);
    for (auto& r : received_) nth += r.method == m.method;
  }
  changed_.notify_all();
  auto replies = script_(*this, m, nth);
  std::lock_guard guard(lock_);
  for (auto& r : replies) {
    auto p = std::make_shared<Pending>();
    p->at = Clock::now() + r.delay;
    p->bytes = std::move(r.bytes);
    p->fd = fd;
    std::memcpy(&p->to, from, from_length);
    p->to_length = from_length;
    p->from_other = r.from_other_address;
    pending_.push_back(std::move(p));
  }
}

void ScriptedSipPeer::run() {
  std::map<int, sip::StreamReader> streams;
  std::string buffer(70000, '\0');
  for (;;) {
    std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    {
      std::lock_guard guard(lock_);
      if (stopping_) return;
      if (drop_) {
        for (int fd : connections_) close(fd), streams.erase(fd);
        connections_.clear();
        drop_ = false;
      }
      for (int fd : connections_) fds.push_back({fd, POLLIN, 0});
    }
    poll(fds.data(), fds.size(), 2);
    if (fds[0].revents) {
      char sink[16];
      (void)!read(wake_[0], sink, sizeof sink);
    }
    if (fds[1].revents && tcp_) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      std::lock_guard guard(lock_);
      if (fd >= 0) connections_.push_back(fd);
    } else if (fds[1].revents) {
      sockaddr_storage from{};
      socklen_t len = sizeof from;
      ssize_t n = recvfrom(listen_fd_, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
      auto parsed = sip::parse_datagram(std::string_view(buffer.data(), n > 0 ? static_cast<std::size_t>(n) : 0));
      if (parsed.message && parsed.message->request) handle(*parsed.message, listen_fd_, &from, len);
    }
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      ssize_t n = recv(fds[i].fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (n <= 0) {
        std::lock_guard guard(lock_);
        std::erase(connections_, fds[i].fd);
        close(fds[i].fd);
        streams.erase(fds[i].fd);
        continue;
      }
      auto& reader = streams[fds[i].fd];
      reader.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      while (auto m = reader.next())
        if (m->request) handle(*m, fds[i].fd, "", 0);
    }
    std::vector<std::shared_ptr<Pending>> due;
    {
      std::lock_guard guard(lock_);
      auto now = Clock::now();
      for (auto it = pending_.begin(); it != pending_.end();) {
        if ((*it)->at <= now) due.push_back(*it), it = pending_.erase(it);
        else ++it;
      }
    }
    for (auto& p : due) {
      if (tcp_) {
        std::lock_guard guard(lock_);
        if (std::find(connections_.begin(), connections_.end(), p->fd) != connections_.end())
          (void)!send(p->fd, p->bytes.data(), p->bytes.size(), MSG_NOSIGNAL);
      } else {
        sendto(p->from_other ? other_fd_ : listen_fd_, p->bytes.data(), p->bytes.size(), 0,
               reinterpret_cast<const sockaddr*>(&p->to), p->to_length);
      }
    }
  }
}

}  // namespace crh::test
