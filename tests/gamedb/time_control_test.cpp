// Game speeds by lichess's rule, at each boundary, and what has none.
#include <gtest/gtest.h>

#include "gamedb/time_control.h"

using pgmate::gamedb::game_speed;

TEST(GameSpeed, LichessBoundariesOfBasePlusFortyIncrements) {
  EXPECT_EQ(game_speed("15+0"), "ultraBullet");
  EXPECT_EQ(game_speed("29+0"), "ultraBullet");
  EXPECT_EQ(game_speed("30+0"), "bullet");   // 30 s is bullet
  EXPECT_EQ(game_speed("0+1"), "bullet");    // 40 s
  EXPECT_EQ(game_speed("60+0"), "bullet");
  EXPECT_EQ(game_speed("120+1"), "bullet");  // 160 s
  EXPECT_EQ(game_speed("180+0"), "blitz");
  EXPECT_EQ(game_speed("120+2"), "blitz");   // 200 s
  EXPECT_EQ(game_speed("300+3"), "blitz");   // 420 s
  EXPECT_EQ(game_speed("480+0"), "rapid");
  EXPECT_EQ(game_speed("600+5"), "rapid");   // 800 s
  EXPECT_EQ(game_speed("900+10"), "rapid");  // 1300 s
  EXPECT_EQ(game_speed("1500+0"), "classical");
  EXPECT_EQ(game_speed("1800+20"), "classical");
  EXPECT_EQ(game_speed("21599+0"), "classical");
  EXPECT_EQ(game_speed("21600+0"), "correspondence");
  EXPECT_EQ(game_speed("-"), "correspondence");
}

TEST(GameSpeed, WhatIsNotBasePlusIncrementHasNone) {
  for (const char* t : {"", "?", "300", "+3", "300+", "40/9000:3600", "*60", " 300+3", "300+3 ", "-1+0", "300+-1",
                        "3e2+0", "1234567890+0", "99999999+0", "300+3+1"})
    EXPECT_EQ(game_speed(t), "") << t;
}
