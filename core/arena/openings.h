// Where match games start: the start position, or lines read from a file (EPD: one
// position per line, its "id" operation as the name; PGN: each game's moves from its start,
// named by its Opening/ECO tags). pgmate.openings (ECO lines) is read by the callers that
// have a database.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "arena/match.h"

namespace pgmate::arena {

std::vector<Opening> start_position_opening();
// Throws std::invalid_argument naming the line or game that is wrong.
std::vector<Opening> parse_epd_openings(std::string_view text);
std::vector<Opening> parse_pgn_openings(std::string_view text);
// By the file's contents: PGN when it has a tag pair or a move number, else EPD. Throws
// std::runtime_error when it cannot be read, std::invalid_argument when it holds no opening.
std::vector<Opening> read_openings_file(const std::string& path);

// The order a match plays its openings in: a seeded shuffle, so a match of N games draws
// N/2 different lines (when the list has them) and another seed draws others.
void shuffle_openings(std::vector<Opening>& openings, std::uint64_t seed);

}  // namespace pgmate::arena
