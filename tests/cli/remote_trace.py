#!/usr/bin/env python3
"""Writes a hand-built Linux 6.12 timer trace (HZ=250, 2 CPUs) to stdout
whose remote expiries are known by construction:

    remote_trace.py N          CPU 0 expires N of CPU 1's global timers
    remote_trace.py N --local  CPU 1 expires them itself (no remote expiry)

CPU 0 has one timer of its own; CPU 1 arms one pinned timer (flags=P,
BASE_LOCAL, which only CPU 1 runs) and N global ones due 10 jiffies apart,
and stays idle but for its pinned timer's softirq. Each global timer fires
in a TIMER softirq of CPU 0 after "tmigr_handle_remote_cpu: cpu=1" (6.9
tmigr_handle_remote() -> timer_expire_remote()), or with --local in a
softirq of CPU 1. Every timer is due within 63 jiffies, so it sits at level
0 of the wheel: bucket_expiry = expires + 1 and idx = bucket_expiry & 63
(6.1 calc_index() at level 0), and fires at jiffy bucket_expiry.
"""
import sys

n = int(sys.argv[1])
local = "--local" in sys.argv[2:]
kJ = 4294900000  # jiffies at the first timer_start, 1.000000 s
events = []


def ts(jiffy, us=0):
    return 1.0 + (jiffy - kJ) * 0.004 + us / 1e6


def line(cpu, t, what):
    events.append((t, cpu, f"          <idle>-0       [{cpu:03}] d.s1. {t:12.6f}: {what}"))


def start(cpu, t, timer, expires, flags):
    bucket = expires + 1
    line(cpu, t, f"timer_start: timer={timer:016x} function=process_timeout expires={expires} "
                 f"[timeout={expires - kJ}] bucket_expiry={bucket} cpu={cpu} idx={bucket & 63} flags={flags}")
    return bucket


def expire(cpu, t, timer, at):
    line(cpu, t, f"timer_cancel: timer={timer:016x}")
    line(cpu, t + 0.000001, f"timer_expire_entry: timer={timer:016x} function=process_timeout now={at} baseclk={at}")
    line(cpu, t + 0.000002, f"timer_expire_exit: timer={timer:016x}")


def softirq(cpu, jiffy, body):
    t = ts(jiffy, 50)
    line(cpu, t, "softirq_entry: vec=1 [action=TIMER]")
    body(t + 0.000010)
    line(cpu, t + 0.000100, "softirq_exit: vec=1 [action=TIMER]")


def remote(timer, at):
    def body(t):
        line(0, t, "tmigr_handle_remote: group=00000000b503d1a4 lvl=0")
        line(0, t + 0.000003, "tmigr_handle_remote_cpu: cpu=1 parent=00000000b503d1a4 wakeup=9223372036854775807")
        expire(0, t + 0.000005, timer, at)
    return body


own = start(0, ts(kJ, 10), 0xa0, kJ + 5, "")
softirq(0, own, lambda t: expire(0, t, 0xa0, own))
pinned = start(1, ts(kJ, 20), 0xb0, kJ + 3, "P")
softirq(1, pinned, lambda t: expire(1, t, 0xb0, pinned))
for i in range(n):
    timer = 0xc0 + i
    at = start(1, ts(kJ, 30 + i), timer, kJ + 10 * (i + 1), "")
    if local:
        softirq(1, at, lambda t, timer=timer, at=at: expire(1, t, timer, at))
    else:
        softirq(0, at, remote(timer, at))
events.sort(key=lambda e: (e[0], e[1]))
print("# kernel: 6.12.118+deb13-cloud-amd64\n# hz=250\n# cpus: 2")
print("\n".join(e[2] for e in events))
