"""Reads auto_explain's JSON plans (psql's stderr, client_min_messages = log) and judges them for ops/plan-guard.

A plan fails when PostgreSQL JIT-compiled it (a "JIT" section) or when its total cost is above jit_above_cost
(it would be compiled with JIT on: a penalised node, such as a sequential scan under enable_seqscan = off, costs
10^10). Every step of paths.sql must have run and planned at least one statement inside a function or trigger.

    python3 check.py LABEL JIT_ABOVE_COST STEPS_FILE < psql-stderr
"""

import json
import re
import sys

HEADER = re.compile(r"^(?:psql:[^ ]* )?LOG:  duration: [0-9.]+ ms  plan:$")
STEP = re.compile(r"^SELECT 'step:([a-z_]+)';$")


def plans(lines):
    """Yields each logged plan as a dict."""
    block = None
    for line in lines:
        if HEADER.match(line.rstrip("\n")):
            if block:
                yield json.loads("".join(block))
            block = []
        elif block is not None:
            if block == [] and not line.startswith("{"):
                block = None
                continue
            block.append(line)
            if line.rstrip("\n") == "}":
                yield json.loads("".join(block))
                block = None
    if block:
        yield json.loads("".join(block))


def costliest_node(node):
    """The deepest node carrying most of the cost: where a penalty sits."""
    children = node.get("Plans", [])
    if children:
        best = max(children, key=lambda child: child["Total Cost"])
        if best["Total Cost"] > 0.5 * node["Total Cost"]:
            return costliest_node(best)
    return node


def main():
    label, limit, steps_file = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    expected = [m.group(1) for m in (STEP.match(line.strip()) for line in open(steps_file)) if m]
    seen = {}
    failures = {}
    step = None
    for plan in plans(sys.stdin):
        text = plan.get("Query Text", "").strip()
        marker = STEP.match(text)
        if marker:
            step = marker.group(1)
            seen[step] = 0
            continue
        if step is None:
            continue
        seen[step] += 1
        cost = plan["Plan"]["Total Cost"]
        jit = plan.get("JIT")
        if jit or cost > limit:
            node = costliest_node(plan["Plan"])
            where = node["Node Type"] + (" on " + node["Relation Name"] if "Relation Name" in node else "")
            what = "JIT-compiled (%s functions)" % jit["Functions"] if jit else "costs %.0f > jit_above_cost" % cost
            key = "%s: step %s: %s, at %s: %s" % (label, step, what, where, " ".join(text.split())[:160])
            failures[key] = failures.get(key, 0) + 1
    missing = [s for s in expected if s != "done" and seen.get(s, 0) == 0]
    for s in missing:
        failures["%s: step %s planned no statement (did it run?)" % (label, s)] = 1
    total = sum(seen.values())
    print("%s: %d plans in %d steps, %d over the line" % (label, total, len(seen) - ("done" in seen), sum(failures.values())))
    for failure, times in failures.items():
        print("  FAIL " + failure + ("" if times == 1 else " (%d times)" % times))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
