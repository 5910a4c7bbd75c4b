// crh serve: runs the reference service until SIGINT or SIGTERM.
#include <iostream>
#include <memory>

#include "api_key.hpp"
#include "commands.hpp"
#include "results/verdict.hpp"
#include "reference/server.hpp"

namespace crh::runners {

bool split_listen(const std::string& text, std::string& host, unsigned short& port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  const std::string digits = text.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  unsigned long value = std::stoul(digits);
  if (value > 65535) return false;
  port = static_cast<unsigned short>(value);
  return true;
}

int run_serve(const ServeOptions& o) {
  using namespace crh::reference;
  if (o.list_faults) {
    for (const auto& f : all_faults()) std::cout << f.name << "\t" << f.description << "\n";
    return results::kExitOk;
  }
  if (o.list_mutants) {
    for (const auto& m : all_mutants())
      std::cout << m.name << "\t" << m.kind << "\t" << m.description << "\t" << m.rule << "\n";
    return results::kExitOk;
  }
  ServerConfig config;
  if (!split_listen(o.listen, config.host, config.port)) {
    std::cerr << "crh serve: --listen expects HOST:PORT (for example 127.0.0.1:8080 or [::1]:0), got \""
              << o.listen << "\"\n";
    return results::kExitUsage;
  }
  config.sip_listen = !o.sip.empty() && o.sip.front() == ':' ? "0.0.0.0" + o.sip : o.sip;
  config.sip_t1 = std::chrono::milliseconds(o.sip_t1_ms);
  config.threads = o.threads;
  config.service.minute = std::chrono::milliseconds(o.minute_ms);
  config.answer_delay = std::chrono::microseconds(o.delay_us);
  config.service.throttle_every = o.throttle_every;
  config.service.bind_window = std::chrono::microseconds(o.bind_window_us);
  for (const auto& name : o.faults) {
    auto fault = fault_by_name(name);
    if (!fault) {
      std::cerr << "crh serve: unknown fault mode \"" << name
                << "\"; `crh serve --list-faults` lists them\n";
      return results::kExitUsage;
    }
    config.service.faults.add(*fault);
  }
  for (const auto& name : o.mutants) {
    auto mutant = mutant_by_name(name);
    if (!mutant) {
      std::cerr << "crh serve: unknown mutant \"" << name << "\"; `crh serve --list-mutants` lists them\n";
      return results::kExitUsage;
    }
    config.service.mutants.add(*mutant);
  }
  try {
    config.fixtures = o.fixtures_file.empty() ? default_fixtures(o.channels, o.aliases)
                                              : load_fixtures_file(o.fixtures_file);
    auto key = configured_api_key(o.api_key_file);
    if (!key) {
      key = random_api_key();
      // Printed once, so a person can use the service; set CRH_API_KEY to choose one.
      std::cerr << "crh serve: no CRH_API_KEY or --api-key-file; generated API key: " << *key << "\n";
    }
    config.service.api_key = *key;
  } catch (const std::exception& e) {
    std::cerr << "crh serve: " << e.what() << "\n";
    return results::kExitUsage;
  }

  Server server(std::move(config));
  try {
    server.start();
  } catch (const std::exception& e) {
    std::cerr << "crh serve: " << e.what() << "\n";
    return results::kExitUnreachable;
  }
  std::string faults;
  for (const auto& f : o.faults) faults += (faults.empty() ? "" : ",") + f;
  for (const auto& m : o.mutants) faults += (faults.empty() ? "mutant " : ", mutant ") + m;
  if (o.bind_window_us > 0)
    faults += (faults.empty() ? "" : ", ") + std::string("calls bind ") + std::to_string(o.bind_window_us) +
              " us after their check (--bind-window-us)";
  std::cout << "crh serve: listening on " << server.base_url() << " (minute " << o.minute_ms
            << " ms, faults: " << (faults.empty() ? "none" : faults)
            << (o.delay_us > 0 ? ", every answer " + std::to_string(o.delay_us) + " us later" : "") << "); Ctrl-C stops"
            << std::endl;
  if (server.sip_port() != 0) {  // a line of its own, for scripts: "sip: udp+tcp HOST:PORT"
    std::string host = server.sip_host();
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    std::cout << "crh serve: sip: udp+tcp " << host << ":" << server.sip_port() << " (T1 " << o.sip_t1_ms
              << " ms)" << std::endl;
  }
  int signo = server.run_until_signal();
  std::cout << "crh serve: stopped on signal " << signo << std::endl;
  return results::kExitOk;
}

}  // namespace crh::runners
