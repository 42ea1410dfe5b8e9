#!/usr/bin/env python3
"""The documentation's generated parts, and its checks.

    scripts/docs.py write      [--pgmate build/bin/pgmate]   regenerate them in place
    scripts/docs.py check      [--pgmate build/bin/pgmate]   fail when they differ from the code
    scripts/docs.py examples                                 run every runnable SQL example

In README.md and docs/*.md:
- `<!-- toc -->` ... `<!-- /toc -->` is the page's table of contents (its ## and ### headings);
- `<!-- generated: help SUBCOMMAND -->` ... `<!-- /generated -->` is `pgmate SUBCOMMAND --help`;
- `<!-- generated: learning-options -->` is the table of pgmate.learning_options (a database
  with the extension is made for it on the project's server: scripts/pg-server.sh env);
- `<!-- generated: train-options -->` is the table of the trainer's options, their defaults
  from the TrainOptions struct and their meaning from the comment above it
  (link/train_options.h).
`check` also fails when docs/troubleshooting.md leaves out a SQLSTATE that the extension
raises (ERRCODE_... in extension/*.cpp, ERRCODE = '...' in extension/sql/*.sql), and when
docs/learning.md leaves out an option of self-play (core/mcts/selfplay.cpp's set_option).

`examples` runs each ```sql block that follows a `<!-- runnable -->` line, in order, each
page in a fresh database with the extension (ON_ERROR_STOP: the first error fails, naming
the page and the block's line).
"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
DB = "pgmate_docs"


def psql(db, sql, check=True):
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
                          capture_output=True, text=True, check=check).stdout


def fresh_database(name):
    subprocess.run(["dropdb", "--if-exists", name], check=True, capture_output=True)
    subprocess.run(["createdb", name], check=True)
    psql(name, "CREATE EXTENSION pgmate")


def anchor(title):
    a = re.sub(r"[^\w\- ]", "", title.lower().replace("`", ""))
    return a.replace(" ", "-")


def toc(text):
    lines, fence = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^(##|###) (.+)$", line)
        if m:
            indent = "" if m.group(1) == "##" else "  "
            lines.append("%s- [%s](#%s)" % (indent, m.group(2), anchor(m.group(2))))
    return "\n".join(lines)


def help_text(pgmate, sub):
    r = subprocess.run([pgmate, sub, "--help"], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    out = (r.stdout + r.stderr).rstrip("\n")
    return "```\n$ pgmate %s --help\n%s\n```" % (sub, out)


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def learning_options():
    fresh_database(DB)
    rows = psql(DB, "SELECT name, kind, coalesce(array_to_string(choices, ', '), "
                    "CASE WHEN low IS NULL THEN '' ELSE low || ' to ' || high END), "
                    "coalesce(default_value::text, '(computed)'), per_call, description "
                    "FROM pgmate.learning_options ORDER BY position")
    subprocess.run(["dropdb", DB], check=True)
    out = ["| option | kind | values | default | per call | meaning |", "|---|---|---|---|---|---|"]
    for row in rows.strip("\n").split("\n"):
        name, kind, values, default, per_call, description = row.split("|", 5)
        values = re.sub(r"(\d)e\+?(\d+)", r"\1e\2", values)
        out.append("| `%s` | %s | %s | %s | %s | %s |" % (name, kind, cell(values), cell(default),
                                                      "yes" if per_call == "t" else "", cell(description)))
    return "\n".join(out)


def train_options():
    header = open(os.path.join(ROOT, "link/train_options.h")).read()
    # Meanings: the comment's "//   key   text" entries, continued by deeper-indented lines.
    meanings, key = {}, None
    for line in header.split("\n"):
        if not line.startswith("//"):
            break
        m = re.match(r"^//   (\w+)\s{2,}(.*)$", line)
        if m:
            key = m.group(1)
            meanings[key] = m.group(2).strip()
        elif key and re.match(r"^//\s{6,}\S", line):
            meanings[key] += " " + line[2:].strip()
        else:
            key = None
    body = header[header.index("struct TrainOptions {"):]
    body = body[:body.index("};")]
    out = ["| option | default | meaning |", "|---|---|---|"]
    for m in re.finditer(r"^\s+[\w:]+ (\w+) = ([^;]+);(?:\s*//\s*(.*))?$", body, re.M):
        name, default, note = m.group(1), m.group(2).strip(), (m.group(3) or "").strip()
        meaning = meanings.get(name, "")
        if note and not meaning:
            meaning = "(%s)" % note
        elif note:
            meaning = "(%s) %s" % (note, meaning)
        out.append("| `%s` | `%s` | %s |" % (name, default.replace('"', ""), cell(meaning)))
    return "\n".join(out)


def generate(text, pgmate):
    def block(m):
        what = m.group(1).split()
        if what[0] == "help":
            content = help_text(pgmate, what[1])
        elif what[0] == "learning-options":
            content = learning_options()
        elif what[0] == "train-options":
            content = train_options()
        else:
            sys.exit("docs: unknown generated block %r" % m.group(1))
        return "<!-- generated: %s -->\n%s\n<!-- /generated -->" % (m.group(1), content)
    text = re.sub(r"<!-- generated: ([^>]+?) -->.*?<!-- /generated -->", block, text, flags=re.S)
    return re.sub(r"<!-- toc -->.*?<!-- /toc -->", lambda m: "<!-- toc -->\n%s\n<!-- /toc -->" % toc(text),
                  text, flags=re.S)


def raised_sqlstates():
    # errcodes.txt: "22023    E    ERRCODE_INVALID_PARAMETER_VALUE    invalid_parameter_value"
    share = subprocess.run(["pg_config", "--sharedir"], capture_output=True, text=True).stdout.strip()
    codes, plpgsql = {}, {}
    for line in open(os.path.join(share or "/usr/share/postgresql/15", "errcodes.txt")):
        f = line.split()
        if len(f) >= 3 and re.match(r"^[0-9A-Z]{5}$", f[0]) and f[2].startswith("ERRCODE_"):
            codes[f[2]] = f[0]
            if len(f) >= 4:
                plpgsql[f[3]] = f[2]
    found = set()
    for path in glob.glob(os.path.join(ROOT, "extension", "*.[ch]*")):
        for name in re.findall(r"ERRCODE_[A-Z_0-9]+", open(path).read()):
            if name in codes:
                found.add(codes[name])
    for path in glob.glob(os.path.join(ROOT, "extension", "sql", "*.sql")):
        for name in re.findall(r"ERRCODE = '(\w+)'", open(path).read()):
            found.add(name if re.match(r"^[0-9A-Z]{5}$", name) else codes[plpgsql[name]])
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["write", "check", "examples"])
    ap.add_argument("--pgmate", default=os.path.join(ROOT, "build/bin/pgmate"))
    args = ap.parse_args()
    os.chdir(ROOT)
    if args.mode == "examples":
        return run_examples()
    stale = []
    for page in PAGES:
        text = open(page).read()
        new = generate(text, args.pgmate)
        if new != text:
            if args.mode == "write":
                open(page, "w").write(new)
                print("docs: wrote %s" % page)
            else:
                stale.append(page)
                diff = subprocess.run(["diff", "-u", page, "-"], input=new, capture_output=True, text=True).stdout
                print(diff[:4000])
    missing = sorted(c for c in raised_sqlstates() if "`%s`" % c not in open("docs/troubleshooting.md").read())
    if missing:
        print("docs: docs/troubleshooting.md leaves out SQLSTATEs the extension raises: %s" % ", ".join(missing))
    # Self-play's options, as set_option knows them, each named in docs/learning.md.
    learning = open("docs/learning.md").read()
    selfplay = sorted(set(re.findall(r'name == "(\w+)"', open("core/mcts/selfplay.cpp").read())))
    undocumented = [o for o in selfplay if "`%s`" % o not in learning]
    if undocumented:
        print("docs: docs/learning.md leaves out self-play options: %s" % ", ".join(undocumented))
        missing += undocumented
    if stale:
        print("docs: generated parts out of date in %s: run scripts/docs.py write" % ", ".join(stale))
    if args.mode == "check":
        print("docs: %d pages, %s" % (len(PAGES), "out of date" if stale or missing else "up to date"))
    return 1 if stale or missing else 0


def run_examples():
    failed, count = 0, 0
    for page in PAGES:
        lines = open(page).read().split("\n")
        blocks = []
        for i, line in enumerate(lines):
            if line.strip() == "<!-- runnable -->" and i + 1 < len(lines) and lines[i + 1].startswith("```sql"):
                end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
                blocks.append((i + 2, "\n".join(lines[i + 2:end])))
        if not blocks:
            continue
        fresh_database(DB)
        for line, sql in blocks:
            count += 1
            r = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", DB], input=sql,
                               capture_output=True, text=True)
            if r.returncode != 0:
                failed += 1
                print("FAIL %s:%d: %s" % (page, line, r.stderr.strip()[:2000]))
                break
            print("ok   %s:%d" % (page, line))
        subprocess.run(["dropdb", DB], check=True)
    print("docs examples: %d blocks run, %d failed" % (count, failed))
    return 1 if failed or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
