#!/usr/bin/env bash
# pgmate import against a live PostgreSQL database.
#
#   tests/cli/import.sh PGMATE DBNAME
#
# PGMATE: the pgmate binary; DBNAME: a scratch database (libpq environment for the rest:
# PGHOST, PGPORT, PGUSER). The extension is created there if missing. Games are added to
# pgmate.games (checks look only at the rows this run adds); pgmate.openings is REPLACED
# by the ECO lines when /usr/share/pgn-extract/eco.pgn exists.
# Prints "import: N passed, M failed" and exits 1 on any failure.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 PGMATE DBNAME" >&2
  exit 2
fi
PGMATE=$1
DB=$2
ECO=/usr/share/pgn-extract/eco.pgn

. "$(dirname "$0")/checks.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if ! q "CREATE EXTENSION IF NOT EXISTS pgmate" >/dev/null 2>"$TMP/err"; then
  echo "import: cannot use database \"$DB\": $(cat "$TMP/err")" >&2
  exit 1
fi

# Four games; the third is bad (an illegal king move on line 25).
cat >"$TMP/games.pgn" <<'EOF'
[Event "Test \"quoted\" event"]
[Site "Caf\\e"]
[Date "2024.05.01"]
[Round "1"]
[White "Alpha"]
[Black "Beta"]
[Result "1/2-1/2"]

1. e4 {a comment} e5 (1... c5 2. Nf3) 2. Nf3 Nc6 3. Bb5 a6 $1 4. O-O 1/2-1/2

[Event "Promotion"]
[White "Gamma"]
[Black "Delta"]
[Result "1-0"]
[SetUp "1"]
[FEN "4k3/P7/8/8/8/8/8/4K3 w - - 0 1"]

1. a8=Q+ Kd7 2. Qb7+ 1-0

[Event "Bad"]
[White "Epsilon"]
[Black "Zeta"]
[Result "*"]

1. e4 e5 2. Ke3 Nc6 *

[Event "Scholar"]
[White "Eta"]
[Black "Theta"]
[Result "1-0"]
[Termination "checkmate"]

1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0
EOF

# ---- --on-error skip: three games in, one reported
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
out=$("$PGMATE" import --db "dbname=$DB" --on-error skip "$TMP/games.pgn" 2>"$TMP/err")
rc=$?
check "skip: exit code" "$rc" 0
check_match "skip: summary" "$out" '^imported 3 games \(1 skipped\) in [0-9.]+ s$'
check_match "skip: bad game reported" "$(cat "$TMP/err")" 'game 3.*Ke3.*line 25'
check "skip: rows added" "$(q "SELECT count(*) FROM pgmate.games WHERE id > $base")" 3
check "skip: source" "$(q "SELECT string_agg(DISTINCT source, ',') FROM pgmate.games WHERE id > $base")" import
check "skip: moves with castling" \
  "$(q "SELECT moves FROM pgmate.games WHERE id > $base AND white = 'Alpha'")" "{e2e4,e7e5,g1f3,b8c6,f1b5,a7a6,e1g1}"
check "skip: tags and columns" \
  "$(q "SELECT event || '|' || site || '|' || date || '|' || round || '|' || result || '|' || (tags->>'Event') || '|' || (tags->>'Black') FROM pgmate.games WHERE id > $base AND white = 'Alpha'")" \
  'Test "quoted" event|Caf\e|2024.05.01|1|1/2-1/2|Test "quoted" event|Beta'
check "skip: FEN game start" \
  "$(q "SELECT start::text FROM pgmate.games WHERE id > $base AND white = 'Gamma'")" "4k3/P7/8/8/8/8/8/4K3 w - - 0 1"
check "skip: FEN game moves" \
  "$(q "SELECT moves::text || ' ' || ply_count || ' ' || (tags->>'FEN') FROM pgmate.games WHERE id > $base AND white = 'Gamma'")" \
  "{a7a8q,e8d7,a8b7} 3 4k3/P7/8/8/8/8/8/4K3 w - - 0 1"
check "skip: termination" \
  "$(q "SELECT coalesce(termination, 'NULL') FROM pgmate.games WHERE id > $base ORDER BY id" | tr '\n' ' ')" "NULL NULL checkmate "
