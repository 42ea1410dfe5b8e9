// Reference legal-move generator following the torus formalisation.
//
// Board numbering: the 8x8 board is embedded in a 10x10 torus and squares are
// numbered by columns:
//
//     index = 10 * column + row,   column 1..8 = files a..h, row 1..8 = ranks 1..8
//
// so a1 = 11, h1 = 81, a8 = 18, e1 = 51, e8 = 58, h8 = 88. Columns 0 and 9 and
// rows 0 and 9 are off-board squares. All index arithmetic is taken mod 100
// (the torus), and off-board squares are absorbing: a step that lands on one is
// discarded and a slider stops there. Since a single step changes the column
// and the row by at most 2, it can never wrap from one board square to another:
// a row that over- or underflows borrows into row 0 or 9 and a column that does
// so wraps to column 9 or 0 - all off-board.
//
// Direction sets (index additions), with "north" = towards rank 8 = +1 and
// "east" = towards file h = +10:
//   rook   {+1, -1, +10, -10}        (N, S, E, W)
//   bishop {+11, -11, +9, -9}        (NE, SW, SE, NW: +9 = one file east, one rank south)
//   queen, king = rook u bishop
//   knight {+21, +19, +12, +8, -21, -19, -12, -8}   (10*dfile + drank with |dfile|,|drank| = {1,2})
//   white pawn: push +1,  captures +11 (NE) and -9 (NW)
//   black pawn: push -1,  captures -11 (SW) and +9 (SE)
//
// Legality is checked the simple way: make the move on a copy and reject it if
// the mover's king is attacked afterwards.

#include "torus_movegen.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <stdexcept>

