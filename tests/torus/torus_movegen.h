// Independent reference move generator for tests (the "torus" formalisation).
// Deliberately simple and slow; it does not depend on anything in core/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torus {

// Legal moves of the position given in FEN (all six fields; the last two may be missing),
// in UCI notation, sorted ascending. Throws std::invalid_argument on FEN it cannot read.
std::vector<std::string> legal_moves_uci(const std::string& fen);

// FEN after playing a UCI move given by legal_moves_uci (halfmove/fullmove updated,
// en-passant square written only when the move was a double pawn push).
// Throws std::invalid_argument on unreadable FEN or a move that is not legal.
std::string play_uci(const std::string& fen, const std::string& uci);

// Perft by making moves internally (no FEN round trips needed inside).
std::uint64_t perft(const std::string& fen, int depth);

}  // namespace torus
