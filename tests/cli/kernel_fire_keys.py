"""The fires a kernel trace recorded and those of a replay's event log, as
counts by (timer pointer, jiffies, CPU), for tests/cli/kernel_fires.sh:
a kernel fire is a timer_expire_entry line's timer=, now= and [CPU]; a
replay fire is a "fire" row's name, jiffies and cpu."""
import collections
import csv
import re

ENTRY = re.compile(r"\[(\d+)\].*timer_expire_entry: timer=(?:0x)?([0-9a-f]+) .*now=(\d+)")


def kernel_fires(text):
    fires = collections.Counter()
    for line in open(text):
        m = ENTRY.search(line)
        if m:
            fires[(int(m.group(2), 16), int(m.group(3)), int(m.group(1)))] += 1
    return fires


def replay_fires(events):
    """The replay's fires, and the timer pointers its log names at all."""
    fires, named = collections.Counter(), set()
    for row in csv.DictReader(open(events)):
        if row["name"]:
            named.add(int(row["name"], 16))
        if row["event"] == "fire":
            fires[(int(row["name"], 16), int(row["jiffies"]), int(row["cpu"]))] += 1
    return fires, named


def validate_lost(text, validated):
    """The kernel fires `timersim validate --format json --max-listed N`
    (N past every check) lists as lost history, by the lines it names."""
    import json
    lines = {c["line"] for c in json.load(open(validated))["lost_history"]["checks"] if c["check"] == "expiry"}
    fires = collections.Counter()
    for number, line in enumerate(open(text), 1):
        m = ENTRY.search(line)
        if m and number in lines:
            fires[(int(m.group(2), 16), int(m.group(3)), int(m.group(1)))] += 1
    return fires