check "skip: missing tags are NULL" \
  "$(q "SELECT (date IS NULL)::text || (site IS NULL)::text FROM pgmate.games WHERE id > $base AND white = 'Eta'")" truetrue
check "skip: games replay" \
  "$(q "SELECT bool_and(is_valid_game(start, moves)) FROM pgmate.games WHERE id > $base")" t

# ---- standard input
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
out=$("$PGMATE" import --db "dbname=$DB" --on-error skip - <"$TMP/games.pgn" 2>/dev/null)
check "stdin: summary" "${out% in *}" "imported 3 games (1 skipped)"
check "stdin: rows added" "$(q "SELECT count(*) FROM pgmate.games WHERE id > $base")" 3

# ---- compressed files as they come (lichess ships .pgn.zst): zstd, gzip and bzip2, told by
# their first bytes whatever the name, from a file or standard input, frames one after the
# other; a truncated file stops the import naming it
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
"$PGMATE" import --db "dbname=$DB" --on-error skip "$TMP/games.pgn" >/dev/null 2>&1
plain=$(q "SELECT string_agg(moves::text || result, ';' ORDER BY id) FROM pgmate.games WHERE id > $base")
zstd -q -c "$TMP/games.pgn" >"$TMP/games.pgn.zst"
gzip -c "$TMP/games.pgn" >"$TMP/games.pgn.gz"
bzip2 -c "$TMP/games.pgn" >"$TMP/games.pgn.bz2"
cp "$TMP/games.pgn.zst" "$TMP/named-plain.pgn"
for f in games.pgn.zst games.pgn.gz games.pgn.bz2 named-plain.pgn; do
  base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
  out=$("$PGMATE" import --db "dbname=$DB" --on-error skip "$TMP/$f" 2>/dev/null)
  check "$f: summary" "${out% in *}" "imported 3 games (1 skipped)"
  check "$f: the plain file's games" "$(q "SELECT string_agg(moves::text || result, ';' ORDER BY id) FROM pgmate.games WHERE id > $base")" "$plain"
done
for f in games.pgn.zst games.pgn.gz games.pgn.bz2; do
  out=$(cat "$TMP/$f" "$TMP/$f" | "$PGMATE" import --db "dbname=$DB" --on-error skip - 2>/dev/null)
  check "$f twice on standard input: every frame read" "${out% in *}" "imported 6 games (2 skipped)"
done
head -c $(( $(stat -c %s "$TMP/games.pgn.zst") - 8 )) "$TMP/games.pgn.zst" >"$TMP/truncated.pgn.zst"
before=$(q "SELECT count(*) FROM pgmate.games")
"$PGMATE" import --db "dbname=$DB" --on-error skip "$TMP/truncated.pgn.zst" >/dev/null 2>"$TMP/err"
check "truncated .zst: exit code" "$?" 1
check_match "truncated .zst: message names the file" "$(cat "$TMP/err")" 'cannot decompress PGN file ".*truncated.pgn.zst" \(zstd\): the file ends inside a compressed frame'
check "truncated .zst: nothing stored" "$(q "SELECT count(*) FROM pgmate.games")" "$before"
printf '\x1f\x8bnot gzip at all' >"$TMP/corrupt.pgn.gz"
"$PGMATE" import --db "dbname=$DB" "$TMP/corrupt.pgn.gz" >/dev/null 2>"$TMP/err"
check "corrupt .gz: exit code" "$?" 1
check_match "corrupt .gz: message" "$(cat "$TMP/err")" 'cannot decompress PGN file ".*corrupt.pgn.gz" \(gzip\)'

# ---- lichess's speed of each game's TimeControl, in the column speed
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
printf '[White "Speed1"]\n[TimeControl "60+0"]\n[Result "*"]\n\n1. e4 *\n\n[White "Speed2"]\n[TimeControl "600+5"]\n[Result "*"]\n\n1. d4 *\n\n[White "Speed3"]\n[Result "*"]\n\n1. c4 *\n' \
  | zstd -q -c | "$PGMATE" import --db "dbname=$DB" - >/dev/null 2>&1
