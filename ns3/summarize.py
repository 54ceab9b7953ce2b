#!/usr/bin/env python3
"""Markdown tables of ns3/experiments.sh's CSVs: ns-3 beside the idealised simulator.

    python3 ns3/summarize.py [DIR ...]   # default target/ns3/experiments; ns3/results: ours
"""
import csv
import os
import sys
from collections import defaultdict


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def mean(xs):
    xs = [float(x) for x in xs]
    return sum(xs) / len(xs) if xs else float("nan")


def find(dirs, name):
    out = []
    for d in dirs:
        out += rows(os.path.join(d, name))
    return out


def krl(dirs, name="krl-ns3.csv", ideal_name="krl-ideal.csv"):
    ns3 = [r for r in find(dirs, name) if r["node"] == "all"]
    ideal = find(dirs, ideal_name)
    if not ns3:
        return
    # One row per (algorithm, square, load); with several seeds: waits and datagrams per
    # entry are means of the per-seed values (runs with entries), as in the figures of
    # `ns3_figures`; entries, requests, LOST and neighbour downs are sums over the seeds.
    groups = defaultdict(list)
    for r in ns3:
        groups[(r["algorithm"], r["area"], r["load"], r["cs_time"])].append(r)
    multi = any(len(g) > 1 for g in groups.values())
    more = " seeds |" if multi else ""
    print("| algorithm | connectivity (target / measured) | load | ideal entries | ideal wait (units) | ideal msgs/entry | ns-3 entries / requests | ns-3 wait (ms) | ns-3 datagrams/entry | token messages given up (LOST) | neighbour downs |" + more)
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if multi else ""))
    for rs in groups.values():
        r = rs[0]
        target = "0.2" if float(r["area"]) > 100 else "0.8"
        load = float(r["load"]) * float(r["cs_time"])
        i = [x for x in ideal if x["algorithm"] == r["algorithm"] and x["connectivity"] == target
             and abs(float(x["load"]) - load) < 1e-9 and float(x["mobility"]) == 0]
        ie = f'{mean(x["cs_entries"] for x in i):.0f}' if i else "-"
        iw = f'{mean(x["mean_wait"] for x in i):.2f}' if i else "-"
        im = f'{mean(x["messages_per_cs"] for x in i):.2f}' if i else "-"
        served = [x for x in rs if int(x["cs_entries"]) > 0]
        ent = sum(int(x["cs_entries"]) for x in rs)
        req = sum(int(x["requests"]) for x in rs)
        w = f'{1000 * mean(x["mean_wait"] for x in served):.1f}' if served else "-"
        d = f'{mean(x["messages_per_cs"] for x in served):.1f}' if served else "-"
        lost = sum(int(x["precious_lost"]) for x in rs)
        down = sum(int(x["neighbour_down"]) for x in rs)
        seeds = f" {len(rs)} |" if multi else ""
        print(f'| {r["algorithm"]} | {target} / {mean(x["connectivity"] for x in rs):.2f} | {load:g} | {ie} | {iw} | {im} '
              f'| {ent} / {req} | {w} | {d} | {lost} | {down} |{seeds}')


def la(dirs):
    ns3 = [r for r in find(dirs, "la-ns3.csv") if r["node"] == "all"]
    ideal = [x for x in find(dirs, "la-ideal.csv")
             if x["load_pattern"] == "uniform" and x["failures"] == "false"]
    if not ns3:
        return
    groups = defaultdict(list)
    for r in ns3:
        moving = "1" if r["mobility"].endswith("/0") else "0.1"
        groups[(r["algorithm"], int(r["nodes"]), moving)].append(r)
    print("| algorithm | hosts | moving | ideal entries | ideal MPCS | ideal HPCS | ns-3 entries / requests | ns-3 MPCS | ns-3 HPCS | ns-3 wait (s) | connectivity | runs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (alg, hosts, moving), rs in sorted(groups.items()):
        i = [x for x in ideal if x["algorithm"] == alg and int(x["hosts"]) == hosts
             and float(x["mobility"]) == float(moving)]
        ie = f'{mean(x["cs_entries"] for x in i):.0f}' if i else "-"
        im = f'{mean(x["messages_per_cs"] for x in i):.1f}' if i else "-"
        ih = f'{mean(x["hops_per_cs"] for x in i):.1f}' if i else "-"
        ent = sum(int(r["cs_entries"]) for r in rs)
        req = sum(int(r["requests"]) for r in rs)
        sent = sum(int(r["unicast_sent"]) for r in rs)
        hops = sum(float(r["hops_per_cs"]) * int(r["cs_entries"]) for r in rs)
        mp = f"{sent / ent:.1f}" if ent else "-"
        hp = f"{hops / ent:.1f}" if ent else "-"
        w = f'{mean(r["mean_wait"] for r in rs if int(r["cs_entries"]) > 0):.2f}' if ent else "-"
        print(f'| {alg} | {hosts} | {moving} | {ie} | {im} | {ih} | {ent} / {req} | {mp} | {hp} | {w} '
              f'| {mean(r["connectivity"] for r in rs):.2f} | {len(rs)} |')


def main():
    dirs = sys.argv[1:] or ["target/ns3/experiments"]
    print("KRL section 6 (krl-ns3.csv):\n")
    krl(dirs)
    print("\nKRL section 6, quieter sessions (krl-relaxed-ns3.csv):\n")
    krl(dirs, "krl-relaxed-ns3.csv")
    print("\nKRL section 6 at 30 nodes, quieter sessions (krl30-ns3.csv, krl30-ideal.csv):\n")
    krl(dirs, "krl30-ns3.csv", "krl30-ideal.csv")
    print("\nLook-ahead section V (la-ns3.csv):\n")
    la(dirs)


if __name__ == "__main__":
    main()
