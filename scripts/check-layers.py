#!/usr/bin/env python3
"""Checks that every #include of the project's C++ goes down the tree, never up or around.

The parts and what each may include (docs/development.md draws them):

  core/       the rules, search, analysis, arena, game database: core only
  link/       the worker's protocol and client library, training runs, options, weights
              format: core and link
  worker/     pgmate-worker (server, nn, cuda, backend interfaces): core, link, worker
  extension/  the PostgreSQL extension: core, link, extension
  cli/        the pgmate program: core, link, cli

and, inside them, no two folders that include each other (directly or round a loop).
Includes resolve as the compilers see them: "link/x.h" and "worker/x/y.h" from the project
root, anything else beside the including file first, then under core/; what is in neither
is a system or PostgreSQL header.

usage: scripts/check-layers.py [ROOT]    exit 1 and one line per crossing when any
       scripts/check-layers.py --self-test
"""
import os
import re
import shutil
import sys
import tempfile

PARTS = {
    'core': {'core'},
    'link': {'core', 'link'},
    'worker': {'core', 'link', 'worker'},
    'extension': {'core', 'link', 'extension'},
    'cli': {'core', 'link', 'cli'},
}
SOURCES = ('.h', '.cpp', '.cu', '.cuh')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def resolve(root, including, name):
    """The project file an include names (relative to root), or None for a system header."""
    here = os.path.dirname(including)
    for candidate in (os.path.join(here, name), name if name.split('/')[0] in ('link', 'worker') else None,
                      os.path.join('core', name)):
        if candidate and os.path.isfile(os.path.join(root, candidate)):
            return os.path.normpath(candidate)
    return None


def check(root):
    problems, edges = [], {}
    for part in PARTS:
        for folder, _, files in os.walk(os.path.join(root, part)):
            for f in sorted(files):
                if not f.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(folder, f), root)
                with open(os.path.join(root, path), errors='replace') as src:
                    text = src.read()
                for name in INCLUDE.findall(text):
                    target = resolve(root, path, name)
                    if target is None:
                        continue
                    target_part = target.split(os.sep)[0]
                    if target_part not in PARTS[part]:
                        problems.append(f'{path}: includes "{name}" ({target}): {part}/ may include only '
                                        + ', '.join(sorted(PARTS[part])))
                    a, b = os.path.dirname(path), os.path.dirname(target)
                    if a != b:
                        edges.setdefault(a, {}).setdefault(b, (path, name))
    # folder cycles: a depth-first search that reports each loop once
    state, stack = {}, []

    def visit(node):
        state[node] = 'open'
        stack.append(node)
        for nxt in sorted(edges.get(node, {})):
            if state.get(nxt) == 'open':
                loop = stack[stack.index(nxt):] + [nxt]
                via = '; '.join(f'{edges[x][y][0]} includes "{edges[x][y][1]}"' for x, y in zip(loop, loop[1:]))
                problems.append('folders include each other: ' + ' -> '.join(loop) + f' ({via})')
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 'done'

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return problems


def self_test():
    """A small tree with one upward include and one folder loop: both must be found."""
    tmp = tempfile.mkdtemp()
    try:
        files = {
            'core/chess/board.h': '#include "common/random.h"\n',
            'core/common/random.h': '#include <cstdint>\n',
            'link/protocol.h': '#include "chess/board.h"\n',
            'core/mcts/search.h': '#include "link/protocol.h"\n',   # core includes link: upward
            'worker/server/a.h': '#include "worker/nn/b.h"\n',
            'worker/nn/b.h': '#include "worker/server/c.h"\n',     # server <-> nn: a loop
            'worker/server/c.h': '\n',
        }
        for path, text in files.items():
            os.makedirs(os.path.join(tmp, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(tmp, path), 'w') as f:
                f.write(text)
        found = check(tmp)
        upward = [p for p in found if p.startswith('core/mcts/search.h')]
        loop = [p for p in found if 'worker/nn' in p and 'worker/server' in p and p.startswith('folders')]
        if len(upward) != 1 or len(loop) != 1 or len(found) != 2:
            print('check-layers self-test failed: found', found)
            return 1
        print('check-layers self-test: the planted upward include and folder loop are found')
        return 0
    finally:
        shutil.rmtree(tmp)


def main():
    if sys.argv[1:] == ['--self-test']:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f'check-layers: {len(problems)} includes cross the layers (docs/development.md)')
        return 1
    print('check-layers: every include goes down the tree; no folders include each other')
    return 0


if __name__ == '__main__':
    sys.exit(main())
