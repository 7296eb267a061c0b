#!/usr/bin/env python3
"""Import cycles between rooms (top-level modules) and between sibling files of one folder.

Every `crate::a::b` path in code (use lines and inline paths, comments skipped) and every
`super::sibling` path gives an edge. A child's path to its parent (`super::x` where x is an item
of mod.rs, `crate::search::execute` from search/scan.rs) is not a sibling edge."""
import os, re, sys
from collections import defaultdict

root = sys.argv[1] if len(sys.argv) > 1 else 'src'
files = []
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            files.append(os.path.join(d, f))

def module_path(path):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ('mod', 'lib', 'main'):
        rel = rel[:-1]
    return rel

modules = {tuple(module_path(f)) for f in files}

def strip_comments(text):
    out = []
    for line in text.split('\n'):
        s = line.strip()
        if s.startswith('//'):
            continue
        out.append(line)
    return '\n'.join(out)

def expand_use(text):
    """Yields crate paths, expanding `use crate::{a::b, c}` groups one level deep."""
    for m in re.finditer(r'crate::((?:[a-z_][a-z0-9_]*::)*)\{([^}]*)\}', text):
        prefix = m.group(1).split('::')[:-1]
        for item in m.group(2).split(','):
            item = item.strip()
            if item:
                yield prefix + item.split('::')
    for m in re.finditer(r'crate::([a-z_][a-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)', text):
        yield m.group(1).split('::')

room_edges = defaultdict(set)
sib_edges = defaultdict(set)
for f in files:
    me = module_path(f)
    text = strip_comments(open(f).read())
    targets = list(expand_use(text))
    # super:: paths of a file in folder X name X's children (siblings) or X's own items.
    parent = me[:-1] if not f.endswith('mod.rs') else me[:-1]
    for m in re.finditer(r'\bsuper::([a-z_][a-z0-9_]*)', text):
        targets.append(parent + [m.group(1)])
    for t in targets:
        if not t or not me:
            continue
        if t[0] != me[0]:
            room_edges[me[0]].add(t[0])
        # sibling: same folder, different child module of it
        folder = me[:-1] if not f.endswith('mod.rs') else me[:-1]
        if f.endswith('mod.rs'):
            continue  # a folder's mod.rs is the parent of its children
        if len(t) > len(folder) and t[:len(folder)] == folder:
            child = tuple(t[:len(folder) + 1])
            if child in modules and child != tuple(me) and child != tuple(folder):
                sib_edges[tuple(me)].add(child)

def cycles(edges):
    found = []
    nodes = set(edges) | {v for vs in edges.values() for v in vs}
    index, low, stack, on = {}, {}, [], set()
    counter = [0]
    def strong(v):
        index[v] = low[v] = counter[0]; counter[0] += 1
        stack.append(v); on.add(v)
        for w in edges.get(v, ()):
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
            if len(comp) > 1:
                found.append(comp)
    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return found

rc = 0
print('room edges:')
for a in sorted(room_edges):
    print(f'  {a} -> {", ".join(sorted(room_edges[a]))}')
for comp in cycles(room_edges):
    print('ROOM CYCLE:', ' <-> '.join(sorted(comp))); rc = 1
for comp in cycles(sib_edges):
    names = sorted('/'.join(c) for c in comp)
    print('SIBLING CYCLE:', ' <-> '.join(names))
    for a in comp:
        for b in sib_edges[a]:
            if b in comp:
                print('   ', '/'.join(a), '->', '/'.join(b))
    rc = 1
print('no cycles' if rc == 0 else 'cycles found')
sys.exit(rc)