check "speed: from TimeControl" "$(q "SELECT string_agg(white || '=' || coalesce(speed, 'none'), ',' ORDER BY id) FROM pgmate.games WHERE id > $base")" \
  "Speed1=bullet,Speed2=rapid,Speed3=none"

# ---- lichess's format as its database ships it (pgmate generate --lichess, through zstd):
# every game's speed and clocks, the evaluations of the analysed share, the same bytes twice
"$PGMATE" generate --games 400 --seed 4 --lichess --threads 2 --out - 2>/dev/null | zstd -q -c >"$TMP/lichess.pgn.zst"
check "lichess: the same file again" "$("$PGMATE" generate --games 400 --seed 4 --lichess --threads 1 --out - 2>/dev/null | md5sum)" \
  "$(zstd -q -dc "$TMP/lichess.pgn.zst" | md5sum)"
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
evals_before=$(q "SELECT count(*) FROM pgmate.position_evals WHERE engine = 'pgn'")
out=$("$PGMATE" import --db "dbname=$DB" "$TMP/lichess.pgn.zst" 2>"$TMP/err")
check "lichess: summary" "${out%% in *}" "imported 400 games (0 skipped)"
check "lichess: every game's speed, clocks and rated event" \
  "$(q "SELECT count(*) FILTER (WHERE speed IS NOT NULL AND clocks IS NOT NULL AND event LIKE 'Rated % game' AND site LIKE 'https://lichess.org/%') FROM pgmate.games WHERE id > $base")" 400
check "lichess: several speeds" "$(q "SELECT count(DISTINCT speed) >= 4 FROM pgmate.games WHERE id > $base")" t
# the import's end refreshed the explorer's counts: the start position's count is every game's
check "lichess: the explorer's counts refreshed" \
  "$(q "SELECT s.stale, c.games = (SELECT count(*) FROM pgmate.games WHERE start = 'startpos')
        FROM pgmate.position_counts_state s, pgmate.position_counts c WHERE c.key = board_key('startpos') # (1::bigint << 63)")" "f|t"
check "lichess: a share analysed" \
  "$(q "SELECT count(*) BETWEEN 200 AND 10000 FROM pgmate.position_evals WHERE engine = 'pgn'") $(( $(q "SELECT count(*) FROM pgmate.position_evals WHERE engine = 'pgn'") > evals_before ))" "t 1"

# ---- --on-error fail (default): exit 2, the failing batch rolled back
before=$(q "SELECT count(*) FROM pgmate.games")
"$PGMATE" import --db "dbname=$DB" "$TMP/games.pgn" >"$TMP/out" 2>"$TMP/err"
rc=$?
check "fail: exit code" "$rc" 2
check "fail: nothing on stdout" "$(cat "$TMP/out")" ""
check_match "fail: error names game, move and line" "$(cat "$TMP/err")" 'PGN game 3, move 2\. Ke3: .*\(line 25\)'
check_match "fail: says what was committed" "$(cat "$TMP/err")" '0 games committed; the 2 games of the unfinished batch were rolled back'
check "fail: table unchanged" "$(q "SELECT count(*) FROM pgmate.games")" "$before"

# With --batch 1 the two games before the bad one were committed and stay.
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
"$PGMATE" import --db "dbname=$DB" --batch 1 "$TMP/games.pgn" >/dev/null 2>"$TMP/err"
rc=$?
check "fail --batch 1: exit code" "$rc" 2
check_match "fail --batch 1: says what was committed" "$(cat "$TMP/err")" 'stopped at game 3: 2 games committed \(in 2 batches of up to 1\)'
check "fail --batch 1: committed games kept" \
  "$(q "SELECT string_agg(white, ',' ORDER BY white) FROM pgmate.games WHERE id > $base")" "Alpha,Gamma"

# ---- several connections, one batch per game: every position is found through the
# position index, and the runs the import left are merged at its end
cat "$TMP/games.pgn" "$TMP/games.pgn" >"$TMP/twice.pgn"
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
out=$("$PGMATE" import --db "dbname=$DB" --on-error skip --batch 1 --jobs 3 "$TMP/twice.pgn" 2>/dev/null)
check "jobs: summary" "${out% in *}" "imported 6 games (2 skipped)"
check "jobs: rows added" "$(q "SELECT count(*) FROM pgmate.games WHERE id > $base")" 6
check "jobs: every position indexed" \
  "$(q "SELECT bool_and(g.id IN (SELECT pgmate.position_games(p.board))) FROM pgmate.games g, game_positions(g.start, g.moves) p WHERE g.id > $base")" t
