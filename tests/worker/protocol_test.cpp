// The worker wire protocol: every message round-trips; malformed frames of every kind are
// rejected with ProtocolError, never a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "checkers/fen.h"
#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/packed.h"
#include "link/protocol.h"
#include "link/socket_util.h"

namespace pgmate::worker::protocol {
namespace {

using chess::Board;
using chess::Move;
using chess::parse_fen;

const char* kKiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

bool same_board(const Board& a, const Board& b) { return chess::pack(a) == chess::pack(b); }

// A training sample on a position with a promotion, an en-passant capture and castling.
TrainSample train_sample(int history = 2, std::uint8_t repetitions = 1) {
  const std::vector<std::string> fens = {"r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 2",
                                         "r3k2r/1P1p4/8/4P3/8/8/8/R3K2R b KQkq - 0 1", kKiwipete,
                                         std::string(chess::kStartFen)};
  TrainSample s;
  for (int i = 0; i < history; ++i) s.history.push_back(parse_fen(fens[std::size_t(i)]));
  s.repetitions = repetitions;
  s.moves = {Move(49, 57, chess::kPromotion, chess::kQueen), Move(36, 43, chess::kEnPassant),
             Move(4, 6, chess::kCastling), Move(49, 57, chess::kPromotion, chess::kKnight)};
  s.policy = {0.5f, 0.25f, 0.125f, 0.125f};
  s.wdl[0] = 0.5f;
  s.wdl[1] = 0.3f;
  s.wdl[2] = 0.2f;
  s.weight = 0.75f;
  return s;
}

Bytes encoded_sample(const TrainSample& s) {
  Writer w;
  encode_train_sample(w, s);
  return std::move(w.bytes());
}

bool same_sample(const TrainSample& a, const TrainSample& b) {
  if (a.history.size() != b.history.size()) return false;
  for (std::size_t i = 0; i < a.history.size(); ++i)
    if (!same_board(a.history[i], b.history[i])) return false;
  return a.repetitions == b.repetitions && a.moves == b.moves && a.policy == b.policy && a.wdl[0] == b.wdl[0] &&
         a.wdl[1] == b.wdl[1] && a.wdl[2] == b.wdl[2] && a.weight == b.weight;
}

NetworkKey key(std::int64_t id) {
  NetworkKey k;
  k.database = 16384;
  k.id = id;
  k.sha256.fill(0x5a);
  return k;
}

// Encodes a frame, checks its header, and decodes the payload back.
template <class M>
M round_trip(const M& m, std::uint32_t id = 42) {
  const Bytes frame = encode_frame(id, m);
  EXPECT_GE(frame.size(), kHeaderSize);
  const FrameHeader h = decode_header(frame);
  EXPECT_EQ(h.type, M::kType);
  EXPECT_EQ(h.request_id, id);
  EXPECT_EQ(h.payload_length, frame.size() - kHeaderSize);
  EXPECT_EQ(std::memcmp(frame.data(), "PGMW", 4), 0);
  EXPECT_EQ(frame[4], kVersion);
  EXPECT_EQ(frame[5], 0);
  return decode_payload<M>(std::span<const std::uint8_t>(frame).subspan(kHeaderSize));
}

// One valid frame of every message type, for the malformed-input tests.
std::vector<std::pair<MessageType, Bytes>> sample_frames() {
  const Board start = parse_fen(chess::kStartFen), kiwi = parse_fen(kKiwipete);
  std::vector<std::pair<MessageType, Bytes>> out;
  auto add = [&](const auto& m) { out.emplace_back(std::decay_t<decltype(m)>::kType, encode_frame(7, m)); };
  add(Hello{kVersion, "secret"});
  add(HelloReply{kVersion, "pgmate-worker"});
  add(PerftRequest{kiwi, 3, PerftDevice::kCpu});
  add(PerftReply{97862});
  add(CheckersPerftRequest{checkers::parse_fen("W:WK3,21:B12,K30"), 9, PerftDevice::kGpu,
                           checkers::CaptureRule::kLongest});
  add(CheckersPerftReply{845931});
  add(LegalMovesRequest{{start, kiwi}});
  add(LegalMovesReply{{{Move(12, 28), Move(6, 21)}, {}}});
  add(EvaluateRequest{key(5), {{kiwi}, {kiwi, start}}, {0, 2}});
  add(EvaluateReply{key(5), {EvalResult{0.5f, 0.25f, 0.25f, {Move(12, 28)}, {1.0f}}, EvalResult{}}});
  add(LoadNetworkRequest{key(9), "{\"blocks\":2}", std::string("\0\1\2weights", 10)});
  add(LoadNetworkReply{});
  add(InitWeightsRequest{"{\"blocks\":2}", 1234});
  add(InitWeightsReply{"bytes"});
  add(StatusRequest{16384});
  add(StatusReply{"{\"device\":\"cpu\"}"});
  add(TrainStartRequest{"{\"blocks\":2}", "weights", std::string("reference"), "{\"lr\":0.1}", std::string("state")});
  add(TrainStartRequest{"tiny", "weights", std::nullopt, "", std::nullopt});
  add(TrainStartRequest{"tiny", "weights", std::nullopt, "", std::nullopt, std::string("optimizer")});
  add(TrainStartReply{3, 120, "cuda:0"});
  add(TrainStepRequest{3, TrainMode::kStep, {train_sample(), train_sample(1, 0)}});
  add(TrainStepReply{TrainMetrics{7, 1.5, 0.5, 0.01, 2.01, 0.25, 0.001, 3.5, 0.2, 2}});
  add(TrainSaveRequest{3, kTrainSaveWeights | kTrainSaveClose});
  add(TrainSaveReply{120, "weights", ""});
  add(ErrorReply{ErrorCode::kBadRequest, "nope"});
  return out;
}

// Decodes a payload as the type its header names (what the server and client do).
void decode_as(MessageType type, std::span<const std::uint8_t> payload) {
  switch (type) {
    case MessageType::kHello: decode_payload<Hello>(payload); return;
    case MessageType::kHelloReply: decode_payload<HelloReply>(payload); return;
    case MessageType::kPerft: decode_payload<PerftRequest>(payload); return;
    case MessageType::kPerftReply: decode_payload<PerftReply>(payload); return;
    case MessageType::kCheckersPerft: decode_payload<CheckersPerftRequest>(payload); return;
    case MessageType::kCheckersPerftReply: decode_payload<CheckersPerftReply>(payload); return;
    case MessageType::kLegalMoves: decode_payload<LegalMovesRequest>(payload); return;
    case MessageType::kLegalMovesReply: decode_payload<LegalMovesReply>(payload); return;
    case MessageType::kEvaluate: decode_payload<EvaluateRequest>(payload); return;
    case MessageType::kEvaluateReply: decode_payload<EvaluateReply>(payload); return;
    case MessageType::kLoadNetwork: decode_payload<LoadNetworkRequest>(payload); return;
    case MessageType::kLoadNetworkReply: decode_payload<LoadNetworkReply>(payload); return;
    case MessageType::kInitWeights: decode_payload<InitWeightsRequest>(payload); return;
    case MessageType::kInitWeightsReply: decode_payload<InitWeightsReply>(payload); return;
    case MessageType::kStatus: decode_payload<StatusRequest>(payload); return;
    case MessageType::kStatusReply: decode_payload<StatusReply>(payload); return;
    case MessageType::kTrainStart: decode_payload<TrainStartRequest>(payload); return;
    case MessageType::kTrainStartReply: decode_payload<TrainStartReply>(payload); return;
    case MessageType::kTrainStep: decode_payload<TrainStepRequest>(payload); return;
    case MessageType::kTrainStepReply: decode_payload<TrainStepReply>(payload); return;
    case MessageType::kTrainSave: decode_payload<TrainSaveRequest>(payload); return;
    case MessageType::kTrainSaveReply: decode_payload<TrainSaveReply>(payload); return;
    case MessageType::kError: decode_payload<ErrorReply>(payload); return;
  }
  throw ProtocolError("unknown type");
}

// A whole frame as a receiver sees it: header first, then exactly payload_length bytes.
void decode_frame(std::span<const std::uint8_t> bytes, const Limits& limits = {}) {
  const FrameHeader h = decode_header(bytes, limits);
  if (bytes.size() - kHeaderSize != h.payload_length) throw ProtocolError("frame length mismatch");
  decode_as(h.type, bytes.subspan(kHeaderSize));
}

TEST(WorkerProtocol, RoundTripsEveryMessage) {
  const Board start = parse_fen(chess::kStartFen), kiwi = parse_fen(kKiwipete);
  const Board ep = parse_fen("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3");

  auto hello = round_trip(Hello{kVersion, std::string("tok\0en", 6)});
  EXPECT_EQ(hello.version, kVersion);
  EXPECT_EQ(hello.token, std::string("tok\0en", 6));
  auto hr = round_trip(HelloReply{kVersion, "pgmate-worker (protocol 1)"});
  EXPECT_EQ(hr.server, "pgmate-worker (protocol 1)");

  auto perft = round_trip(PerftRequest{ep, 20, PerftDevice::kGpu});
  EXPECT_TRUE(same_board(perft.board, ep));
  EXPECT_EQ(perft.board.ep, ep.ep);
  EXPECT_EQ(perft.depth, 20);
  EXPECT_EQ(perft.device, PerftDevice::kGpu);
  EXPECT_EQ(round_trip(PerftReply{0xFEDCBA9876543210ull}).nodes, 0xFEDCBA9876543210ull);

  LegalMovesRequest lm{{start, kiwi, ep}};
  auto lm2 = round_trip(lm);
  ASSERT_EQ(lm2.boards.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(same_board(lm2.boards[i], lm.boards[i]));
  EXPECT_TRUE(round_trip(LegalMovesRequest{}).boards.empty());

  LegalMovesReply lmr;
  for (const Board& b : {start, kiwi, ep}) {
    chess::MoveList list;
    chess::legal_moves(b, list);
    lmr.moves.emplace_back(list.begin(), list.end());
  }
  lmr.moves.emplace_back();
  EXPECT_EQ(round_trip(lmr).moves, lmr.moves);

  NetworkKey k = key(3);
  k.database = 0xFFFFFFFF;
  k.sha256[0] = 0x12;
  k.sha256[31] = 0xfe;
  EvaluateRequest ev{k, {{kiwi}, {ep, start, kiwi, start}}, {2, 1}};
  auto ev2 = round_trip(ev);
  EXPECT_EQ(ev2.network, k);
  EXPECT_EQ(ev2.repetitions, (std::vector<std::uint8_t>{2, 1}));
  EXPECT_EQ(round_trip(EvaluateRequest{k, {{kiwi}}}).repetitions, std::vector<std::uint8_t>{0});
  ASSERT_EQ(ev2.inputs.size(), 2u);
  ASSERT_EQ(ev2.inputs[1].size(), 4u);
  for (std::size_t i = 0; i < ev.inputs.size(); ++i)
    for (std::size_t j = 0; j < ev.inputs[i].size(); ++j) EXPECT_TRUE(same_board(ev2.inputs[i][j], ev.inputs[i][j]));

  EvaluateReply er;
  er.network = k;
  er.results.push_back(EvalResult{0.7f, 0.2f, 0.1f, lmr.moves[1], std::vector<float>(lmr.moves[1].size(), 0.02f)});
  er.results.push_back(EvalResult{0.f, 1.f, 0.f, {}, {}});
  auto er2 = round_trip(er);
  ASSERT_EQ(er2.results.size(), 2u);
  EXPECT_EQ(er2.network, k);
  EXPECT_EQ(er2.results[0].win, 0.7f);
  EXPECT_EQ(er2.results[0].draw, 0.2f);
  EXPECT_EQ(er2.results[0].loss, 0.1f);
  EXPECT_EQ(er2.results[0].moves, er.results[0].moves);
  EXPECT_EQ(er2.results[0].priors, er.results[0].priors);
  EXPECT_TRUE(er2.results[1].moves.empty());

  std::string weights(100000, '\0');
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = char(i * 7);
  auto ln = round_trip(LoadNetworkRequest{key(1ll << 40), "{\"x\":1}", weights});
  EXPECT_EQ(ln.network.id, 1ll << 40);
  EXPECT_EQ(ln.config, "{\"x\":1}");
  EXPECT_EQ(ln.weights, weights);
  round_trip(LoadNetworkReply{});
  auto iw = round_trip(InitWeightsRequest{"{}", ~0ull});
  EXPECT_EQ(iw.seed, ~0ull);
  EXPECT_EQ(round_trip(InitWeightsReply{weights}).weights, weights);
  EXPECT_EQ(round_trip(StatusRequest{77}).database, 77u);
  EXPECT_EQ(round_trip(StatusReply{"{\"a\":[1,2]}"}).json, "{\"a\":[1,2]}");
  auto err = round_trip(ErrorReply{ErrorCode::kUnavailable, "no GPU available"});
  EXPECT_EQ(err.code, ErrorCode::kUnavailable);
  EXPECT_EQ(err.message, "no GPU available");
}

TEST(WorkerProtocol, WireLayoutIsLittleEndianAndFixed) {
  const Bytes f = encode_frame(0x01020304, PerftReply{0x1122334455667788ull});
  const Bytes expected = {'P', 'G', 'M', 'W', 4, 0, 0x02, 0x80, 4, 3, 2, 1, 8, 0, 0, 0,
                          0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
  EXPECT_EQ(f, expected);
  // PERFT: 32-byte packed board, depth, device.
  const Board start = parse_fen(chess::kStartFen);
  const Bytes p = encode_frame(1, PerftRequest{start, 5, PerftDevice::kAuto});
  ASSERT_EQ(p.size(), kHeaderSize + 34);
  const auto packed = chess::pack(start);
  EXPECT_EQ(std::memcmp(p.data() + kHeaderSize, packed.data(), 32), 0);
  EXPECT_EQ(p[kHeaderSize + 32], 5);
  EXPECT_EQ(p[kHeaderSize + 33], 0);
  // EVALUATE: u32 database, i64 id, 32-byte hash, u32 count, then per input u8 history
  // count, u8 repetitions and the boards.
  NetworkKey k;
  k.database = 0x0A0B0C0D;
  k.id = 0x0102;
  for (int i = 0; i < 32; ++i) k.sha256[std::size_t(i)] = std::uint8_t(i);
  const Bytes e = encode_payload(EvaluateRequest{k, {{start}}, {2}});
  ASSERT_EQ(e.size(), 4u + 8 + 32 + 4 + 2 + 32);
  EXPECT_EQ(Bytes(e.begin(), e.begin() + 14), (Bytes{0x0D, 0x0C, 0x0B, 0x0A, 0x02, 0x01, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(e[12 + 31], 31);
  EXPECT_EQ(Bytes(e.begin() + 44, e.begin() + 50), (Bytes{1, 0, 0, 0, 1, 2}));
}

TEST(WorkerProtocol, CheckersPerftRoundTripsAndHasAFixedLayout) {
  for (const char* fen : {"startpos", "W:WK3,21:B12,K30", "B:WK1,K2,K3,K4:BK29,K30,K31,K32", "W:W:B1",
                          "B:W21,22,23,24,25,26,27,28,29,30,31,32:BK1,2,3,4,5,6,7,8,9,10,11,K12"}) {
    const checkers::Board b = checkers::parse_fen(fen);
    for (auto rule : {checkers::CaptureRule::kAny, checkers::CaptureRule::kLongest})
      for (auto device : {PerftDevice::kAuto, PerftDevice::kCpu, PerftDevice::kGpu})
        for (int depth : {0, 1, 8, kMaxPerftDepth}) {
          const auto got = round_trip(CheckersPerftRequest{b, depth, device, rule});
          EXPECT_EQ(got.board, b) << fen;
          EXPECT_EQ(got.depth, depth);
          EXPECT_EQ(got.device, device);
          EXPECT_EQ(got.rule, rule);
        }
  }
  EXPECT_EQ(round_trip(CheckersPerftReply{0x0123456789ABCDEFull}).nodes, 0x0123456789ABCDEFull);
  EXPECT_EQ(type_name(MessageType::kCheckersPerft), "CHECKERS_PERFT");
  EXPECT_EQ(type_name(MessageType::kCheckersPerftReply), "CHECKERS_PERFT_REPLY");
  EXPECT_TRUE(is_known_type(8));
  EXPECT_TRUE(is_known_type(0x8008));
  EXPECT_EQ(reply_type(MessageType::kCheckersPerft), MessageType::kCheckersPerftReply);

  // Header type 8; payload: u32 white, u32 black, u32 kings, u8 side, u8 depth, u8 device, u8 rule.
  const checkers::Board b = checkers::parse_fen("W:WK3,21:B12,K30");
  const Bytes f = encode_frame(5, CheckersPerftRequest{b, 7, PerftDevice::kCpu, checkers::CaptureRule::kLongest});
  ASSERT_EQ(f.size(), kHeaderSize + 16);
  EXPECT_EQ(f[6], 8);
  EXPECT_EQ(f[7], 0);
  EXPECT_EQ(f[12], 16);
  std::uint32_t masks[3];
  std::memcpy(masks, f.data() + kHeaderSize, 12);
  EXPECT_EQ(masks[0], b.white);
  EXPECT_EQ(masks[1], b.black);
  EXPECT_EQ(masks[2], b.kings);
  EXPECT_EQ(f[kHeaderSize + 12], 1);  // White to move
  EXPECT_EQ(f[kHeaderSize + 13], 7);
  EXPECT_EQ(f[kHeaderSize + 14], 1);  // cpu
  EXPECT_EQ(f[kHeaderSize + 15], 1);  // longest
  const Bytes start = encode_payload(CheckersPerftRequest{checkers::Board::start(), 1});
  const Bytes expected = {0xC3, 0x71, 0x1C, 0x04, 0x38, 0x0C, 0x82, 0xE3, 0, 0, 0, 0, 0, 1, 0, 0};
  EXPECT_EQ(start, expected);
  const Bytes reply = encode_frame(5, CheckersPerftReply{3});
  EXPECT_EQ(reply[6], 0x08);
  EXPECT_EQ(reply[7], 0x80);
}

TEST(WorkerProtocol, CheckersPerftRejectsBadValuesNamingTheField) {
  const Bytes good = encode_payload(CheckersPerftRequest{checkers::Board::start(), 3, PerftDevice::kCpu});
  EXPECT_NO_THROW(decode_payload<CheckersPerftRequest>(good));
  auto with_mask = [&](int which, std::uint32_t value) {
    Bytes p = good;
    std::memcpy(p.data() + 4 * which, &value, 4);
    return p;
  };
  auto with_byte = [&](std::size_t at, std::uint8_t value) {
    Bytes p = good;
    p[at] = value;
    return p;
  };
  // A payload with any masks (the encoder would refuse invalid ones).
  auto raw = [&](checkers::Mask white, checkers::Mask black, checkers::Mask kings) {
    Bytes p = good;
    std::memcpy(p.data(), &white, 4);
    std::memcpy(p.data() + 4, &black, 4);
    std::memcpy(p.data() + 8, &kings, 4);
    return p;
  };
  const checkers::Mask row1 = checkers::kRow1, row8 = checkers::kRow8;
  struct Case {
    Bytes payload;
    const char* expect;  // in the message
  };
  const std::vector<Case> cases = {
      {with_byte(12, 2), "side to move code 2"},
      {with_byte(12, 255), "side to move code 255"},
      {with_mask(0, checkers::kStartWhite | checkers::bit(checkers::lsb(checkers::kStartBlack))),
       "holds both a white and a black piece"},
      {with_mask(2, checkers::bit(checkers::lsb(~(checkers::kStartWhite | checkers::kStartBlack)))), "king mark"},
      {with_mask(1, checkers::kStartBlack | checkers::bit(checkers::lsb(~(checkers::kStartWhite | checkers::kStartBlack)))),
       "more than 12 pieces"},
      // A white man on row 8 (and a black man on row 1, which is a fault too: White's is named).
      {raw(checkers::bit(checkers::lsb(row8)), checkers::bit(checkers::lsb(row1)), 0), "a white man on"},
      // Men on their own back rows are fine; a black man on row 1 is not.
      {raw(checkers::bit(checkers::lsb(row1)), checkers::bit(checkers::lsb(row1 & (row1 - 1))), 0),
       "a black man on"},
      {with_byte(13, kMaxPerftDepth + 1), "depth 21 out of range"},
      {with_byte(14, 3), "unknown device code 3"},
      {with_byte(15, 2), "unknown capture rule code 2"},
  };
  for (const Case& c : cases) {
    try {
      decode_payload<CheckersPerftRequest>(c.payload);
      ADD_FAILURE() << "accepted; expected: " << c.expect;
    } catch (const ProtocolError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.expect), std::string::npos) << what;
      EXPECT_NE(what.find("CHECKERS_PERFT payload"), std::string::npos) << what;
      if (std::string(c.expect).find("depth") == std::string::npos &&
          std::string(c.expect).find("code") == std::string::npos) {
        EXPECT_NE(what.find("checkers board"), std::string::npos) << what;
      }
    }
  }
  // Kings on a crowning row are fine; so are sides without pieces.
  EXPECT_NO_THROW(decode_payload<CheckersPerftRequest>(
      encode_payload(CheckersPerftRequest{checkers::parse_fen("B:WK1,K2,K3,K4:BK29,K30,K31,K32"), 2})));
  // The encoder refuses what the decoder would refuse.
  checkers::Board bad = checkers::Board::start();
  bad.kings = checkers::bit(checkers::lsb(~bad.occupied()));
  EXPECT_THROW(encode_payload(CheckersPerftRequest{bad, 1}), ProtocolError);
  bad = checkers::Board::start();
  bad.side = checkers::Color(2);
  EXPECT_THROW(encode_payload(CheckersPerftRequest{bad, 1}), ProtocolError);
  EXPECT_THROW(encode_payload(CheckersPerftRequest{checkers::Board::start(), 21}), ProtocolError);
  EXPECT_THROW(encode_payload(CheckersPerftRequest{checkers::Board::start(), -1}), ProtocolError);
  EXPECT_THROW(encode_payload(CheckersPerftRequest{checkers::Board::start(), 1, PerftDevice(3)}), ProtocolError);
  EXPECT_THROW(encode_payload(CheckersPerftRequest{checkers::Board::start(), 1, PerftDevice::kAuto,
                                                   checkers::CaptureRule(2)}),
               ProtocolError);
  // Truncated: the message says how much the board needs.
  try {
    decode_payload<CheckersPerftRequest>(std::span<const std::uint8_t>(good).first(5));
    ADD_FAILURE();
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("checkers board needs 13 bytes"), std::string::npos) << e.what();
  }
}

TEST(WorkerProtocol, RejectsBadHeaders) {
  const Bytes good = encode_frame(1, StatusRequest{});
  EXPECT_NO_THROW(decode_frame(good));

  Bytes bad = good;
  bad[0] = 'X';
  EXPECT_THROW(decode_header(bad), ProtocolError);
  try {
    decode_header(bad);
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos) << e.what();
  }

  for (std::uint8_t version : {1, 2, 3, 5}) {  // 1: before networks had keys; 2: before training sessions;
                                              // 3: before sessions could take an optimizer
    bad = good;
    bad[4] = version;
    try {
      decode_header(bad);
      ADD_FAILURE() << "version " << int(version) << " accepted";
    } catch (const ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find("version " + std::to_string(version)), std::string::npos) << e.what();
    }
  }

  for (std::uint16_t type : {0, 12, 0x7FFF, 0x8000, 0x800C, 0xFFFE}) {
    bad = good;
    bad[6] = std::uint8_t(type);
    bad[7] = std::uint8_t(type >> 8);
    EXPECT_THROW(decode_header(bad), ProtocolError) << type;
  }

  // Oversized lengths, per type.
  Limits limits;
  bad = good;
  const std::uint32_t over = limits.max_payload + 1;
  std::memcpy(bad.data() + 12, &over, 4);
  try {
    decode_header(bad, limits);
    ADD_FAILURE() << "oversized frame accepted";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the limit"), std::string::npos) << e.what();
  }
  FrameHeader h{MessageType::kLoadNetwork, 1, 40u << 20};
  Bytes hdr(kHeaderSize);
  encode_header(h, hdr.data());
  EXPECT_NO_THROW(decode_header(hdr, limits));  // 40 MiB of weights: fine
  h.payload_length = (64u << 20) + 1;
  encode_header(h, hdr.data());
  EXPECT_THROW(decode_header(hdr, limits), ProtocolError);
  h.type = MessageType::kEvaluate;
  h.payload_length = 40u << 20;
  encode_header(h, hdr.data());
  EXPECT_THROW(decode_header(hdr, limits), ProtocolError);
  // Weights plus optimizer state: TRAIN_START and TRAIN_SAVE_REPLY up to 256 MiB.
  for (MessageType type : {MessageType::kTrainStart, MessageType::kTrainSaveReply}) {
    h.type = type;
    h.payload_length = 256u << 20;
    encode_header(h, hdr.data());
    EXPECT_NO_THROW(decode_header(hdr, limits)) << type_name(type);
    h.payload_length = (256u << 20) + 1;
    encode_header(h, hdr.data());
    EXPECT_THROW(decode_header(hdr, limits), ProtocolError) << type_name(type);
  }
  for (MessageType type : {MessageType::kTrainStep, MessageType::kTrainSave, MessageType::kTrainStartReply}) {
    h.type = type;
    h.payload_length = 40u << 20;
    encode_header(h, hdr.data());
    EXPECT_THROW(decode_header(hdr, limits), ProtocolError) << type_name(type);
  }
  h.type = MessageType::kEvaluate;
  Limits small{1000, 2000};
  h.payload_length = 1001;
  encode_header(h, hdr.data());
  EXPECT_THROW(decode_header(hdr, small), ProtocolError);
  h.payload_length = 1000;
  encode_header(h, hdr.data());
  EXPECT_NO_THROW(decode_header(hdr, small));
}

TEST(WorkerProtocol, RejectsTruncationAtEveryByte) {
  for (const auto& [type, frame] : sample_frames()) {
    for (std::size_t n = 0; n < frame.size(); ++n) {
      const std::span<const std::uint8_t> prefix(frame.data(), n);
      if (n < kHeaderSize) {
        EXPECT_THROW(decode_header(prefix), ProtocolError) << type_name(type) << " at " << n;
      } else {
        EXPECT_THROW(decode_frame(prefix), ProtocolError) << type_name(type) << " at " << n;
        // The payload alone, cut short, as a decoder handed a short buffer would see it.
        EXPECT_THROW(decode_as(type, prefix.subspan(kHeaderSize)), ProtocolError) << type_name(type) << " at " << n;
      }
    }
    EXPECT_NO_THROW(decode_frame(frame)) << type_name(type);
  }
}

TEST(WorkerProtocol, RejectsTrailingBytes) {
  for (const auto& [type, frame] : sample_frames()) {
    Bytes payload(frame.begin() + kHeaderSize, frame.end());
    payload.push_back(0);
    try {
      decode_as(type, payload);
      ADD_FAILURE() << type_name(type) << " accepted a trailing byte";
    } catch (const ProtocolError& e) {
      // Either "N trailing bytes", or for a fixed-size list, the count that does not match.
      const std::string what = e.what();
      EXPECT_TRUE(what.find("trailing") != std::string::npos || what.find("follow") != std::string::npos) << what;
    }
  }
}

TEST(WorkerProtocol, RejectsCountMismatchesAndBadFields) {
  const Board start = parse_fen(chess::kStartFen);
  // LEGAL_MOVES: count says 3, two boards follow; and count 1 with two boards.
  for (std::uint32_t count : {3u, 1u, 0xFFFFFFFFu}) {
    Bytes p = encode_payload(LegalMovesRequest{{start, start}});
    std::memcpy(p.data(), &count, 4);
    EXPECT_THROW(decode_payload<LegalMovesRequest>(p), ProtocolError) << count;
  }
  // More boards than the per-request limit.
  {
    Bytes p(4);
    const std::uint32_t count = kMaxLegalMovesBoards + 1;
    std::memcpy(p.data(), &count, 4);
    EXPECT_THROW(decode_payload<LegalMovesRequest>(p), ProtocolError);
  }
  // EVALUATE: count 2 with one input; history counts 0 and 5; repetitions 3; count far
  // beyond the bytes; network ids 0 and negative.
  {
    Bytes p = encode_payload(EvaluateRequest{key(1), {{start}}});
    std::uint32_t two = 2;
    std::memcpy(p.data() + 44, &two, 4);
    EXPECT_THROW(decode_payload<EvaluateRequest>(p), ProtocolError);
    for (std::uint8_t n : {0, 5, 255}) {
      Bytes q = encode_payload(EvaluateRequest{key(1), {{start}}});
      q[48] = n;
      EXPECT_THROW(decode_payload<EvaluateRequest>(q), ProtocolError) << int(n);
    }
    Bytes reps = encode_payload(EvaluateRequest{key(1), {{start}}});
    reps[49] = 3;
    EXPECT_THROW(decode_payload<EvaluateRequest>(reps), ProtocolError);
    Bytes r = encode_payload(EvaluateRequest{key(1), {{start}}});
    std::uint32_t huge = 8000;
    std::memcpy(r.data() + 44, &huge, 4);
    EXPECT_THROW(decode_payload<EvaluateRequest>(r), ProtocolError);
    for (std::int64_t id : {std::int64_t(0), std::int64_t(-3)}) {
      Bytes z = encode_payload(EvaluateRequest{key(1), {{start}}});
      std::memcpy(z.data() + 4, &id, 8);
      EXPECT_THROW(decode_payload<EvaluateRequest>(z), ProtocolError) << id;
      EXPECT_THROW(encode_payload(EvaluateRequest{key(id), {{start}}}), ProtocolError) << id;
    }
  }
  // PERFT: depth and device out of range.
  {
    Bytes p = encode_payload(PerftRequest{start, 3, PerftDevice::kCpu});
    p[32] = kMaxPerftDepth + 1;
    EXPECT_THROW(decode_payload<PerftRequest>(p), ProtocolError);
    p[32] = 3;
    p[33] = 3;
    EXPECT_THROW(decode_payload<PerftRequest>(p), ProtocolError);
  }
  // Strings longer than the payload.
  {
    Bytes p = encode_payload(StatusReply{"abc"});
    const std::uint32_t n = 4;
    std::memcpy(p.data(), &n, 4);
    EXPECT_THROW(decode_payload<StatusReply>(p), ProtocolError);
    const std::uint32_t big = 0xFFFFFFFF;
    std::memcpy(p.data(), &big, 4);
    EXPECT_THROW(decode_payload<StatusReply>(p), ProtocolError);
  }
  // Replies: a move count beyond 256, a result count beyond the bytes.
  {
    Bytes p = encode_payload(LegalMovesReply{{{Move(12, 28)}}});
    const std::uint16_t n = 257;
    std::memcpy(p.data() + 4, &n, 2);
    EXPECT_THROW(decode_payload<LegalMovesReply>(p), ProtocolError);
    Bytes q = encode_payload(EvaluateReply{key(1), {EvalResult{}}});
    const std::uint32_t count = 2;
    std::memcpy(q.data() + 44, &count, 4);
    EXPECT_THROW(decode_payload<EvaluateReply>(q), ProtocolError);
  }
  // Encoders refuse what the decoders would refuse.
  EXPECT_THROW(encode_payload(EvaluateRequest{key(1), {{}}}), ProtocolError);
  EXPECT_THROW(encode_payload(PerftRequest{start, 21, PerftDevice::kCpu}), ProtocolError);
}

TEST(WorkerProtocol, RejectsInvalidPackedBoards) {
  const Board start = parse_fen(chess::kStartFen);
  const Bytes good = encode_payload(LegalMovesRequest{{start}});
  struct Corruption {
    std::size_t byte;
    std::uint8_t value;
  };
  // Reserved bytes, reserved flag bits, an en-passant file of 9, a piece code 6 (no such
  // type), a position without its kings.
  for (Corruption c : {Corruption{4 + 31, 1}, Corruption{4 + 24, 0x20}, Corruption{4 + 25, 9}, Corruption{4 + 8, 0x66},
                       Corruption{4 + 0, 0}}) {
    Bytes p = good;
    p[c.byte] = c.value;
    try {
      decode_payload<LegalMovesRequest>(p);
      ADD_FAILURE() << "corruption at " << c.byte << " accepted";
    } catch (const ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find("board 0"), std::string::npos) << e.what();
    }
  }
  Bytes perft = encode_payload(PerftRequest{start, 1, PerftDevice::kCpu});
  perft[30] = 1;
  EXPECT_THROW(decode_payload<PerftRequest>(perft), ProtocolError);
  Bytes ev = encode_payload(EvaluateRequest{key(1), {{start, start}}});
  ev[50 + 32 + 31] = 7;  // second board of the input
  try {
    decode_payload<EvaluateRequest>(ev);
    ADD_FAILURE();
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("input 0 board 1"), std::string::npos) << e.what();
  }
}

