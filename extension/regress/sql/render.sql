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
