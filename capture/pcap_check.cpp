// pcap_check: see pcap_check.hpp