TEST(WorkerProtocol, TrainingMessagesRoundTrip) {
  std::string blob(300000, '\0');
  for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = char(i * 13);
  auto start = round_trip(TrainStartRequest{"tiny", blob, blob.substr(7), "{\"lr\":0.5}", blob.substr(11)});
  EXPECT_EQ(start.config, "tiny");
  EXPECT_EQ(start.weights, blob);
  ASSERT_TRUE(start.reference);
  EXPECT_EQ(*start.reference, blob.substr(7));
  EXPECT_EQ(start.options, "{\"lr\":0.5}");
  ASSERT_TRUE(start.state);
  EXPECT_EQ(*start.state, blob.substr(11));
  EXPECT_FALSE(start.optimizer);
  auto bare = round_trip(TrainStartRequest{"", "", std::nullopt, "", std::string()});
  EXPECT_FALSE(bare.reference);
  ASSERT_TRUE(bare.state);  // present, if empty
  EXPECT_TRUE(bare.state->empty());
  auto taking = round_trip(TrainStartRequest{"tiny", blob, std::nullopt, "", std::nullopt, blob.substr(3)});
  EXPECT_FALSE(taking.state);
  ASSERT_TRUE(taking.optimizer);
  EXPECT_EQ(*taking.optimizer, blob.substr(3));
  auto started = round_trip(TrainStartReply{0xFFFFFFFF, 1ll << 40, "cuda:0"});
  EXPECT_EQ(started.session, 0xFFFFFFFFu);
  EXPECT_EQ(started.steps_done, 1ll << 40);
  EXPECT_EQ(started.device, "cuda:0");

  std::vector<TrainSample> samples;
  for (int h = 1; h <= kMaxHistory; ++h)
    for (std::uint8_t r = 0; r <= kMaxRepetitions; ++r) samples.push_back(train_sample(h, r));
  samples[3].weight = 0;  // no influence, but valid
  samples[4].wdl[0] = 0;
  samples[4].wdl[2] = 0;
  samples[5].policy = {0, 0, 3, 0};  // need not sum to 1
  for (TrainMode mode : {TrainMode::kStep, TrainMode::kEvaluate}) {
    auto step = round_trip(TrainStepRequest{77, mode, samples});
    EXPECT_EQ(step.session, 77u);
    EXPECT_EQ(step.mode, mode);
    ASSERT_EQ(step.samples.size(), samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) EXPECT_TRUE(same_sample(step.samples[i], samples[i])) << i;
  }
  // Samples encoded once and sent as they are give the same frame.
  std::vector<Bytes> encoded;
  for (const auto& sample : samples) encoded.push_back(encoded_sample(sample));
  std::vector<std::span<const std::uint8_t>> views(encoded.begin(), encoded.end());
  EXPECT_EQ(encode_frame(5, EncodedTrainStepRequest{77, TrainMode::kEvaluate, views}),
            encode_frame(5, TrainStepRequest{77, TrainMode::kEvaluate, samples}));
  // And decode_train_sample reads one back.
  Reader r(encoded[7], MessageType::kTrainStep);
  EXPECT_TRUE(same_sample(decode_train_sample(r, 0), samples[7]));
  EXPECT_EQ(r.remaining(), 0u);

  const TrainMetrics metrics{-1, 1.0 / 3, 2.5e-300, 0, std::nan(""), 1, 1e-3, 0.125, 7, 8192};
  const auto reply = round_trip(TrainStepReply{metrics}).metrics;
  EXPECT_EQ(reply.step, -1);
  EXPECT_EQ(reply.policy_loss, 1.0 / 3);
  EXPECT_EQ(reply.value_loss, 2.5e-300);
  EXPECT_TRUE(std::isnan(reply.total_loss));  // reported as it is
  EXPECT_EQ(reply.grad_norm, 0.125);
  EXPECT_EQ(reply.kl_weight, 7);
  EXPECT_EQ(reply.positions, 8192u);
  for (std::uint8_t flags = 0; flags < 8; ++flags) {
    auto save = round_trip(TrainSaveRequest{9, flags});
    EXPECT_EQ(save.session, 9u);
    EXPECT_EQ(save.flags, flags);
  }
  auto saved = round_trip(TrainSaveReply{42, blob, blob.substr(1000)});
  EXPECT_EQ(saved.steps_done, 42);
  EXPECT_EQ(saved.weights, blob);
  EXPECT_EQ(saved.state, blob.substr(1000));
  EXPECT_EQ(type_name(MessageType::kTrainStep), "TRAIN_STEP");
  EXPECT_EQ(type_name(MessageType::kTrainSaveReply), "TRAIN_SAVE_REPLY");
  EXPECT_EQ(reply_type(MessageType::kTrainStart), MessageType::kTrainStartReply);
}

