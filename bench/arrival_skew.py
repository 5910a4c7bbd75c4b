#!/usr/bin/env python3
"""The arrival skew of released rounds, read from a loopback capture.

usage: arrival_skew.py FILE.pcap K (release[=BYTES] | invite [SAVE])

A round is K releases from K different callers in a row: `release` takes
every TCP or UDP packet with a payload of BYTES (default 1) as a release,
its caller the (source port, destination port) pair (crh's HTTP race writes
each call but its last byte, then the last bytes; bench/release_limit does
the same; datagrams sent by sendmmsg from one socket share one pair, and are
then told apart by their order alone);
`invite` takes every SIP INVITE over UDP as a release, its caller the
Call-ID (a retransmission, the same Call-ID and CSeq again, is left out).
A release from a caller already in the round, or one more than GAP_US
(env, default 500: crh and release_limit both wait 500 us between arming
and releasing, so rounds are always further apart) after the round's last,
ends it. Two neighbouring parts that together are K different callers are
one round a pause cut in two; only whole rounds (K releases) count, and the
partial ones (a caller whose call failed) are counted apart. Callers with
fewer than a tenth of the busiest caller's releases (a stray one-byte
packet of a control connection) are left out.

With SAVE, the first INVITE's bytes are written to that file (for
bench/release_limit --datagram-file: the limit sends what crh sends).

Prints "rounds p50 p90 p99 max partial gap_p50 gap_p99" (microseconds;
partial: groups left out; gap: the first release to the second, which
bounds the shortest check-then-bind window a round can catch): each round's arrival skew
is its last release's capture stamp minus its first's. On loopback the
stamp is taken in the sender's send call, as the receiver's SO_TIMESTAMPNS
is (bench/release_skew.sh shows the two side by side for the bare program).
Reads pcap files with nanosecond stamps (tcpdump --time-stamp-precision
nano) or microsecond ones; Ethernet (lo) or Linux cooked link layers.
"""
import collections
import os
import re
import struct
import sys


def packets(path):
    """(stamp_ns, payload bytes of the link layer) per packet."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return
        magic = struct.unpack("<I", head[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            endian = "<"
        else:
            endian = ">"
            magic = struct.unpack(">I", head[:4])[0]
        if magic not in (0xA1B2C3D4, 0xA1B23C4D):
            raise SystemExit(f"{path}: not a pcap file (pcapng is not read: write it with tcpdump -w)")
        nano = magic == 0xA1B23C4D
        linktype = struct.unpack(endian + "I", head[20:24])[0]
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, caplen, _ = struct.unpack(endian + "IIII", rec)
            data = f.read(caplen)
            yield sec * 1_000_000_000 + (frac if nano else frac * 1000), linktype, data


def transport(linktype, data):
    """(protocol, source port, destination port, payload, payload length) or
    None; the payload as captured (the snapshot length may cut it), its
    length as the headers declare it."""
    if linktype == 1:  # Ethernet
        ethertype, off = struct.unpack(">H", data[12:14])[0], 14
    elif linktype == 113:  # Linux cooked
        ethertype, off = struct.unpack(">H", data[14:16])[0], 16
    else:
        return None
    if ethertype == 0x0800:
        ihl = (data[off] & 0x0F) * 4
        total = struct.unpack(">H", data[off + 2:off + 4])[0]
        proto, start, end = data[off + 9], off + ihl, off + total
    elif ethertype == 0x86DD:
        proto, start = data[off + 6], off + 40
        end = start + struct.unpack(">H", data[off + 4:off + 6])[0]
    else:
        return None
    sport, dport = struct.unpack(">HH", data[start:start + 4])
    if proto == 6:
        begin = start + (data[start + 12] >> 4) * 4
        return "tcp", sport, dport, data[begin:end], end - begin
    if proto == 17:
        return "udp", sport, dport, data[start + 8:end], end - start - 8
    return None


def sip_header(payload, name):
    for line in payload.split(b"\r\n")[1:]:
        if not line:
            break
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip()
    return None


def releases(path, kind):
    """(stamp_ns, caller) per release, in capture order."""
    seen = set()
    for stamp, linktype, data in packets(path):
        t = transport(linktype, data)
        if t is None:
            continue
        proto, sport, dport, payload, length = t
        if kind.startswith("release"):
            if length == int(kind.partition("=")[2] or 1):
                yield stamp, (proto, sport, dport)
        elif proto == "udp" and payload.startswith(b"INVITE "):
            call_id, cseq = sip_header(payload, b"call-id"), sip_header(payload, b"cseq")
            if (call_id, cseq) in seen:
                continue  # a retransmission
            if not seen and SAVE:
                with open(SAVE, "wb") as f:
                    f.write(payload)
            seen.add((call_id, cseq))
            yield stamp, call_id


def skews(path, k, kind):
    """Each whole round's (skew, first gap) in ns, and how many partial groups
    were left out."""
    gap_ns = int(os.environ.get("GAP_US", "500")) * 1000
    every = list(releases(path, kind))
    counts = collections.Counter(caller for _, caller in every)
    busiest = max(counts.values(), default=0)
    one_flow = kind.startswith("release") and sum(1 for c in counts.values() if c * 10 >= busiest) < k
    groups, group = [], []  # (stamp, caller) lists
    for stamp, caller in every:
        if kind.startswith("release") and counts[caller] * 10 < busiest:
            continue
        if one_flow:
            caller = len(group)  # every release its own caller: rounds by count and gap
        if group and (len(group) == k or caller in {c for _, c in group} or stamp - group[-1][0] > gap_ns):
            groups.append(group)
            group = []
        group.append((stamp, caller))
    groups.append(group)
    out, partial, i = [], 0, 0
    while i < len(groups):
        g = groups[i]
        # A round cut in two by a pause longer than the gap: its halves
        # together are K different callers.
        if len(g) < k and i + 1 < len(groups) and len(g) + len(groups[i + 1]) == k and \
                not {c for _, c in g} & {c for _, c in groups[i + 1]}:
            g = g + groups[i + 1]
            i += 1
        if len(g) == k:
            out.append((g[-1][0] - g[0][0], g[1][0] - g[0][0]))
        elif g:
            partial += 1
        i += 1
    return out, partial


def rank(sorted_values, q):
    """The nearest-rank q-quantile."""
    i = max(0, min(len(sorted_values) - 1, -(-int(q * 1000) * len(sorted_values) // 1000) - 1))
    return sorted_values[i]


SAVE = None


def main():
    global SAVE
    if len(sys.argv) == 5 and sys.argv[3] == "invite":
        SAVE = sys.argv.pop()
    if len(sys.argv) != 4 or not re.fullmatch(r"release(=\d+)?|invite", sys.argv[3]):
        raise SystemExit(__doc__)
    rounds, partial = skews(sys.argv[1], int(sys.argv[2]), sys.argv[3])
    if not rounds:
        print(f"0 nan nan nan nan {partial} nan nan")
        return
    s = sorted(r[0] for r in rounds)
    g = sorted(r[1] for r in rounds)
    print(len(s), *(f"{rank(s, q) / 1e3:.1f}" for q in (0.5, 0.9, 0.99)), f"{s[-1] / 1e3:.1f}", partial,
          *(f"{rank(g, q) / 1e3:.1f}" for q in (0.5, 0.99)))


if __name__ == "__main__":
    main()
