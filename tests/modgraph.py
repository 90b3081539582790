#!/usr/bin/env python3
"""The module graph of a crate's folder: which of its modules uses which
(`crate::`, `super::` and `self::` paths, `use` groups expanded, in code
outside #[cfg(test)] blocks and comments), and its strongly connected
components (any with more than one module is an import cycle).

    python3 tests/modgraph.py src                  # the modules of the library
    python3 tests/modgraph.py src api              # the files and folders of src/api/
    python3 tests/modgraph.py src api/transport    # ... of src/api/transport/
    python3 tests/modgraph.py src --every          # the crate and every folder, at any depth
    python3 tests/modgraph.py src api --edges      # src/api/'s edges, one `a -> b` a line

A module of a folder stands for everything below it: a use of
`crate::api::transport::gate::X` from src/api/routes.rs is an edge
routes -> transport in the graph of src/api/, and one conn -> gate in the
graph of src/api/transport/ only if it comes from a file below conn.

Prints one component a line, a cycle marked CYCLE (with --every, each
folder's components after a `# folder` line); exits 1 if there is a cycle.
tests/architecture.rs runs it over src/ with --every."""
import os, re, sys, collections

root = sys.argv[1] if len(sys.argv) > 1 else "src"
arg = sys.argv[2] if len(sys.argv) > 2 else ""
edges_only = "--edges" in sys.argv[3:]


def module_path(path):
    """The module path of a file: src/a/b.rs -> [a, b], src/a/mod.rs -> [a], src/lib.rs -> []."""
    parts = os.path.relpath(path, root).split(os.sep)
    dirs, last = parts[:-1], parts[-1][:-3]
    if last == "mod" or (last in ("lib", "main") and not dirs):
        return dirs
    return dirs + [last]


def split_top(text, sep=","):
    """`text` split at `sep` outside braces."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == sep and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def expand(prefix, tail):
    """The paths a use tree names: `prefix` plus `tail` (`a::b`, `a::{b, c::d}`, `self`)."""
    tail = tail.strip()
    if not tail:
        return [prefix]
    if tail.startswith("{"):
        inner = tail[1 : tail.rfind("}")]
        paths = []
        for item in split_top(inner):
            if item.strip():
                paths.extend(expand(prefix, item))
        return paths
    head, _, rest = tail.partition("::")
    head = head.strip().split(" as ")[0].strip()
    if head in ("self", "*") or not re.fullmatch(r"\w+", head):
        return [prefix]
    return expand(prefix + [head], rest)


# crate::…, super::…, self::… (super::super::… too), then a name or a group.
START = re.compile(r"(?<![\w:])((?:crate|self|super)(?:::super)*)::")


def uses_of(text, me):
    """Every absolute module path `text` (the code of module `me`) names."""
    found = []
    for m in START.finditer(text):
        words = m.group(1).split("::")
        if words[0] == "crate":
            base = []
        elif words[0] == "self":
            base = list(me)
        else:
            base = me[: len(me) - len(words)]
        # The rest of the path: names and `::`, or one balanced group.
        i, tail = m.end(), ""
        while i < len(text):
            name = re.match(r"\s*(\w+)\s*", text[i:])
            if name:
                tail += name.group(1)
                i += name.end()
                if text.startswith("::", i):
                    tail += "::"
                    i += 2
                    continue
                break
            if text.startswith("{", i):
                depth, j = 0, i
                while j < len(text):
                    depth += {"{": 1, "}": -1}.get(text[j], 0)
                    j += 1
                    if depth == 0:
                        break
                tail += text[i:j]
            break
        found.extend(expand(base, tail.rstrip(":")))
    return found


# Every file's module path and the paths it uses.
files = []
for dirpath, _, names in os.walk(root):
    for f in names:
        if not f.endswith(".rs"):
            continue
        path = os.path.join(dirpath, f)
        me = module_path(path)
        text = open(path).read()
        # Drop #[cfg(test)] mod tests { ... } at the end of files, and comments.
        cut = text.find("#[cfg(test)]")
        if cut >= 0:
            text = text[:cut]
        text = re.sub(r"//[^\n]*", "", text)
        files.append((me, uses_of(text, me)))


def graph(folder):
    """The modules directly in `folder` (a module path) and their edges."""
    n = len(folder)
    edges = collections.defaultdict(set)
    mods = set()
    for me, used in files:
        if len(me) <= n or me[:n] != folder:
            continue
        mods.add(me[n])
        for path in used:
            if len(path) > n and path[:n] == folder and path[n] != me[n]:
                edges[me[n]].add(path[n])
    return mods, edges


def components(mods, edges):
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in mods:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(mods):
        if v not in index:
            strong(v)
    return comps


def show(folder):
    """Print `folder`'s components; whether one is a cycle."""
    comps = components(*graph(folder))
    for c in comps:
        print(("CYCLE " if len(c) > 1 else "      ") + ", ".join(c))
    return any(len(c) > 1 for c in comps)


if arg == "--every":
    # The crate, then every folder that holds modules, at any depth.
    folders = sorted({tuple(me[:k]) for me, _ in files for k in range(len(me))})
    cycle = False
    for folder in folders:
        print("# " + ("/".join(folder) or "(crate)"))
        cycle |= show(list(folder))
elif edges_only:
    mods, edges = graph([p for p in arg.split("/") if p])
    for m in sorted(mods):
        for used in sorted(edges[m] & mods):
            print(f"{m} -> {used}")
    cycle = False
else:
    cycle = show([p for p in arg.split("/") if p])
sys.exit(1 if cycle else 0)
