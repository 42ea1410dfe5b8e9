// A game's identity for finding copies of it: its start position and its moves, nothing
// else (tags, result and source may differ between two copies of one game).
#pragma once

#include <cstdint>
#include <span>

namespace pgmate::gamedb {

// start_key: the start position's Polyglot key; moves: each move's 16 bits as a move
// value stores them (from, to, promotion). Stable across versions and machines: stored
// hashes are compared with new ones.
std::uint64_t game_hash(std::uint64_t start_key, std::span<const std::uint16_t> moves);

}  // namespace pgmate::gamedb