check "jobs: runs merged at the end" "$(q "SELECT count(*) < 4 FROM pgmate.position_runs WHERE level = 0")" t
check "jobs: no unpublished part left" "$(q "SELECT count(*) FROM pgmate.position_runs WHERE level < 0")" 0

# ---- a session holding a snapshot from before an import: the import's staged runs are
# deleted block by block once their merge is published (a TRUNCATE would empty them under
# such a snapshot; the clean waits for it up to 2 s, then gives up), and the session's
# searches are unchanged; once that session has ended, one TRUNCATE empties them
staged_file() { q "SELECT pg_relation_filenode('pgmate.position_staged_blocks')"; }
e4="'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'"
mkfifo "$TMP/old.in"
psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$DB" <"$TMP/old.in" >"$TMP/old.out" 2>&1 &
old_pid=$!
exec 3>"$TMP/old.in"
echo "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 'count ' || pgmate.position_count($e4);" >&3
for _ in $(seq 1 100); do grep -q '^count' "$TMP/old.out" && break; sleep 0.05; done
file=$(staged_file)
out=$("$PGMATE" import --db "dbname=$DB" --on-error skip --batch 1 --jobs 2 "$TMP/twice.pgn" 2>/dev/null)
out=$(echo "$out" | head -n 1)
check "old snapshot: import done" "${out% in *}" "imported 6 games (2 skipped)"
check "old snapshot: staged runs deleted one by one" "$(staged_file)" "$file"
echo "SELECT 'count ' || pgmate.position_count($e4); COMMIT;" >&3
exec 3>&-
wait "$old_pid"
check "old snapshot: its searches unchanged" "$(sort -u "$TMP/old.out" | wc -l)" 1
check "old snapshot: no unpublished part or retired run left" "$(q "SELECT count(*) FROM pgmate.position_runs WHERE level < 0")" 0
out=$("$PGMATE" import --db "dbname=$DB" --on-error skip --batch 1 --jobs 2 "$TMP/twice.pgn" 2>/dev/null)
check "no old snapshot: staged runs emptied at once" "$([ "$(staged_file)" != "$file" ] && echo new file)" "new file"
check "no old snapshot: every position indexed" \
  "$(q "SELECT bool_and(g.id IN (SELECT pgmate.position_games(p.board))) FROM pgmate.games g, game_positions(g.start, g.moves) p")" t

# ---- --duplicates skip: games already stored, or earlier in the file, are left out
cat >"$TMP/copies.pgn" <<'EOF'
[Event "New"]
[White "Iota"]
[Result "0-1"]

1. f3 e5 2. g4 Qh4# 0-1

[Event "Copy of the new one, other tags"]
[White "Kappa"]
[Result "*"]

1. f3 e5 2. g4 Qh4# *

[Event "Stored before"]
[White "Eta"]
[Result "1-0"]

1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0
EOF
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
out=$("$PGMATE" import --db "dbname=$DB" --duplicates skip --batch 2 "$TMP/copies.pgn" 2>"$TMP/err")
check "duplicates: summary" "${out% in *}" "imported 1 games (0 skipped, 2 duplicates)"
check "duplicates: the first copy kept" "$(q "SELECT string_agg(white, ',') FROM pgmate.games WHERE id > $base")" Iota
out=$("$PGMATE" import --db "dbname=$DB" --duplicates skip --jobs 2 --batch 1 "$TMP/copies.pgn" 2>"$TMP/err")
check "duplicates: all stored already" "${out% in *}" "imported 0 games (0 skipped, 3 duplicates)"
check "duplicates: copies share game_hash" \
  "$(q "SELECT count(DISTINCT game_hash) || ' ' || bool_and(game_hash = game_hash(start, moves)) FROM pgmate.games WHERE white IN ('Eta', 'Iota')")" "2 true"
