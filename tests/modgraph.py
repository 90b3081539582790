#!/usr/bin/env python3
"""The module graph of src/: which top-level module uses which (crate::X
paths, in code outside #[cfg(test)] blocks and comments), and its strongly
connected components (any with more than one module is an import cycle).

    python3 tests/modgraph.py src        # the modules of the library
    python3 tests/modgraph.py src api    # the files of src/api/

Prints one component a line, a cycle marked CYCLE; exits 1 if there is one.
tests/architecture.rs runs it over src/."""
import os, re, sys, collections

root = sys.argv[1] if len(sys.argv) > 1 else "src"
sub = sys.argv[2] if len(sys.argv) > 2 else None  # e.g. "api": graph inside src/api
edges = collections.defaultdict(set)
mods = set()

def top_of(path):
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    if sub:
        if parts[0] != sub or len(parts) < 2:
            return None
        name = parts[1]
    else:
        name = parts[0]
    return name[:-3] if name.endswith(".rs") else name

for dirpath, _, files in os.walk(root):
    for f in files:
        if not f.endswith(".rs"):
            continue
        path = os.path.join(dirpath, f)
        m = top_of(path)
        if m is None or m in ("lib", "mod"):
            continue
        mods.add(m)
        text = open(path).read()
        # Drop #[cfg(test)] mod tests { ... } at the end of files, and comments.
        cut = text.find("#[cfg(test)]")
        if cut >= 0:
            text = text[:cut]
        text = re.sub(r"//[^\n]*", "", text)
        if sub:
            pat = r"(?:crate::%s::|super::)(\w+)" % sub
        else:
            pat = r"crate::(\w+)"
        for used in re.findall(pat, text):
            if used != m:
                edges[m].add(used)
        # `use crate::{a, b::c}` groups
        for group in re.findall(r"crate::\{([^}]*)\}", text):
            for used in re.findall(r"(?:^|,)\s*(\w+)", group):
                if used != m:
                    edges[m].add(used)

mods |= {u for vs in edges.values() for u in vs if u in mods}
index, low, stack, on, comps = {}, {}, [], set(), []
counter = [0]
def strong(v):
    index[v] = low[v] = counter[0]; counter[0] += 1
    stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in mods:
            continue
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        comps.append(sorted(comp))
sys.setrecursionlimit(10000)
for v in sorted(mods):
    if v not in index:
        strong(v)
cycles = [c for c in comps if len(c) > 1]
for c in comps:
    print(("CYCLE " if len(c) > 1 else "      ") + ", ".join(c))
sys.exit(1 if cycles else 0)
