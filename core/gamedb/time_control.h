// A game's speed from its PGN TimeControl tag, as lichess names it (lila, chess Speed and
// Clock): "300+3" is 300 s and 3 s a move, whose estimated duration base + 40 x increment
// decides: below 30 s ultraBullet, below 180 bullet, below 480 blitz, below 1500 rapid, below
// 21600 classical, beyond correspondence; "-" (no clock) is correspondence too. Anything else
// (no tag, "?", the PGN standard's moves-per-period forms such as "40/9000:3600") has no
// speed.
#pragma once

#include <string_view>

namespace pgmate::gamedb {

// "ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence", or "" for none.
std::string_view game_speed(std::string_view time_control);

}  // namespace pgmate::gamedb