"$PGMATE" import --db "dbname=$DB" --duplicates some "$TMP/copies.pgn" >/dev/null 2>"$TMP/err"
check "bad --duplicates: exit code" "$?" 2

# ---- export: games out as PGN and back in as the same games (start, moves, result, tags)
out=$("$PGMATE" export --db "dbname=$DB" --where "white IN ('Alpha', 'Gamma', 'Iota') AND id <= $base + 1" --out "$TMP/export.pgn" 2>"$TMP/err")
check "export: exit code" "$?" 0
exported=$(q "SELECT count(*) FROM pgmate.games WHERE white IN ('Alpha', 'Gamma', 'Iota') AND id <= $base + 1")
check "export: summary" "$out" "exported $exported games to $TMP/export.pgn"
check "export: no partial file left" "$(ls "$TMP" | grep -c partial)" 0
base2=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
"$PGMATE" import --db "dbname=$DB" --jobs 1 "$TMP/export.pgn" >/dev/null 2>&1
check "export: read back" "$(q "SELECT count(*) FROM pgmate.games WHERE id > $base2")" "$exported"
check "export: round trip exact" "$(q "
  SELECT count(*) FROM (
    (SELECT start::text, moves::text, result, tags FROM pgmate.games
      WHERE white IN ('Alpha', 'Gamma', 'Iota') AND id <= $base + 1
     EXCEPT ALL SELECT start::text, moves::text, result, tags FROM pgmate.games WHERE id > $base2)
    UNION ALL
    (SELECT start::text, moves::text, result, tags FROM pgmate.games WHERE id > $base2
     EXCEPT ALL SELECT start::text, moves::text, result, tags FROM pgmate.games
      WHERE white IN ('Alpha', 'Gamma', 'Iota') AND id <= $base + 1)) d")" 0
"$PGMATE" export --db "dbname=$DB" --where "no_such_column = 1" --out "$TMP/bad.pgn" >/dev/null 2>"$TMP/err"
check "export: bad condition exit code" "$?" 1
check_match "export: bad condition message" "$(cat "$TMP/err")" 'no_such_column'
check "export: nothing written for a failed export" "$(ls "$TMP" | grep -c bad.pgn)" 0
"$PGMATE" export --db "dbname=$DB" --where "white = 'Iota'" >"$TMP/stdout.pgn" 2>/dev/null
check_match "export: to standard output" "$(head -n 1 "$TMP/stdout.pgn")" '^\[Event "New"\]$'

# ---- tag text as found: Windows-1252 bytes become UTF-8, a tab and a backslash stay, in the
# columns and in the tags' JSON alike
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
printf '[Event "Ma\xeetres\tclub"]\n[White "M\xfcller \\\\ Sons"]\n[Black "Kappa"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n' >"$TMP/text.pgn"
"$PGMATE" import --db "dbname=$DB" "$TMP/text.pgn" >/dev/null 2>"$TMP/err"
check "text: exit code" "$?" 0
check "text: columns" "$(q "SELECT event || '|' || white FROM pgmate.games WHERE id > $base")" "$(printf 'Ma\xc3\xaetres\tclub|M\xc3\xbcller \\ Sons')"
check "text: tags" "$(q "SELECT (tags->>'Event') || '|' || (tags->>'White') FROM pgmate.games WHERE id > $base")" \
  "$(printf 'Ma\xc3\xaetres\tclub|M\xc3\xbcller \\ Sons')"

# ---- pgmate generate --db: the generated games go straight in, the same games as its PGN
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
out=$("$PGMATE" generate --games 200 --seed 9 --db "dbname=$DB" 2>"$TMP/err")
check "generate --db: exit code" "$?" 0
check_match "generate --db: summary" "$out" 'generated 200 games .* games in pgmate.games'
"$PGMATE" generate --games 200 --seed 9 --out "$TMP/generated.pgn" >/dev/null 2>&1
chmod a+rx "$TMP" && chmod a+r "$TMP/generated.pgn"  # read by the server below
check "generate --db: the games of its PGN" \
  "$(q "SELECT md5(string_agg(moves::text || result, ';' ORDER BY id)) FROM pgmate.games WHERE id > $base")" \
  "$(q "SELECT md5(string_agg(moves::text || result, ';')) FROM pgn_games(pg_read_file('$TMP/generated.pgn'))")"
