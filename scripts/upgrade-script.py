#!/usr/bin/env python3
"""Builds an upgrade script from its hand-written part and the install script's routines.

An upgrade that changes routines replaces them all: the line `-- @ROUTINES@` of the
hand-written part (extension/upgrade/pgmate--A--B.sql.in) becomes every CREATE FUNCTION and
CREATE PROCEDURE of the install script's sections, as CREATE OR REPLACE, in their order. So
no routine body is written twice, and none can be forgotten. Their comments follow them.
A line `-- @VIEW schema.name@` becomes that view's CREATE VIEW (as CREATE OR REPLACE, so
columns may only be added at the end) and its comment.

Usage: upgrade-script.py PART.sql.in SECTION.sql... > pgmate--A--B.sql
"""
import re
import sys


def statements(text):
    """The statements of an SQL text (comments dropped), split at semicolons outside quotes."""
    out, cur, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('--', i):
            j = text.find('\n', i)
            i = n if j < 0 else j + 1
            cur.append('\n')
            continue
        if c == '$':
            m = re.match(r'\$[A-Za-z_]*\$', text[i:])
            if m:
                tag = m.group(0)
                j = text.find(tag, i + len(tag))
                if j < 0:
                    raise SystemExit(f'unterminated {tag} quote')
                cur.append(text[i:j + len(tag)])
                i = j + len(tag)
                continue
        if c == "'":
            j = i + 1
            while True:
                j = text.find("'", j)
                if j < 0:
                    raise SystemExit('unterminated string')
                if text.startswith("''", j):
                    j += 2
                    continue
                break
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c == ';':
            out.append(''.join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    if ''.join(cur).strip():
        out.append(''.join(cur).strip())
    return out


def main():
    part, sections = sys.argv[1], sys.argv[2:]
    routines, comments, views = [], [], {}
    for path in sections:
        with open(path) as f:
            for s in statements(f.read()):
                if re.match(r'CREATE (FUNCTION|PROCEDURE)\b', s):
                    routines.append('CREATE OR REPLACE ' + s[len('CREATE '):] + ';')
                elif re.match(r'COMMENT ON (FUNCTION|PROCEDURE)\b', s):
                    comments.append(s + ';')
                elif m := re.match(r'CREATE VIEW (\S+)', s):
                    views[m.group(1)] = ['CREATE OR REPLACE ' + s[len('CREATE '):] + ';']
                elif (m := re.match(r'COMMENT ON VIEW (\S+)', s)) and m.group(1) in views:
                    views[m.group(1)].append(s + ';')
    with open(part) as f:
        text = f.read()
    if text.count('-- @ROUTINES@\n') != 1:
        raise SystemExit(f'{part}: needs one line "-- @ROUTINES@"')
    text = text.replace('-- @ROUTINES@\n', '\n\n'.join(routines + comments) + '\n')

    def view(m):
        if m.group(1) not in views:
            raise SystemExit(f'{part}: no view {m.group(1)} in the install script')
        return '\n'.join(views[m.group(1)]) + '\n'
    sys.stdout.write(re.sub(r'^-- @VIEW (\S+)@\n', view, text, flags=re.M))


if __name__ == '__main__':
    main()
