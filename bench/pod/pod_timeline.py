#!/usr/bin/env python3
"""Where a pod's time goes after its GPUs are open, from the workers' own
timeline (PROVISION_TEST_WORKER_TIMELINE=FILE, fault-injection builds: each
worker appends every line it reads and writes, with the monotonic time):

    PROVISION_TEST_WORKER_TIMELINE=/tmp/t provision --check
    bench/pod/pod_timeline.py /tmp/t

Times are ms after the last GPU said `ready`.  Per GPU: its checks' last
result, the host link, then for each pull the time its command arrived and
its answer left, and `done`.
"""
import collections
import re
import sys


def main(path):
    events = collections.defaultdict(list)  # gpu -> [(ns, way, text)]
    for line in open(path):
        ns, pid, gpu, way, text = line.rstrip("\n").split(" ", 4)
        gpu = int(gpu)
        if way == "in" and gpu < 0:  # a worker of several GPUs: the tag names it
            match = re.match(r"(\d+)([:!])(.*)", text)
            if not match:
                continue
            gpu, text = int(match.group(1)), match.group(2) + match.group(3)
            text = text[1:] if text.startswith(":") else "<end of input>"
        events[gpu].append((int(ns), way, text))
    readies = {gpu: ns for gpu, lines in events.items() for ns, way, text in lines if text.startswith("ready")}
    zero = max(readies.values())
    ms = lambda ns: f"{(ns - zero) / 1e6:7.1f}"
    print(f"GPUs ready from {(min(readies.values()) - zero) / 1e6:.1f} to 0 ms")
    for gpu in sorted(events):
        lines = events[gpu]
        results = [ns for ns, way, text in lines if way == "out" and text.startswith("result")]
        row = [f"GPU {gpu}: ready {ms(readies[gpu])}", f"checks {ms(max(results))}" if results else "no checks"]
        for ns, way, text in lines:
            if text.startswith("host_link"):
                row.append(f"host link {ms(ns)}")
            elif way == "in" and text.startswith("pull"):
                row.append(f"pull {text.split()[1]} sent {ms(ns)}")
            elif way == "out" and text.startswith("pulled"):
                source = re.search(r"from = (\d+)", text).group(1)
                row.append(f"from {source} {ms(ns)}")
            elif text.startswith("done"):
                row.append(f"done {ms(ns)}")
        print("; ".join(row))


if __name__ == "__main__":
    main(sys.argv[1])