"$PGMATE" generate --games 20 --seed 9 --db "dbname=pgmate_import_no_such_database" >/dev/null 2>"$TMP/err"
check "generate --db: a failed import fails" "$?" 1

# ---- a row the server refuses (a constraint of the test's own, for new rows only): exit
# 1, the server's message, the PGN game of that row (the batch holds games 1, 2 and 4: its
# third row), and its batch rolled back
q "ALTER TABLE pgmate.games ADD CONSTRAINT import_test_no_eta CHECK (white IS DISTINCT FROM 'Eta') NOT VALID" >/dev/null
before=$(q "SELECT count(*) FROM pgmate.games")
"$PGMATE" import --db "dbname=$DB" --on-error skip "$TMP/games.pgn" >/dev/null 2>"$TMP/err"
rc=$?
q "ALTER TABLE pgmate.games DROP CONSTRAINT import_test_no_eta" >/dev/null
check "server refuses a row: exit code" "$rc" 1
check_match "server refuses a row: the server's message" "$(cat "$TMP/err")" 'violates check constraint "import_test_no_eta"'
check_match "server refuses a row: the PGN game named" "$(cat "$TMP/err")" 'the rejected row is PGN game 4$'
check "server refuses a row: its batch rolled back" "$(q "SELECT count(*) FROM pgmate.games")" "$before"

# ---- bad input and connection errors
"$PGMATE" import --db "dbname=$DB" "$TMP/no-such-file.pgn" >/dev/null 2>"$TMP/err"
check "missing file: exit code" "$?" 2
check_match "missing file: message" "$(cat "$TMP/err")" 'cannot open PGN file'
"$PGMATE" import --db "dbname=$DB" --on-error maybe "$TMP/games.pgn" >/dev/null 2>"$TMP/err"
check "bad --on-error: exit code" "$?" 2
"$PGMATE" import --db "dbname=$DB" --batch 0 "$TMP/games.pgn" >/dev/null 2>"$TMP/err"
check "bad --batch: exit code" "$?" 2
"$PGMATE" import --db "dbname=$DB" --jobs 0 "$TMP/games.pgn" >/dev/null 2>"$TMP/err"
check "bad --jobs: exit code" "$?" 2
"$PGMATE" import --db "dbname=pgmate_import_no_such_database" "$TMP/games.pgn" >/dev/null 2>"$TMP/err"
check "bad database: exit code" "$?" 1
check_match "bad database: libpq message" "$(cat "$TMP/err")" 'cannot connect to the database: .*does not exist'

# ---- openings
if [ -r "$ECO" ]; then
  out=$("$PGMATE" import --openings --db "dbname=$DB" 2>"$TMP/err")
  check "openings: exit code" "$?" 0
  check "openings: summary" "$out" "loaded 2014 openings"
  check "openings: rows" "$(q "SELECT count(*) FROM pgmate.openings")" 2014
  # Loading again replaces the contents.
  "$PGMATE" import --openings --db "dbname=$DB" "$ECO" >/dev/null 2>&1
  check "openings: reload replaces" "$(q "SELECT count(*) FROM pgmate.openings")" 2014
  check "openings: ply and key" \
    "$(q "SELECT count(*) FROM pgmate.openings WHERE ply <> cardinality(moves) OR key <> (game_keys('startpos', moves))[ply + 1]")" 0
  check "openings: variation NULL when absent" \
    "$(q "SELECT (variation IS NULL)::text FROM pgmate.openings WHERE name = 'Polish (Sokolsky) opening' AND ply = 1")" true
  check_match "openings: Ruy Lopez" \
    "$(q "SELECT (opening('startpos', '{e2e4,e7e5,g1f3,b8c6,f1b5}')).name")" 'Ruy Lopez|Spanish'
  "$PGMATE" import --openings --db "dbname=$DB" --batch 5 >/dev/null 2>&1
  check "openings: --batch refused" "$?" 2
else
  echo "skip openings: $ECO not found (install pgn-extract)"
fi

echo "import: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
