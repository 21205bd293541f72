#!/usr/bin/env python3
"""Edges between the top-level modules of src/ (from `crate::<module>` paths, comments excluded),
and the pairs that use each other. Usage: python3 scripts/module-cycles.py [--edges]"""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def top_module(path):
    rel = os.path.relpath(path, SRC)
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


edges = {}
for root, _, files in os.walk(SRC):
    for name in files:
        if not name.endswith(".rs"):
            continue
        path = os.path.join(root, name)
        module = top_module(path)
        if module in ("lib", "bin", "main"):
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                code = line.split("//", 1)[0]
                used_here = re.findall(r"\bcrate::([a-z_]+)", code)
                # `use crate::{a::X, b};`: the first name of each path in the braces.
                for group in re.findall(r"\bcrate::\{([^}]*)", code):
                    used_here += re.findall(r"(?:^|,)\s*([a-z_]+)", group)
                for used in used_here:
                    if used != module:
                        edges.setdefault(module, set()).add(used)

if "--edges" in sys.argv:
    for module in sorted(edges):
        print(f"{module} -> {', '.join(sorted(edges[module]))}")
cycles = sorted(
    (a, b) for a in edges for b in edges[a] if a < b and a in edges.get(b, set())
)
for a, b in cycles:
    print(f"cycle: {a} <-> {b}")
sys.exit(1 if cycles else 0)
