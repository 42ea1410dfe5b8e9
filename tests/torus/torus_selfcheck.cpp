// Self-check of the torus reference generator: perft numbers of the standard
// test positions plus a few play_uci / FEN error cases. Exit code 0 = all good.
#include "torus_movegen.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
    if (!ok) {
        ++failures;
        std::cout << "FAIL: " << what << "\n";
    }
}

struct PerftCase {
    const char* name;
    const char* fen;
    std::vector<std::uint64_t> counts;  // counts[i] = perft(depth i+1)
};

}  // namespace

int main() {
    const std::vector<PerftCase> cases = {
        {"startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", {20, 400, 8902, 197281}},
        {"kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", {48, 2039, 97862, 4085603}},
        {"pos3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", {14, 191, 2812, 43238, 674624}},
        {"pos4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", {6, 264, 9467, 422333}},
        {"pos5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", {44, 1486, 62379, 2103487}},
        // Position 6 as published (chessprogramming.org) has a black bishop on g4 ("2B1P1b1").
        {"pos6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", {46, 2079, 89890, 3894594}},
        // Without that bishop (a common mis-copy) g2g4 becomes legal: 47 moves. These numbers are
        // also reported for this exact FEN by an independent public engine's test suite.
        {"pos6-no-bg4", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P3/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", {47, 1845, 81467}},
    };
    // Edge-case positions (Sedlak / Jones suite): only the deepest count is published.
    struct DeepCase {
        const char* name;
        const char* fen;
        int depth;
        std::uint64_t count;
    };
    const std::vector<DeepCase> deep = {
        {"illegal ep #1", "3k4/3p4/8/K1P4r/8/8/8/8 b - - 0 1", 6, 1134888},
        {"illegal ep #2", "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1", 6, 1015133},
        {"ep captures with check", "8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1", 6, 1440467},
        {"short castle gives check", "5k2/8/8/8/8/8/8/4K2R w K - 0 1", 6, 661072},
        {"long castle gives check", "3k4/8/8/8/8/8/8/R3K3 w Q - 0 1", 6, 803711},
        {"castle rights", "r3k2r/1b4bq/8/8/8/8/7B/R3K2R w KQkq - 0 1", 4, 1274206},
        {"castling prevented", "r3k2r/8/3Q4/8/8/5q2/8/R3K2R b KQkq - 0 1", 4, 1720476},
        {"promote out of check", "2K2r2/4P3/8/8/8/8/8/3k4 w - - 0 1", 6, 3821001},
        {"discovered check", "8/8/1P2K3/8/2n5/1q6/8/5k2 b - - 0 1", 5, 1004658},
        {"promote to give check", "4k3/1P6/8/8/8/8/K7/8 w - - 0 1", 6, 217342},
        {"underpromote to give check", "8/P1k5/K7/8/8/8/8/8 w - - 0 1", 6, 92683},
        {"self stalemate", "K1k5/8/P7/8/8/8/8/8 w - - 0 1", 6, 2217},
        {"stalemate & checkmate #1", "8/k1P5/8/1K6/8/8/8/8 w - - 0 1", 7, 567584},
        {"stalemate & checkmate #2", "8/8/2k5/5q2/5n2/8/5K2/8 b - - 0 1", 4, 23527},
    };
    for (const auto& c : cases) {
        for (std::size_t i = 0; i < c.counts.size(); ++i) {
            const int depth = static_cast<int>(i + 1);
            const auto t0 = std::chrono::steady_clock::now();
            const std::uint64_t n = torus::perft(c.fen, depth);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            std::cout << c.name << " perft(" << depth << ") = " << n << " (expected " << c.counts[i] << ", "
                      << ms << " ms)" << (n == c.counts[i] ? "" : "  <-- MISMATCH") << "\n";
            expect(n == c.counts[i], std::string(c.name) + " perft " + std::to_string(depth));
        }
    }

    for (const auto& c : deep) {
        const std::uint64_t n = torus::perft(c.fen, c.depth);
        std::cout << c.name << " perft(" << c.depth << ") = " << n << " (expected " << c.count << ")"
                  << (n == c.count ? "" : "  <-- MISMATCH") << "\n";
        expect(n == c.count, std::string(c.name) + " perft " + std::to_string(c.depth));
    }

    // Mirrored pos4 (black to move) must give the same numbers.
    const char* pos4b = "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1";
    expect(torus::perft(pos4b, 1) == 6 && torus::perft(pos4b, 2) == 264 && torus::perft(pos4b, 3) == 9467,
           "mirrored pos4");

    const std::string start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    // Sorted UCI list.
    const auto moves = torus::legal_moves_uci(start);
    expect(moves.size() == 20 && moves.front() == "a2a3" && moves.back() == "h2h4", "startpos move list");

    // Four-field FEN (counters missing) and depth 0.
    expect(torus::legal_moves_uci("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -").size() == 20, "4-field FEN");
    expect(torus::perft(start, 0) == 1, "perft depth 0");

    // play_uci: double push writes ep square, counters update.
    const std::string after_e4 = torus::play_uci(start, "e2e4");
    expect(after_e4 == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", "e2e4 -> " + after_e4);
    const std::string after_nf6 = torus::play_uci(after_e4, "g8f6");
    expect(after_nf6 == "rnbqkb1r/pppppppp/5n2/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 1 2", "g8f6 -> " + after_nf6);

    // En passant from FEN and its capture.
    const std::string ep = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3";
    const auto ep_moves = torus::legal_moves_uci(ep);
    expect(std::find(ep_moves.begin(), ep_moves.end(), "e5f6") != ep_moves.end(), "ep move e5f6 present");
    expect(std::find(ep_moves.begin(), ep_moves.end(), "e5d6") == ep_moves.end(), "no ep on d6 (stale)");
    expect(torus::play_uci(ep, "e5f6") == "rnbqkbnr/ppp1p1pp/5P2/3p4/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 3",
           "ep capture result");

    // Castling updates rook and rights.
    const std::string castle = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    expect(torus::play_uci(castle, "e1g1") == "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1", "e1g1");
    expect(torus::play_uci(castle, "e1c1") == "r3k2r/8/8/8/8/8/8/2KR3R b kq - 1 1", "e1c1");
    expect(torus::play_uci(castle, "a1a8") == "R3k2r/8/8/8/8/8/8/4K2R b Kk - 0 1", "a1a8 rights");

    // Promotion.
    const std::string promo = "8/4P3/8/8/8/8/k7/4K3 w - - 0 1";
    const auto promo_moves = torus::legal_moves_uci(promo);
    for (const char* m : {"e7e8q", "e7e8r", "e7e8b", "e7e8n"})
        expect(std::find(promo_moves.begin(), promo_moves.end(), m) != promo_moves.end(), std::string("promo ") + m);
    expect(torus::play_uci(promo, "e7e8n") == "4N3/8/8/8/8/8/k7/4K3 b - - 0 1", "promotion result");

    // Bad input must throw std::invalid_argument.
    for (const std::string bad : {"", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",
                                  "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
                                  "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                                  "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1",
                                  "8/8/8/8/8/8/8/8 w - - 0 1"}) {
        bool threw = false;
        try {
            torus::legal_moves_uci(bad);
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        expect(threw, "invalid FEN rejected: '" + bad + "'");
    }
    bool threw = false;
    try {
        torus::play_uci(start, "e2e5");
    } catch (const std::invalid_argument&) {
        threw = true;
    }
    expect(threw, "illegal move rejected");

    std::cout << (failures ? "FAILED: " + std::to_string(failures) : std::string("ALL OK")) << "\n";
    return failures ? 1 : 0;
}