namespace torus {
namespace {

constexpr std::array<int, 4> kRookDirs = {+1, -1, +10, -10};
constexpr std::array<int, 4> kBishopDirs = {+11, -11, +9, -9};
constexpr std::array<int, 8> kQueenDirs = {+1, -1, +10, -10, +11, -11, +9, -9};
constexpr std::array<int, 8> kKnightDirs = {+21, +19, +12, +8, -21, -19, -12, -8};

int col_of(int sq) { return sq / 10; }
int row_of(int sq) { return sq % 10; }
bool on_board(int sq) {
    return col_of(sq) >= 1 && col_of(sq) <= 8 && row_of(sq) >= 1 && row_of(sq) <= 8;
}
// One step on the torus.
int step(int sq, int dir) { return ((sq + dir) % 100 + 100) % 100; }

std::string square_name(int sq) {
    return {static_cast<char>('a' + col_of(sq) - 1), static_cast<char>('0' + row_of(sq))};
}
// Parses "e4" to 54; returns -1 if it is not a square name.
int parse_square(const std::string& s) {
    if (s.size() != 2 || s[0] < 'a' || s[0] > 'h' || s[1] < '1' || s[1] > '8') return -1;
    return 10 * (s[0] - 'a' + 1) + (s[1] - '0');
}

bool is_white(char p) { return p >= 'A' && p <= 'Z'; }
char upper(char p) { return static_cast<char>(p >= 'a' && p <= 'z' ? p - 'a' + 'A' : p); }
// Piece letter of the given colour ('P','N',... for white, 'p','n',... for black).
char colored(char upper_piece, bool white) {
    return white ? upper_piece : static_cast<char>(upper_piece - 'A' + 'a');
}

struct Position {
    std::array<char, 100> board{};  // FEN letter, or 0 for empty / off-board
    bool white_to_move = true;
    bool castle_K = false, castle_Q = false, castle_k = false, castle_q = false;
    int ep = -1;  // en-passant target square, -1 if none
    int halfmove = 0;
    int fullmove = 1;
};

struct Move {
    int from = 0;
    int to = 0;
    char promo = 0;  // 'q','r','b','n' or 0
};

std::string to_uci(const Move& m) {
    std::string s = square_name(m.from) + square_name(m.to);
    if (m.promo) s += m.promo;
    return s;
}

int parse_int(const std::string& s, const std::string& fen) {
    if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw std::invalid_argument("torus: bad move counter in FEN: " + fen);
    return std::stoi(s);
}

Position parse_fen(const std::string& fen) {
    auto bad = [&](const char* why) { throw std::invalid_argument(std::string("torus: ") + why + ": " + fen); };
    std::istringstream in(fen);
    std::vector<std::string> f;
    for (std::string tok; in >> tok;) f.push_back(tok);
    if (f.size() != 4 && f.size() != 6) bad("expected 4 or 6 fields");

    Position p;
    // Placement: ranks 8..1, files a..h.
    int row = 8, col = 1;
    for (char c : f[0]) {
        if (c == '/') {
            if (col != 9 || row == 1) bad("bad rank layout");
            --row;
            col = 1;
        } else if (c >= '1' && c <= '8') {
            col += c - '0';
            if (col > 9) bad("rank too long");
        } else if (std::string("PNBRQKpnbrqk").find(c) != std::string::npos) {
            if (col > 8) bad("rank too long");
            p.board[10 * col + row] = c;
            ++col;
        } else {
            bad("bad placement character");
        }
    }
    if (row != 1 || col != 9) bad("placement does not cover 8x8");
    if (std::count(p.board.begin(), p.board.end(), 'K') != 1 ||
        std::count(p.board.begin(), p.board.end(), 'k') != 1)
        bad("need exactly one king per side");

    if (f[1] == "w") p.white_to_move = true;
    else if (f[1] == "b") p.white_to_move = false;
    else bad("bad side to move");

    if (f[2] != "-") {
        for (char c : f[2]) {
            switch (c) {
                case 'K': p.castle_K = true; break;
                case 'Q': p.castle_Q = true; break;
                case 'k': p.castle_k = true; break;
                case 'q': p.castle_q = true; break;
                default: bad("bad castling field");
            }
        }
    }

    if (f[3] != "-") {
        p.ep = parse_square(f[3]);
        // White to move: black just double-pushed, so the target is on rank 6 (and vice versa).
        if (p.ep < 0 || row_of(p.ep) != (p.white_to_move ? 6 : 3)) bad("bad en-passant square");
    }

    if (f.size() == 6) {
        p.halfmove = parse_int(f[4], fen);
        p.fullmove = parse_int(f[5], fen);
    }
    return p;
}

std::string to_fen(const Position& p) {
    std::string s;
    for (int row = 8; row >= 1; --row) {
        int empty = 0;
        for (int col = 1; col <= 8; ++col) {
            char c = p.board[10 * col + row];
            if (!c) { ++empty; continue; }
            if (empty) s += static_cast<char>('0' + empty);
            empty = 0;
            s += c;
        }
        if (empty) s += static_cast<char>('0' + empty);
        if (row > 1) s += '/';
    }
    s += p.white_to_move ? " w " : " b ";
    std::string castle;
    if (p.castle_K) castle += 'K';
    if (p.castle_Q) castle += 'Q';
    if (p.castle_k) castle += 'k';
    if (p.castle_q) castle += 'q';
    s += castle.empty() ? "-" : castle;
    s += ' ';
    s += p.ep >= 0 ? square_name(p.ep) : "-";
    s += ' ' + std::to_string(p.halfmove) + ' ' + std::to_string(p.fullmove);
    return s;
}

// Is square sq attacked by a piece of the given colour? We look outwards from
// sq along each direction set and ask whether the matching attacker sits there.
bool attacked(const Position& p, int sq, bool by_white) {
    const auto& b = p.board;
    // Pawns: a white pawn attacks sq from sq-11 (it captures +11) and sq+9 (it captures -9);
    // a black pawn attacks sq from sq+11 and sq-9.
    const char pawn = colored('P', by_white);
    const int pawn_from[2] = {by_white ? -11 : +11, by_white ? +9 : -9};
    for (int d : pawn_from) {
        int s = step(sq, d);
        if (on_board(s) && b[s] == pawn) return true;
    }
    for (int d : kKnightDirs) {
        int s = step(sq, d);
        if (on_board(s) && b[s] == colored('N', by_white)) return true;
    }
    for (int d : kQueenDirs) {
        int s = step(sq, d);
        if (on_board(s) && b[s] == colored('K', by_white)) return true;
    }
    // Sliders: walk until an off-board square or the first piece.
    auto slide_hits = [&](int d, char a, char q) {
        for (int s = step(sq, d); on_board(s); s = step(s, d)) {
            if (b[s]) return b[s] == a || b[s] == q;
        }
        return false;
    };
    const char queen = colored('Q', by_white);
    for (int d : kRookDirs)
        if (slide_hits(d, colored('R', by_white), queen)) return true;
    for (int d : kBishopDirs)
        if (slide_hits(d, colored('B', by_white), queen)) return true;
    return false;
}

int king_square(const Position& p, bool white) {
    const char k = colored('K', white);
    for (int sq = 0; sq < 100; ++sq)
        if (p.board[sq] == k) return sq;
    return -1;  // unreachable: parse_fen guarantees both kings and kings are never captured
}

// Plays a pseudo-legal move on p (no legality check).
void make_move(Position& p, const Move& m) {
    auto& b = p.board;
    const char piece = b[m.from];
    const bool white = is_white(piece);
    const bool is_pawn = upper(piece) == 'P';
    const bool capture = b[m.to] != 0 || (is_pawn && m.to == p.ep);

    // En passant: the captured pawn stands one rank behind the target square.
    if (is_pawn && m.to == p.ep && b[m.to] == 0) b[step(m.to, white ? -1 : +1)] = 0;

    b[m.to] = m.promo ? colored(upper(m.promo), white) : piece;
    b[m.from] = 0;

    // Castling: the king moves two files, the rook jumps over it.
    if (upper(piece) == 'K' && (m.to - m.from == 20 || m.from - m.to == 20)) {
        const int row = row_of(m.from);
        const bool king_side = m.to > m.from;
        const int rook_from = 10 * (king_side ? 8 : 1) + row;
        const int rook_to = 10 * (king_side ? 6 : 4) + row;
        b[rook_to] = b[rook_from];
        b[rook_from] = 0;
    }

    // Castling rights are lost when the king moves or a corner square is touched.
    for (int sq : {m.from, m.to}) {
        if (sq == 51) p.castle_K = p.castle_Q = false;
        if (sq == 58) p.castle_k = p.castle_q = false;
        if (sq == 81) p.castle_K = false;
        if (sq == 11) p.castle_Q = false;
        if (sq == 88) p.castle_k = false;
        if (sq == 18) p.castle_q = false;
    }

    // En-passant square only after a double pawn push (rows differ by two).
    p.ep = (is_pawn && (m.to - m.from == 2 || m.from - m.to == 2)) ? (m.from + m.to) / 2 : -1;

    p.halfmove = (is_pawn || capture) ? 0 : p.halfmove + 1;
    if (!white) ++p.fullmove;
    p.white_to_move = !p.white_to_move;
}

// All moves obeying piece movement rules, ignoring whether the own king is left in check.
// Castling is fully checked here (it needs the attack tests anyway).
std::vector<Move> pseudo_moves(const Position& p) {
    std::vector<Move> out;
    const auto& b = p.board;
    const bool white = p.white_to_move;
    auto own = [&](int s) { return b[s] && is_white(b[s]) == white; };
    auto enemy = [&](int s) { return b[s] && is_white(b[s]) != white; };

    for (int from = 0; from < 100; ++from) {
        if (!on_board(from) || !own(from)) continue;
        const char kind = upper(b[from]);

        if (kind == 'P') {
            const int push = white ? +1 : -1;
            const int caps[2] = {white ? +11 : -11, white ? -9 : +9};
            const int start_row = white ? 2 : 7;
            const int last_row = white ? 8 : 1;
            auto add_pawn = [&](int to) {
                if (row_of(to) == last_row) {
                    for (char pr : {'q', 'r', 'b', 'n'}) out.push_back({from, to, pr});
                } else {
                    out.push_back({from, to, 0});
                }
            };
            int one = step(from, push);
            if (on_board(one) && !b[one]) {
                add_pawn(one);
                int two = step(one, push);
                if (row_of(from) == start_row && on_board(two) && !b[two]) out.push_back({from, two, 0});
            }
            for (int d : caps) {
                int to = step(from, d);
                if (!on_board(to)) continue;
                if (enemy(to)) add_pawn(to);
                else if (to == p.ep && !b[to]) out.push_back({from, to, 0});
            }
            continue;
        }

        if (kind == 'N' || kind == 'K') {
            const int* dirs = kind == 'N' ? kKnightDirs.data() : kQueenDirs.data();
            for (int i = 0; i < 8; ++i) {
                int to = step(from, dirs[i]);
                if (on_board(to) && !own(to)) out.push_back({from, to, 0});
            }
            continue;
        }

        // Sliders: rook, bishop, queen.
        std::vector<int> dirs;
        if (kind == 'R' || kind == 'Q') dirs.insert(dirs.end(), kRookDirs.begin(), kRookDirs.end());
        if (kind == 'B' || kind == 'Q') dirs.insert(dirs.end(), kBishopDirs.begin(), kBishopDirs.end());
        for (int d : dirs) {
            for (int to = step(from, d); on_board(to); to = step(to, d)) {
                if (own(to)) break;
                out.push_back({from, to, 0});
                if (b[to]) break;  // captured an enemy piece
            }
        }
    }

    // Castling: king and rook on home squares with the right, squares between
    // empty, and the king's start, transit and target squares not attacked.
    const int row = white ? 1 : 8;
    const int king = 50 + row;  // e1 / e8
    const char K = colored('K', white), R = colored('R', white);
    const bool can_short = white ? p.castle_K : p.castle_k;
    const bool can_long = white ? p.castle_Q : p.castle_q;
    if (b[king] == K) {
        if (can_short && b[80 + row] == R && !b[60 + row] && !b[70 + row] &&
            !attacked(p, king, !white) && !attacked(p, 60 + row, !white) && !attacked(p, 70 + row, !white))
            out.push_back({king, 70 + row, 0});
        if (can_long && b[10 + row] == R && !b[20 + row] && !b[30 + row] && !b[40 + row] &&
            !attacked(p, king, !white) && !attacked(p, 40 + row, !white) && !attacked(p, 30 + row, !white))
            out.push_back({king, 30 + row, 0});
    }
    return out;
}

std::vector<Move> legal_moves(const Position& p) {
    std::vector<Move> out;
    for (const Move& m : pseudo_moves(p)) {
        Position q = p;
        make_move(q, m);
        if (!attacked(q, king_square(q, p.white_to_move), !p.white_to_move)) out.push_back(m);
    }
    return out;
}

std::uint64_t perft_rec(const Position& p, int depth) {
    if (depth <= 0) return 1;
    std::vector<Move> moves = legal_moves(p);
    if (depth == 1) return moves.size();
    std::uint64_t n = 0;
    for (const Move& m : moves) {
        Position q = p;
        make_move(q, m);
        n += perft_rec(q, depth - 1);
    }
    return n;
}

}  // namespace

std::vector<std::string> legal_moves_uci(const std::string& fen) {
    std::vector<std::string> out;
    for (const Move& m : legal_moves(parse_fen(fen))) out.push_back(to_uci(m));
    std::sort(out.begin(), out.end());
    return out;
}

std::string play_uci(const std::string& fen, const std::string& uci) {
    Position p = parse_fen(fen);
    for (const Move& m : legal_moves(p)) {
        if (to_uci(m) == uci) {
            make_move(p, m);
            return to_fen(p);
        }
    }
    throw std::invalid_argument("torus: illegal move " + uci + " in " + fen);
}

std::uint64_t perft(const std::string& fen, int depth) { return perft_rec(parse_fen(fen), depth); }

}  // namespace torus