TEST(WorkerProtocol, TrainSampleWireLayout) {
  TrainSample s;
  s.history = {parse_fen(chess::kStartFen)};
  s.repetitions = 2;
  s.moves = {Move(12, 28)};
  s.policy = {0.5f};
  const Bytes b = encoded_sample(s);
  ASSERT_EQ(b.size(), 2u + 32 + 2 + 6 + 16);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 2);
  const auto packed = chess::pack(s.history[0]);
  EXPECT_EQ(std::memcmp(b.data() + 2, packed.data(), 32), 0);
  EXPECT_EQ(Bytes(b.begin() + 34, b.begin() + 38), (Bytes{1, 0, std::uint8_t(12 | (28 << 6)), std::uint8_t((12 | (28 << 6)) >> 8)}));
  float floats[5];
  std::memcpy(floats, b.data() + 38, 4);
  std::memcpy(floats + 1, b.data() + 42, 16);
  EXPECT_EQ(floats[0], 0.5f);
  EXPECT_EQ(floats[1], 0.0f);  // the default target: a draw
  EXPECT_EQ(floats[2], 1.0f);
  EXPECT_EQ(floats[3], 0.0f);
  EXPECT_EQ(floats[4], 1.0f);  // weight
  // TRAIN_STEP: u32 session, u8 mode, u32 count, the samples; TRAIN_SAVE: u32 session, u8 flags.
  const Bytes step = encode_payload(TrainStepRequest{0x01020304, TrainMode::kEvaluate, {s}});
  EXPECT_EQ(Bytes(step.begin(), step.begin() + 9), (Bytes{4, 3, 2, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(Bytes(step.begin() + 9, step.end()), b);
  EXPECT_EQ(encode_payload(TrainSaveRequest{2, kTrainSaveState}), (Bytes{2, 0, 0, 0, 2}));
}

TEST(WorkerProtocol, TrainingRejectsMalformedPayloadsNamingTheSample) {
  const TrainSample good = train_sample(2, 1);  // 2 boards, 4 moves
  const Bytes sample = encoded_sample(good);
  constexpr std::size_t kMoves = 2 + 2 * 32;       // u16 n
  constexpr std::size_t kFirstMove = kMoves + 2;   // u16 move, f32 probability
  constexpr std::size_t kWdl = kFirstMove + 4 * 6;
  constexpr std::size_t kWeight = kWdl + 12;
  ASSERT_EQ(sample.size(), kWeight + 4);
  // Sample 1 of a TRAIN_STEP with two, patched.
  auto step_with = [&](const std::function<void(Bytes&)>& patch) {
    Bytes second = sample;
    patch(second);
    Bytes p = encode_payload(TrainStepRequest{5, TrainMode::kStep, {good}});
    p[5] = 2;
    p.insert(p.end(), second.begin(), second.end());
    return p;
  };
  auto set_byte = [](std::size_t at, std::uint8_t v) { return [=](Bytes& b) { b[at] = v; }; };
  auto set_u16 = [](std::size_t at, std::uint16_t v) { return [=](Bytes& b) { std::memcpy(b.data() + at, &v, 2); }; };
  auto set_f32 = [](std::size_t at, float v) { return [=](Bytes& b) { std::memcpy(b.data() + at, &v, 4); }; };
  EXPECT_NO_THROW(decode_payload<TrainStepRequest>(step_with([](Bytes&) {})));
  struct Case {
    std::function<void(Bytes&)> patch;
    const char* expect;
  };
  const float nan = std::nanf(""), inf = INFINITY;
  const std::vector<Case> cases = {
      {set_byte(0, 0), "a history count of 0"},
      {set_byte(0, 5), "a history count of 5"},
      {set_byte(1, 3), "a repetition count of 3"},
      {set_byte(2 + 31, 1), "sample 1 board 0"},
      {set_byte(2 + 32 + 31, 1), "sample 1 board 1"},
      {set_u16(kMoves, 0), "0 target moves"},
      {set_u16(kMoves, 257), "257 target moves"},
      {set_f32(kFirstMove + 2, nan), "the probability of target move 0 (b7b8q) is nan"},
      {set_f32(kFirstMove + 6 + 2, -0.5f), "the probability of target move 1 (e5d6) is -0.5"},
      {[](Bytes& b) {
         for (int k = 0; k < 4; ++k) std::memset(b.data() + kFirstMove + 6 * k + 2, 0, 4);
       },
       "the target move probabilities sum to 0"},
      {set_f32(kWdl + 4, inf), "the WDL target (0.5, inf, 0.2) is not finite"},
      {set_f32(kWdl, -0.5f), "the WDL target (-0.5, 0.3, 0.2)"},
      {[](Bytes& b) { std::memset(b.data() + kWdl, 0, 12); }, "the WDL target (0, 0, 0) sums to 0"},
      {set_f32(kWeight, nan), "the weight nan"},
      {set_f32(kWeight, -1), "the weight -1"},
  };
  for (const Case& c : cases) {
    try {
      decode_payload<TrainStepRequest>(step_with(c.patch));
      ADD_FAILURE() << "accepted; expected: " << c.expect;
    } catch (const ProtocolError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("TRAIN_STEP payload"), std::string::npos) << what;
      EXPECT_NE(what.find("sample 1"), std::string::npos) << what;
      EXPECT_NE(what.find(c.expect), std::string::npos) << what;
    }
  }
  // The request's own fields.
  const Bytes one = encode_payload(TrainStepRequest{5, TrainMode::kStep, {good}});
  auto expect_refused = [](const Bytes& p, const std::string& mention, auto decoder) {
    try {
      decoder(p);
      ADD_FAILURE() << "accepted; expected: " << mention;
    } catch (const ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
    }
  };
  auto as_step = [](const Bytes& p) { decode_payload<TrainStepRequest>(p); };
  Bytes p = one;
  std::memset(p.data(), 0, 4);
  expect_refused(p, "session 0", as_step);
  p = one;
  p[4] = 2;
  expect_refused(p, "unknown mode 2", as_step);
  for (std::uint32_t count : {0u, kMaxTrainSamples + 1, 0xFFFFFFFFu}) {
    p = one;
    std::memcpy(p.data() + 5, &count, 4);
    expect_refused(p, "count " + std::to_string(count) + " out of range", as_step);
  }
  p = one;
  const std::uint32_t many = 2000;  // within the limit, beyond the bytes
  std::memcpy(p.data() + 5, &many, 4);
  expect_refused(p, "count says 2000 samples", as_step);
  p = one;
  p[5] = 2;  // two samples claimed, one present
  expect_refused(p, "count says 2 samples", as_step);
  p = encode_payload(TrainStepRequest{5, TrainMode::kStep, {train_sample(4, 0)}});
  p[5] = 2;  // the same, where one sample's bytes could hold two of the smallest
  expect_refused(p, "truncated", as_step);

  Bytes save = encode_payload(TrainSaveRequest{5, kTrainSaveWeights});
  save[4] = 8;
  expect_refused(save, "unknown flags 0x0008", [](const Bytes& b) { decode_payload<TrainSaveRequest>(b); });
  Bytes start = encode_payload(TrainStartRequest{"", "", std::nullopt, "", std::nullopt});
  start[8] = 2;  // has_reference
  expect_refused(start, "has_reference 2", [](const Bytes& b) { decode_payload<TrainStartRequest>(b); });
  start = encode_payload(TrainStartRequest{"", "", std::nullopt, "", std::nullopt});
  start[start.size() - 2] = 7;  // has_state
  expect_refused(start, "has_state 7", [](const Bytes& b) { decode_payload<TrainStartRequest>(b); });
  start = encode_payload(TrainStartRequest{"", "", std::nullopt, "", std::nullopt});
  start.back() = 3;  // has_optimizer
  expect_refused(start, "has_optimizer 3", [](const Bytes& b) { decode_payload<TrainStartRequest>(b); });
  start = encode_payload(TrainStartRequest{"", "", std::nullopt, "", std::string("s"), std::string("o")});
  expect_refused(start, "a state or an optimizer, not both", [](const Bytes& b) { decode_payload<TrainStartRequest>(b); });
  Bytes started = encode_payload(TrainStartReply{1, 0, "cpu"});
  std::memset(started.data(), 0, 4);
  expect_refused(started, "session 0", [](const Bytes& b) { decode_payload<TrainStartReply>(b); });

  // Encoders refuse what the decoders would refuse.
  auto refused = [](TrainSample s) {
    Writer w;
    EXPECT_THROW(encode_train_sample(w, s), ProtocolError);
  };
  TrainSample bad = good;
  bad.history.clear();
  refused(bad);
  bad = good;
  bad.history.resize(5, good.history[0]);
  refused(bad);
  bad = good;
  bad.repetitions = 3;
  refused(bad);
  bad = good;
  bad.moves.clear();
  bad.policy.clear();
  refused(bad);
  bad = good;
  bad.policy.pop_back();
  refused(bad);
  bad = good;
  bad.policy[2] = -1;
  refused(bad);
  bad = good;
  bad.wdl[1] = nan;
  refused(bad);
  bad = good;
  bad.weight = inf;
  refused(bad);
  EXPECT_THROW(encode_payload(TrainStepRequest{5, TrainMode::kStep, {}}), ProtocolError);
  EXPECT_THROW(encode_payload(TrainStepRequest{0, TrainMode::kStep, {good}}), ProtocolError);
  EXPECT_THROW(encode_payload(TrainStepRequest{5, TrainMode(2), {good}}), ProtocolError);
  EXPECT_THROW(encode_payload(TrainStepRequest{5, TrainMode::kStep, std::vector<TrainSample>(kMaxTrainSamples + 1, good)}),
               ProtocolError);
  EXPECT_THROW(encode_payload(TrainSaveRequest{5, 8}), ProtocolError);
  EXPECT_THROW(encode_payload(TrainSaveRequest{0, 0}), ProtocolError);
}

TEST(WorkerProtocol, FuzzNeverCrashes) {
  std::mt19937_64 rng(20240601);
  const auto samples = sample_frames();
  int accepted = 0, rejected = 0;
  auto attempt = [&](std::span<const std::uint8_t> bytes) {
    try {
      decode_frame(bytes);
      ++accepted;
    } catch (const ProtocolError&) {
      ++rejected;
    }
  };
  for (int iter = 0; iter < 20000; ++iter) {
    Bytes bytes;
    const int mode = iter % 3;
    if (mode == 0) {
      // Pure noise behind a valid-looking header of a random type.
      const auto& [type, frame] = samples[rng() % samples.size()];
      const std::size_t n = rng() % 200;
      bytes.resize(kHeaderSize + n);
      for (auto& b : bytes) b = std::uint8_t(rng());
      encode_header(FrameHeader{type, 1, std::uint32_t(n)}, bytes.data());
    } else if (mode == 1) {
      // A valid frame with a few bytes flipped (the length kept consistent half the time).
      bytes = samples[rng() % samples.size()].second;
      const int flips = 1 + int(rng() % 4);
      for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] ^= std::uint8_t(1u << (rng() % 8));
      if (rng() % 2 && bytes.size() >= kHeaderSize) {
        const std::uint32_t n = std::uint32_t(bytes.size() - kHeaderSize);
        std::memcpy(bytes.data() + 12, &n, 4);
      }
    } else {
      // Random bytes of random length.
      bytes.resize(rng() % 64);
      for (auto& b : bytes) b = std::uint8_t(rng());
    }
    attempt(bytes);
    // Every payload decoder on the same bytes.
    if (bytes.size() > kHeaderSize)
      for (const auto& [type, frame] : samples) {
        try {
          decode_as(type, std::span<const std::uint8_t>(bytes).subspan(kHeaderSize));
        } catch (const ProtocolError&) {
        }
      }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted + rejected, 19999);
}

