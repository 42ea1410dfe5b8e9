// An SVG picture of a checkers position, with the geometry and colours of
// chess::board_svg: 45-pixel squares, a 20-pixel margin with the coordinates, a1 dark.
// Dark squares carry their PDN number; men are discs, kings discs with a crown. The last
// move, when given, highlights its start and landing squares, and the squares it jumped.
#pragma once

#include <string>

#include "checkers/board.h"

namespace pgmate::checkers {

std::string board_svg(const Board& b, const Move* last = nullptr);

}  // namespace pgmate::checkers
