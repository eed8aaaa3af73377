#!/usr/bin/env python3
"""The bench's arithmetic (issue 49): what ops/bench computed in awk one-liners, in one program.

    calc.py median V...            the median of the values ("nan" without any)
    calc.py spread V...            "lowest-highest" as the values were written ("-" without any)
    calc.py ratio A B              A / B with two decimals ("nan" when either is nan or B is 0)
    calc.py num V [FORMAT]         V in a printf FORMAT (default %.0f); "-" for nan or nothing
    calc.py mb KB                  kilobytes as megabytes with one decimal ("nan" for nan or nothing)
    calc.py rate N S               N per second over S seconds, whole ("nan" when S is not above 0)
    calc.py eval EXPR FORMAT NAME=VALUE...
                                   an expression of + - * / ( ) over numbers and the names given, in FORMAT;
                                   "nan" when it divides by zero or a value is nan
    calc.py --self-test            checks each of these against what the awk forms printed

Standard library only (no virtual environment needed). Numbers print as awk's `print` did: integers whole,
others with six significant digits.
"""
import ast
import math
import operator
import sys

OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def number(text):
    """A value as written ("nan" and "" are not numbers)."""
    if text is None or text.strip() in ("", "nan", "-nan"):
        return math.nan
    return float(text)


def awk_print(value):
    """A number as awk's `print` writes it (OFMT %.6g for non-integers)."""
    if math.isnan(value):
        return "nan"
    if value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return "%.6g" % value


def median(values):
    """The middle value as written, or the mean of the two middle ones."""
    ordered = sorted((v for v in values if not math.isnan(number(v))), key=number)
    if not ordered:
        return "nan"
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return awk_print((number(ordered[middle - 1]) + number(ordered[middle])) / 2)


def spread(values):
    if not values:
        return "-"
    ordered = sorted(values, key=number)
    return "%s-%s" % (ordered[0], ordered[-1])


def ratio(a, b):
    a, b = number(a), number(b)
    if math.isnan(a) or math.isnan(b) or b == 0:
        return "nan"
    return "%.2f" % (a / b)


def num(value, form="%.0f"):
    value = number(value)
    return "-" if math.isnan(value) else form % value


def mb(kilobytes):
    value = number(kilobytes)
    return "nan" if math.isnan(value) else "%.1f" % (value / 1024)


def rate(count, seconds):
    count, seconds = number(count), number(seconds)
    if math.isnan(count) or math.isnan(seconds) or seconds <= 0:
        return "nan"
    return "%.0f" % (count / seconds)


def evaluate(expression, form, names):
    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Div) and right == 0:
                return math.nan
            return OPERATORS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        raise ValueError("calc.py eval: only numbers, the names given and + - * / ( ): %r" % expression)

    value = walk(ast.parse(expression, mode="eval"))
    return "nan" if math.isnan(value) else form % value


def self_test():
    checks = [
        (median(["3", "1", "2"]), "2"), (median(["1", "2"]), "1.5"), (median([]), "nan"),
        (median(["23645", "23600", "23700", "23650"]), "23647.5"), (median(["nan", "4"]), "4"),
        (median(["1234567.89"]), "1234567.89"), (median(["1", "2000000.5"]), "1e+06"),
        (spread(["7.9", "14.3", "5.6"]), "5.6-14.3"), (spread([]), "-"),
        (ratio("23645", "6936"), "3.41"), (ratio("1", "0"), "nan"), (ratio("nan", "2"), "nan"),
        (num("23645.4"), "23645"), (num("0.3456", "%.3f"), "0.346"), (num("nan"), "-"), (num(""), "-"),
        (mb("65536"), "64.0"), (mb(""), "nan"),
        (rate("200000", "28.89"), "6923"), (rate("5", "0"), "nan"), (rate("5", "-1.5"), "nan"),
        (evaluate("(b - a) / n", "%.0f", {"a": 100.0, "b": 2392.0, "n": 1.0}), "2292"),
        (evaluate("100 * t / hz / s", "%.0f", {"t": 150.0, "hz": 100.0, "s": 2.0}), "75"),
        (evaluate("n / s", "%.0f", {"n": 5.0, "s": 0.0}), "nan"),
    ]
    failed = [(got, want) for got, want in checks if got != want]
    for got, want in failed:
        print("calc.py self-test: got %r, want %r" % (got, want), file=sys.stderr)
    print("calc.py self-test: %d checks, %d failed" % (len(checks), len(failed)))
    return 1 if failed else 0


def main(arguments):
    if not arguments:
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = arguments[0], arguments[1:]
    if command == "--self-test":
        return self_test()
    if command == "median":
        print(median(rest))
    elif command == "spread":
        print(spread(rest))
    elif command == "ratio" and len(rest) == 2:
        print(ratio(*rest))
    elif command == "num" and len(rest) in (1, 2):
        print(num(*rest))
    elif command == "rate" and len(rest) == 2:
        print(rate(*rest))
    elif command == "mb" and len(rest) <= 1:
        print(mb(rest[0] if rest else ""))
    elif command == "eval" and len(rest) >= 2:
        names = {}
        for pair in rest[2:]:
            name, _, value = pair.partition("=")
            names[name] = number(value)
        print(evaluate(rest[0], rest[1], names))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