TEST(WorkerProtocol, ParsesAddresses) {
  Address a = parse_address("/run/pgmate/worker.sock");
  EXPECT_FALSE(a.tcp);
  EXPECT_EQ(a.path, "/run/pgmate/worker.sock");
  a = parse_address("tcp://127.0.0.1:7070");
  EXPECT_TRUE(a.tcp);
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 7070);
  a = parse_address("tcp://[::1]:7071");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 7071);
  EXPECT_EQ(a.display(), "tcp://[::1]:7071");
  EXPECT_THROW(parse_address(""), std::invalid_argument);
  EXPECT_THROW(parse_address("tcp://host"), std::invalid_argument);
  EXPECT_THROW(parse_address("tcp://host:99999"), std::invalid_argument);
  EXPECT_THROW(parse_address("tcp://host:0"), std::invalid_argument);
  EXPECT_THROW(parse_address("http://x:1"), std::invalid_argument);
  EXPECT_THROW(parse_address("/" + std::string(200, 'x')), std::invalid_argument);
  a = parse_host_port("7072");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 7072);
  a = parse_host_port("0.0.0.0:0");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, 0);
  EXPECT_THROW(parse_host_port("::1:80"), std::invalid_argument);
  EXPECT_THROW(parse_host_port("host:"), std::invalid_argument);
}

TEST(WorkerProtocol, ConstantTimeCompare) {
  EXPECT_TRUE(constant_time_equal("secret", "secret"));
  EXPECT_FALSE(constant_time_equal("secreT", "secret"));
  EXPECT_FALSE(constant_time_equal("secret2", "secret"));
  EXPECT_FALSE(constant_time_equal("secre", "secret"));
  EXPECT_FALSE(constant_time_equal("", "secret"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

}  // namespace
}  // namespace pgmate::worker::protocol
