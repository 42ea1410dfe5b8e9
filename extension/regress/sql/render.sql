-- board_diagram and board_svg
SELECT board_diagram('startpos');
SELECT board_diagram('rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3');
SELECT board_diagram(play('startpos', '{f2f3,e7e5,g2g4,d8h4}'::move[]));
SELECT left(s, 5) AS opening, right(s, 7) AS closing,
       (length(s) - length(replace(s, '<rect', ''))) / 5 AS rects,
       (length(s) - length(replace(s, 'class="piece', ''))) / 12 AS pieces
  FROM (SELECT board_svg('startpos') AS s) x;
-- the last move adds two highlighted squares; a king in check one more
SELECT (length(s) - length(replace(s, '<rect', ''))) / 5 AS rects
  FROM (SELECT board_svg(play('startpos', 'e2e4'), 'e2e4') AS s) x;
SELECT (length(s) - length(replace(s, '<rect', ''))) / 5 AS rects
  FROM (SELECT board_svg(play('startpos', '{f2f3,e7e5,g2g4,d8h4}'::move[]), 'd8h4') AS s) x;
SELECT board_svg(NULL) IS NULL AS null_board, board_svg('startpos', NULL) = board_svg('startpos') AS null_move;
-- well-formed XML
SELECT xml_is_well_formed_document(board_svg(play('startpos', 'e2e4'), 'e2e4')) AS well_formed;

-- Any query's numbers as a line chart: a line a series, its name in the legend
SELECT left(c, 4) AS svg, c LIKE '%1M games%' AND c LIKE '%3M games%' AS legend,
       xml_is_well_formed_document(c) AS well_formed
  FROM (SELECT pgmate.line_chart('explorer p95', 'games', 'ms',
          '[{"series": "1M games", "x": 1, "y": 12.2}, {"series": "3M games", "x": 3, "y": 14.0},
            {"series": "1M games", "x": 3, "y": 15.1}]') AS c) x;
\set VERBOSITY terse
SELECT pgmate.line_chart('t', 'x', 'y', '{"series": "a"}');
SELECT pgmate.line_chart('t', 'x', 'y', '[{"series": "a", "x": "one", "y": 2}]');
SELECT pgmate.line_chart('t', 'x', 'y', (SELECT jsonb_agg(jsonb_build_object('series', 's', 'x', i, 'y', i))
                                         FROM generate_series(1, 100001) i));
SELECT pgmate.line_chart('t', 'x', 'y', '[]', 100, 100);
\set VERBOSITY default
