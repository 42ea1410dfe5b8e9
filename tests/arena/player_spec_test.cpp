// A player spec says one thing once: no key, least of all the type, can be given twice,
// so text appended to a prefix (as a stored setting may be) never changes the player.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "arena/player_spec.h"

namespace pgmate::arena {
namespace {

std::string spec_error(const std::string& text) {
  try {
    parse_player_spec(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PlayerSpecKeys, TypeAfterAPrefixIsRefused) {
  for (const char* text : {"mcts:2:type=uci,command=/bin/true", "net:1:2:type=uci,command=/bin/true",
                           "uci:/bin/true:type=mcts", "mcts:2:type=mcts"}) {
    const std::string error = spec_error(text);
    EXPECT_NE(error.find("key \"type\" is given twice"), std::string::npos) << text << ": " << error;
  }
}

TEST(PlayerSpecKeys, TypeTwiceInJsonIsRefused) {
  const std::string error = spec_error(R"({"type": "mcts", "simulations": 2, "type": "uci", "command": "/bin/true"})");
  EXPECT_NE(error.find("repeated key \"type\""), std::string::npos) << error;
}

TEST(PlayerSpecKeys, AnyKeyTwiceIsRefused) {
  EXPECT_NE(spec_error("net:1:2:network=5").find("key \"network\" is given twice"), std::string::npos);
  EXPECT_NE(spec_error("mcts:2:simulations=3").find("key \"simulations\" is given twice"), std::string::npos);
  EXPECT_NE(spec_error("mcts:2:c_puct=1,c_puct=2").find("key \"c_puct\" is given twice"), std::string::npos);
  EXPECT_NE(spec_error("uci:/bin/true:command=/bin/false").find("key \"command\" is given twice"), std::string::npos);
}

TEST(PlayerSpecKeys, EachKeyOnceStillParses) {
  EXPECT_EQ(parse_player_spec("mcts:2:c_puct=1.5").type, PlayerType::kMcts);
  EXPECT_EQ(parse_player_spec("net:1:2:search=gumbel").type, PlayerType::kNetwork);
  EXPECT_EQ(parse_player_spec("uci:/bin/true:nodes=10,Hash=16").type, PlayerType::kUci);
}

}  // namespace
}  // namespace pgmate::arena
