#!/usr/bin/env python3
"""Checks that every metric a PromQL expression of the alert rules or the Grafana dashboard names is one
that a real scrape exposes (or that the rules themselves record), and that every label a selector
matches on is one those series carry (`up`, which Prometheus writes for each target, is known with
its job and instance labels). Used by ops/deploy-check with the /metrics text of the real
`securepush serve` processes and of postgres_exporter running SecurePush's queries.

    metric_names.py --rules R.yaml --dashboard D.json --metrics FILE [--metrics FILE...]

Exits 1 listing each unknown name (with where it is used), 0 when every name is known."""
import argparse
import json
import re
import sys

import yaml

KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
            "inf", "nan", "atan2", "start", "end"}
IDENT = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
# Series Prometheus writes itself for each scrape target (no /metrics exposes them), with their labels.
SYNTHETIC = {"up": {"job", "instance"}}


def families(text):
    """Metric names with the label names their samples carry, from Prometheus text exposition."""
    names = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            names.setdefault(name, set())
            suffixes = {"histogram": ["_bucket", "_sum", "_count"], "summary": ["_sum", "_count"]}.get(kind.strip(), [])
            for suffix in suffixes:
                names.setdefault(name + suffix, set())
        elif line and not line.startswith("#"):
            match = re.match(r"(" + IDENT + r")(\{(.*?)\})?\s", line)
            if match:
                labels = set(re.findall(r"(" + IDENT + r')="', match.group(3) or ""))
                names.setdefault(match.group(1), set()).update(labels)
    return names


def used_names(expr):
    """(metric, set of label names matched in its selector) pairs an expression names."""
    expr = re.sub(r"\$\{?\w+\}?", "1m", expr)  # Grafana variables such as $__rate_interval
    uses = []
    # Selectors with label matchers: name{...} (the name may be absent: {__name__=...} is not used here).
    def selector(match):
        labels = set(re.findall(r"(" + IDENT + r")\s*(?:=~|!~|!=|=)", re.sub(r'"(?:\\.|[^"\\])*"', '""', match.group(2))))
        uses.append((match.group(1), labels))
        return " "
    expr = re.sub(r"(" + IDENT + r")?\s*\{([^}]*)\}", lambda m: selector(m) if m.group(1) else " ", expr)
    expr = re.sub(r'"(?:\\.|[^"\\])*"' + "|'(?:\\\\.|[^'\\\\])*'", " ", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    for match in re.finditer(r"(?<![\w:.])(" + IDENT + r")(?![\w:])(?!\s*\()", expr):
        name = match.group(1)
        if name in KEYWORDS or re.fullmatch(r"\d+[smhdwy]", name):
            continue
        uses.append((name, set()))
    return [(name, labels) for name, labels in uses if name]


def exprs_of_dashboard(node, where="dashboard"):
    if isinstance(node, dict):
        if "targets" in node:
            where = f"panel {node.get('title', '?')!r}"
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield where, value
            else:
                yield from exprs_of_dashboard(value, where)
    elif isinstance(node, list):
        for item in node:
            yield from exprs_of_dashboard(item, where)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rules", required=True)
    parser.add_argument("--dashboard", required=True)
    parser.add_argument("--metrics", action="append", required=True, help="a /metrics text file (repeatable)")
    args = parser.parse_args()

    exposed = {name: set(labels) for name, labels in SYNTHETIC.items()}
    for path in args.metrics:
        for name, labels in families(open(path, encoding="utf-8").read()).items():
            exposed.setdefault(name, set()).update(labels)

    rules = yaml.safe_load(open(args.rules, encoding="utf-8"))
    expressions = []
    recorded = {}
    for group in rules["groups"]:
        for rule in group["rules"]:
            where = f"{args.rules}: {rule.get('alert') or rule.get('record')}"
            expressions.append((where, rule["expr"]))
            if "record" in rule:
                recorded[rule["record"]] = rule["expr"]
    dashboard = json.load(open(args.dashboard, encoding="utf-8"))
    expressions += [(f"{args.dashboard}: {where}", expr) for where, expr in exprs_of_dashboard(dashboard)]

    problems = []
    checked = set()
    for where, expr in expressions:
        for name, labels in used_names(expr):
            checked.add(name)
            if name in recorded:
                continue
            if name not in exposed:
                problems.append(f"{where}: metric {name} is not exposed by any scraped /metrics")
                continue
            for label in sorted(labels - exposed[name]):
                problems.append(f"{where}: metric {name} has no label {label} (it has: {', '.join(sorted(exposed[name])) or 'none'})")
    if not expressions or not checked:
        problems.append("no expression or metric name found: the parser is broken")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"metric names: {len(problems)} problem(s) in {len(expressions)} expressions", file=sys.stderr)
        return 1
    print(f"metric names: {len(checked)} names in {len(expressions)} expressions, all exposed "
          f"({len(checked & recorded.keys())} recorded by the rules): {', '.join(sorted(checked))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
