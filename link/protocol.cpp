#include "link/protocol.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "checkers/fen.h"
#include "chess/fen.h"
#include "chess/notation.h"

namespace pgmate::worker::protocol {

namespace {

std::string hex16(std::uint16_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", unsigned(v));
  return buf;
}

}  // namespace

bool is_known_type(std::uint16_t type) {
  switch (MessageType(type)) {
    case MessageType::kHello:
    case MessageType::kPerft:
    case MessageType::kLegalMoves:
    case MessageType::kEvaluate:
    case MessageType::kLoadNetwork:
    case MessageType::kInitWeights:
    case MessageType::kStatus:
    case MessageType::kCheckersPerft:
    case MessageType::kTrainStart:
    case MessageType::kTrainStep:
    case MessageType::kTrainSave:
    case MessageType::kHelloReply:
    case MessageType::kPerftReply:
    case MessageType::kLegalMovesReply:
    case MessageType::kEvaluateReply:
    case MessageType::kLoadNetworkReply:
    case MessageType::kInitWeightsReply:
    case MessageType::kStatusReply:
    case MessageType::kCheckersPerftReply:
    case MessageType::kTrainStartReply:
    case MessageType::kTrainStepReply:
    case MessageType::kTrainSaveReply:
    case MessageType::kError:
      return true;
  }
  return false;
}

bool is_request(MessageType type) { return (std::uint16_t(type) & 0x8000) == 0; }

MessageType reply_type(MessageType request) { return MessageType(std::uint16_t(request) | 0x8000); }

std::string type_name(MessageType type) {
  switch (type) {
    case MessageType::kHello: return "HELLO";
    case MessageType::kPerft: return "PERFT";
    case MessageType::kLegalMoves: return "LEGAL_MOVES";
    case MessageType::kEvaluate: return "EVALUATE";
    case MessageType::kLoadNetwork: return "LOAD_NETWORK";
    case MessageType::kInitWeights: return "INIT_WEIGHTS";
    case MessageType::kStatus: return "STATUS";
    case MessageType::kCheckersPerft: return "CHECKERS_PERFT";
    case MessageType::kTrainStart: return "TRAIN_START";
    case MessageType::kTrainStep: return "TRAIN_STEP";
    case MessageType::kTrainSave: return "TRAIN_SAVE";
    case MessageType::kHelloReply: return "HELLO_REPLY";
    case MessageType::kPerftReply: return "PERFT_REPLY";
    case MessageType::kLegalMovesReply: return "LEGAL_MOVES_REPLY";
    case MessageType::kEvaluateReply: return "EVALUATE_REPLY";
    case MessageType::kLoadNetworkReply: return "LOAD_NETWORK_REPLY";
    case MessageType::kInitWeightsReply: return "INIT_WEIGHTS_REPLY";
    case MessageType::kStatusReply: return "STATUS_REPLY";
    case MessageType::kCheckersPerftReply: return "CHECKERS_PERFT_REPLY";
    case MessageType::kTrainStartReply: return "TRAIN_START_REPLY";
    case MessageType::kTrainStepReply: return "TRAIN_STEP_REPLY";
    case MessageType::kTrainSaveReply: return "TRAIN_SAVE_REPLY";
    case MessageType::kError: return "ERROR";
  }
  return "type " + hex16(std::uint16_t(type));
}

std::string type_name(std::uint16_t type) { return type_name(MessageType(type)); }

std::string error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadFrame: return "bad frame";
    case ErrorCode::kBadRequest: return "bad request";
    case ErrorCode::kUnauthorized: return "unauthorized";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kBackend: return "backend error";
    case ErrorCode::kShuttingDown: return "shutting down";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kBusy: return "busy";
    case ErrorCode::kNotLoaded: return "network not loaded";
    case ErrorCode::kTooLarge: return "too large";
  }
  return "error " + std::to_string(unsigned(code));
}

std::uint32_t Limits::max_payload_for(MessageType type) const {
  switch (type) {
    case MessageType::kLoadNetwork:
    case MessageType::kInitWeightsReply:
      return max_large_payload;
    case MessageType::kTrainStart:
    case MessageType::kTrainSaveReply:
      return max_state_payload;
    default:
      return max_payload;
  }
}

// ---- header ----

FrameHeader decode_header(std::span<const std::uint8_t> bytes, const Limits& limits) {
  if (bytes.size() < kHeaderSize)
    throw ProtocolError("truncated frame header: " + std::to_string(bytes.size()) + " of " +
                        std::to_string(kHeaderSize) + " bytes");
  if (std::memcmp(bytes.data(), kMagic, 4) != 0) {
    char shown[64];
    std::snprintf(shown, sizeof shown, "%02x %02x %02x %02x", bytes[0], bytes[1], bytes[2], bytes[3]);
    throw ProtocolError(std::string("bad frame magic (") + shown +
                        ", expected \"PGMW\"): not a pgmate-worker peer, or the stream is out of sync");
  }
  const std::uint16_t version = std::uint16_t(bytes[4] | (bytes[5] << 8));
  if (version != kVersion)
    throw ProtocolError("unsupported protocol version " + std::to_string(version) + " (this side speaks version " +
                        std::to_string(kVersion) + ")");
  const std::uint16_t type = std::uint16_t(bytes[6] | (bytes[7] << 8));
  if (!is_known_type(type)) throw ProtocolError("unknown message type " + hex16(type));
  FrameHeader h;
  h.type = MessageType(type);
  std::memcpy(&h.request_id, bytes.data() + 8, 4);
  std::memcpy(&h.payload_length, bytes.data() + 12, 4);
  const std::uint32_t limit = limits.max_payload_for(h.type);
  if (h.payload_length > limit)
    throw ProtocolError(type_name(h.type) + " frame of " + std::to_string(h.payload_length) +
                        " bytes exceeds the limit of " + std::to_string(limit) + " bytes");
  return h;
}

void encode_header(const FrameHeader& h, std::uint8_t* out) {
  std::memcpy(out, kMagic, 4);
  out[4] = std::uint8_t(kVersion & 0xFF);
  out[5] = std::uint8_t(kVersion >> 8);
  const std::uint16_t type = std::uint16_t(h.type);
  out[6] = std::uint8_t(type & 0xFF);
  out[7] = std::uint8_t(type >> 8);
  std::memcpy(out + 8, &h.request_id, 4);
  std::memcpy(out + 12, &h.payload_length, 4);
}

Bytes encode_frame(MessageType type, std::uint32_t request_id, std::span<const std::uint8_t> payload) {
  if (payload.size() > 0xFFFFFFFFu) throw ProtocolError(type_name(type) + " payload too large for a frame");
  Bytes out(kHeaderSize + payload.size());
  encode_header(FrameHeader{type, request_id, std::uint32_t(payload.size())}, out.data());
  if (!payload.empty()) std::memcpy(out.data() + kHeaderSize, payload.data(), payload.size());
  return out;
}

// ---- reader / writer ----

void Reader::fail(const std::string& why) const { throw ProtocolError(type_name(type_) + " payload: " + why); }

void Reader::need(std::size_t n, const char* what) {
  if (remaining() < n)
    fail(std::string("truncated at byte ") + std::to_string(pos_) + ": " + what + " needs " + std::to_string(n) +
         " bytes, " + std::to_string(remaining()) + " left");
}

std::uint8_t Reader::u8() {
  need(1, "a u8");
  return data_[pos_++];
}

std::uint16_t Reader::u16() {
  need(2, "a u16");
  std::uint16_t v;
  std::memcpy(&v, data_.data() + pos_, 2);
  pos_ += 2;
  return v;
}

std::uint32_t Reader::u32() {
  need(4, "a u32");
  std::uint32_t v;
  std::memcpy(&v, data_.data() + pos_, 4);
  pos_ += 4;
  return v;
}

std::uint64_t Reader::u64() {
  need(8, "a u64");
  std::uint64_t v;
  std::memcpy(&v, data_.data() + pos_, 8);
  pos_ += 8;
  return v;
}

float Reader::f32() {
  need(4, "an f32");
  float v;
  std::memcpy(&v, data_.data() + pos_, 4);
  pos_ += 4;
  return v;
}

double Reader::f64() {
  need(8, "an f64");
  double v;
  std::memcpy(&v, data_.data() + pos_, 8);
  pos_ += 8;
  return v;
}

std::string Reader::string(const char* what) {
  const std::uint32_t n = u32();
  if (n > remaining())
    fail(std::string(what) + " claims " + std::to_string(n) + " bytes but only " + std::to_string(remaining()) +
         " remain");
  std::string s(reinterpret_cast<const char*>(data_.data() + pos_), n);
  pos_ += n;
  return s;
}

chess::Board Reader::board(const std::string& what) {
  need(kPackedSize, "a packed board");
  chess::PackedBoard p;
  std::memcpy(p.data(), data_.data() + pos_, kPackedSize);
  pos_ += kPackedSize;
  try {
    return chess::unpack(p);
  } catch (const std::exception& e) {  // chess::ParseError
    fail(what + ": " + e.what());
  }
}

checkers::Board Reader::checkers_board(const std::string& what) {
  need(kCheckersBoardSize, "a checkers board");
  checkers::Board b;
  b.white = u32();
  b.black = u32();
  b.kings = u32();
  const std::uint8_t side = u8();
  if (side > 1) fail(what + ": side to move code " + std::to_string(side) + " (0 black, 1 white)");
  b.side = checkers::Color(side);
  try {
    checkers::validate_position(b, what);
  } catch (const std::exception& e) {  // checkers::ParseError
    fail(e.what());
  }
  return b;
}

NetworkKey Reader::network_key() {
  NetworkKey k;
  k.database = u32();
  k.id = i64();
  need(k.sha256.size(), "a weights hash");
  std::memcpy(k.sha256.data(), data_.data() + pos_, k.sha256.size());
  pos_ += k.sha256.size();
  if (k.id <= 0) fail("network id " + std::to_string(k.id) + " (ids are positive)");
  return k;
}

void Reader::finish() {
  if (remaining() != 0)
    fail(std::to_string(remaining()) + " trailing bytes after the message (" + std::to_string(pos_) +
         " bytes expected)");
}

void Writer::u16(std::uint16_t v) { raw(&v, 2); }
void Writer::u32(std::uint32_t v) { raw(&v, 4); }
void Writer::u64(std::uint64_t v) { raw(&v, 8); }
void Writer::f32(float v) { raw(&v, 4); }
void Writer::f64(double v) { raw(&v, 8); }

void Writer::string(const std::string& s) {
  if (s.size() > 0xFFFFFFFFu) throw ProtocolError("string too long for the protocol");
  u32(std::uint32_t(s.size()));
  raw(s.data(), s.size());
}

void Writer::board(const chess::Board& b) {
  const chess::PackedBoard p = chess::pack(b);
  raw(p.data(), p.size());
}

void Writer::checkers_board(const checkers::Board& b) {
  try {
    checkers::validate_position(b, "checkers board");
  } catch (const std::exception& e) {
    throw ProtocolError(e.what());
  }
  u32(b.white);
  u32(b.black);
  u32(b.kings);
  u8(std::uint8_t(b.side));
}

void Writer::network_key(const NetworkKey& k) {
  if (k.id <= 0) throw ProtocolError("network id " + std::to_string(k.id) + " (ids are positive)");
  u32(k.database);
  i64(k.id);
  raw(k.sha256.data(), k.sha256.size());
}

std::string NetworkKey::sha256_hex() const {
  static const char* const digits = "0123456789abcdef";
  std::string hex;
  for (std::uint8_t b : sha256) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

std::string NetworkKey::describe() const {
  return "network " + std::to_string(id) + " (database " + std::to_string(database) + ", weights " +
         sha256_hex().substr(0, 16) + "...)";
}

std::size_t NetworkKeyHash::operator()(const NetworkKey& k) const {
  std::uint64_t h;
  std::memcpy(&h, k.sha256.data(), sizeof h);
  return std::size_t(h ^ (std::uint64_t(k.id) * 0x9E3779B97F4A7C15ull) ^ (std::uint64_t(k.database) << 32));
}

void Writer::raw(const void* data, std::size_t n) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  out_.insert(out_.end(), bytes, bytes + n);
}

// ---- messages ----

namespace {

void check_count(std::size_t count, std::uint32_t limit, const char* what) {
  if (count > limit)
    throw ProtocolError(std::string(what) + ": " + std::to_string(count) + " items exceed the per-request limit of " +
                        std::to_string(limit));
}

void encode_moves(Writer& w, const std::vector<chess::Move>& moves) {
  if (moves.size() > kMaxMovesPerPosition) throw ProtocolError("more than 256 moves in one position");
  w.u16(std::uint16_t(moves.size()));
  for (chess::Move m : moves) w.u16(m.bits());
}

std::vector<chess::Move> decode_moves(Reader& r, std::size_t index) {
  const std::uint16_t n = r.u16();
  if (n > kMaxMovesPerPosition)
    r.fail("position " + std::to_string(index) + " claims " + std::to_string(n) + " moves (at most 256)");
  r.need(std::size_t(n) * 2, "the moves");
  std::vector<chess::Move> moves(n);
  for (auto& m : moves) m = chess::Move(r.u16());
  return moves;
}

// A perft request's depth and device, the same bytes for chess and checkers.
void decode_perft_limits(Reader& r, int& depth, PerftDevice& device) {
  depth = r.u8();
  if (depth > kMaxPerftDepth)
    r.fail("depth " + std::to_string(depth) + " out of range (0.." + std::to_string(kMaxPerftDepth) + ")");
  const std::uint8_t code = r.u8();
  if (code > std::uint8_t(PerftDevice::kGpu))
    r.fail("unknown device code " + std::to_string(code) + " (0 auto, 1 cpu, 2 gpu)");
  device = PerftDevice(code);
}

}  // namespace

void encode(Writer& w, const Hello& m) {
  w.u16(m.version);
  w.string(m.token);
}
void decode(Reader& r, Hello& m) {
  m.version = r.u16();
  m.token = r.string("the token");
}

void encode(Writer& w, const HelloReply& m) {
  w.u16(m.version);
  w.string(m.server);
}
void decode(Reader& r, HelloReply& m) {
  m.version = r.u16();
  m.server = r.string("the server description");
}

void encode(Writer& w, const PerftRequest& m) {
  if (m.depth < 0 || m.depth > kMaxPerftDepth) throw ProtocolError("perft depth out of range");
  w.board(m.board);
  w.u8(std::uint8_t(m.depth));
  w.u8(std::uint8_t(m.device));
}
void decode(Reader& r, PerftRequest& m) {
  m.board = r.board("the board");
  decode_perft_limits(r, m.depth, m.device);
}

void encode(Writer& w, const PerftReply& m) { w.u64(m.nodes); }
void decode(Reader& r, PerftReply& m) { m.nodes = r.u64(); }

void encode(Writer& w, const CheckersPerftRequest& m) {
  if (m.depth < 0 || m.depth > kMaxPerftDepth) throw ProtocolError("checkers perft depth out of range");
  if (std::uint8_t(m.device) > std::uint8_t(PerftDevice::kGpu)) throw ProtocolError("unknown perft device");
  if (std::uint8_t(m.rule) > std::uint8_t(checkers::CaptureRule::kLongest))
    throw ProtocolError("unknown checkers capture rule");
  w.checkers_board(m.board);
  w.u8(std::uint8_t(m.depth));
  w.u8(std::uint8_t(m.device));
  w.u8(std::uint8_t(m.rule));
}
void decode(Reader& r, CheckersPerftRequest& m) {
  m.board = r.checkers_board("checkers board");
  decode_perft_limits(r, m.depth, m.device);
  const std::uint8_t rule = r.u8();
  if (rule > std::uint8_t(checkers::CaptureRule::kLongest))
    r.fail("unknown capture rule code " + std::to_string(rule) + " (0 any, 1 longest)");
  m.rule = checkers::CaptureRule(rule);
}

void encode(Writer& w, const CheckersPerftReply& m) { w.u64(m.nodes); }
void decode(Reader& r, CheckersPerftReply& m) { m.nodes = r.u64(); }

void encode(Writer& w, const LegalMovesRequest& m) {
  check_count(m.boards.size(), kMaxLegalMovesBoards, "LEGAL_MOVES");
  w.u32(std::uint32_t(m.boards.size()));
  for (const auto& b : m.boards) w.board(b);
}
void decode(Reader& r, LegalMovesRequest& m) {
  const std::uint32_t count = r.u32();
  if (count > kMaxLegalMovesBoards)
    r.fail("count " + std::to_string(count) + " exceeds the per-request limit of " +
           std::to_string(kMaxLegalMovesBoards));
  if (std::uint64_t(count) * kPackedSize != r.remaining())
    r.fail("count says " + std::to_string(count) + " boards (" + std::to_string(std::uint64_t(count) * kPackedSize) +
           " bytes) but " + std::to_string(r.remaining()) + " bytes follow");
  m.boards.clear();
  m.boards.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) m.boards.push_back(r.board("board " + std::to_string(i)));
}

void encode(Writer& w, const LegalMovesReply& m) {
  check_count(m.moves.size(), kMaxLegalMovesBoards, "LEGAL_MOVES_REPLY");
  w.u32(std::uint32_t(m.moves.size()));
  for (const auto& moves : m.moves) encode_moves(w, moves);
}
void decode(Reader& r, LegalMovesReply& m) {
  const std::uint32_t count = r.u32();
  if (count > kMaxLegalMovesBoards)
    r.fail("count " + std::to_string(count) + " exceeds the limit of " + std::to_string(kMaxLegalMovesBoards));
  if (std::uint64_t(count) * 2 > r.remaining())
    r.fail("count says " + std::to_string(count) + " positions but only " + std::to_string(r.remaining()) +
           " bytes follow");
  m.moves.clear();
  m.moves.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) m.moves.push_back(decode_moves(r, i));
}

void encode(Writer& w, const EvaluateRequest& m) {
  check_count(m.inputs.size(), kMaxEvaluateInputs, "EVALUATE");
  if (!m.repetitions.empty() && m.repetitions.size() != m.inputs.size())
    throw ProtocolError("EVALUATE: " + std::to_string(m.repetitions.size()) + " repetition counts for " +
                        std::to_string(m.inputs.size()) + " inputs");
  w.network_key(m.network);
  w.u32(std::uint32_t(m.inputs.size()));
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    const auto& history = m.inputs[i];
    if (history.empty() || history.size() > std::size_t(kMaxHistory))
      throw ProtocolError("EVALUATE: each input needs 1 to 4 positions, got " + std::to_string(history.size()));
    w.u8(std::uint8_t(history.size()));
    w.u8(m.repetitions.empty() ? 0 : std::min<std::uint8_t>(m.repetitions[i], kMaxRepetitions));
    for (const auto& b : history) w.board(b);
  }
}
void decode(Reader& r, EvaluateRequest& m) {
  m.network = r.network_key();
  const std::uint32_t count = r.u32();
  if (count > kMaxEvaluateInputs)
    r.fail("count " + std::to_string(count) + " exceeds the per-request limit of " +
           std::to_string(kMaxEvaluateInputs));
  // Each input takes at least 2 + 32 bytes: reject a count the payload cannot hold before
  // allocating anything.
  if (std::uint64_t(count) * (2 + kPackedSize) > r.remaining())
    r.fail("count says " + std::to_string(count) + " inputs but only " + std::to_string(r.remaining()) +
           " bytes follow");
  m.inputs.clear();
  m.inputs.reserve(count);
  m.repetitions.assign(count, 0);
  for (std::uint32_t i = 0; i < count; ++i) {
    const int n = r.u8();
    if (n < 1 || n > kMaxHistory)
      r.fail("input " + std::to_string(i) + " has a history count of " + std::to_string(n) + " (1..4)");
    m.repetitions[i] = r.u8();
    if (m.repetitions[i] > kMaxRepetitions)
      r.fail("input " + std::to_string(i) + " has a repetition count of " + std::to_string(m.repetitions[i]) +
             " (0..2)");
    std::vector<chess::Board> history;
    history.reserve(n);
    for (int j = 0; j < n; ++j)
      history.push_back(r.board("input " + std::to_string(i) + " board " + std::to_string(j)));
    m.inputs.push_back(std::move(history));
  }
}

void encode(Writer& w, const EvaluateReply& m) {
  check_count(m.results.size(), kMaxEvaluateInputs, "EVALUATE_REPLY");
  w.network_key(m.network);
  w.u32(std::uint32_t(m.results.size()));
  for (const auto& res : m.results) {
    if (res.priors.size() != res.moves.size()) throw ProtocolError("EVALUATE_REPLY: priors and moves differ in size");
    w.f32(res.win);
    w.f32(res.draw);
    w.f32(res.loss);
    encode_moves(w, res.moves);
    for (float p : res.priors) w.f32(p);
  }
}
void decode(Reader& r, EvaluateReply& m) {
  m.network = r.network_key();
  const std::uint32_t count = r.u32();
  if (count > kMaxEvaluateInputs)
    r.fail("count " + std::to_string(count) + " exceeds the limit of " + std::to_string(kMaxEvaluateInputs));
  if (std::uint64_t(count) * 14 > r.remaining())
    r.fail("count says " + std::to_string(count) + " results but only " + std::to_string(r.remaining()) +
           " bytes follow");
  m.results.clear();
  m.results.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    EvalResult res;
    res.win = r.f32();
    res.draw = r.f32();
    res.loss = r.f32();
    res.moves = decode_moves(r, i);
    r.need(res.moves.size() * 4, "the priors");
    res.priors.resize(res.moves.size());
    for (auto& p : res.priors) p = r.f32();
    m.results.push_back(std::move(res));
  }
}

void encode(Writer& w, const LoadNetworkRequest& m) {
  w.network_key(m.network);
  w.string(m.config);
  w.string(m.weights);
}
void decode(Reader& r, LoadNetworkRequest& m) {
  m.network = r.network_key();
  m.config = r.string("the configuration");
  m.weights = r.string("the weights");
}

void encode(Writer&, const LoadNetworkReply&) {}
void decode(Reader&, LoadNetworkReply&) {}

void encode(Writer& w, const InitWeightsRequest& m) {
  w.string(m.config);
  w.u64(m.seed);
}
void decode(Reader& r, InitWeightsRequest& m) {
  m.config = r.string("the configuration");
  m.seed = r.u64();
}

void encode(Writer& w, const InitWeightsReply& m) { w.string(m.weights); }
void decode(Reader& r, InitWeightsReply& m) { m.weights = r.string("the weights"); }

void encode(Writer& w, const StatusRequest& m) { w.u32(m.database); }
void decode(Reader& r, StatusRequest& m) { m.database = r.u32(); }

void encode(Writer& w, const StatusReply& m) { w.string(m.json); }
void decode(Reader& r, StatusReply& m) { m.json = r.string("the status"); }

// ---- training ----

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool finite_non_negative(float v) { return std::isfinite(v) && v >= 0; }

// What is wrong with a sample's counts and values ("" when nothing): the encoder and the
// decoder refuse the same samples.
std::string train_sample_problem(const TrainSample& s) {
  if (s.history.empty() || s.history.size() > std::size_t(kMaxHistory))
    return "a history of " + std::to_string(s.history.size()) + " positions (1..4)";
  if (s.repetitions > kMaxRepetitions)
    return "a repetition count of " + std::to_string(s.repetitions) + " (0..2)";
  if (s.moves.empty() || s.moves.size() > kMaxMovesPerPosition)
    return std::to_string(s.moves.size()) + " target moves (1..256)";
  if (s.policy.size() != s.moves.size())
    return std::to_string(s.policy.size()) + " probabilities for " + std::to_string(s.moves.size()) + " target moves";
  double sum = 0;
  for (std::size_t i = 0; i < s.policy.size(); ++i) {
    if (!finite_non_negative(s.policy[i]))
      return "the probability of target move " + std::to_string(i) + " (" + chess::to_uci(s.moves[i]) + ") is " +
             number(s.policy[i]) + " (finite and >= 0)";
    sum += s.policy[i];
  }
  if (!(sum > 0)) return "the target move probabilities sum to 0";
  const std::string wdl = "(" + number(s.wdl[0]) + ", " + number(s.wdl[1]) + ", " + number(s.wdl[2]) + ")";
  for (float v : s.wdl)
    if (!finite_non_negative(v)) return "the WDL target " + wdl + " is not finite and >= 0";
  if (!(double(s.wdl[0]) + s.wdl[1] + s.wdl[2] > 0)) return "the WDL target " + wdl + " sums to 0";
  if (!finite_non_negative(s.weight)) return "the weight " + number(s.weight) + " is not finite and >= 0";
  return "";
}

// The smallest sample: 1 board, 1 move, the targets and the weight.
constexpr std::size_t kMinTrainSampleBytes = 2 + kPackedSize + 2 + 6 + 16;

void encode_step_header(Writer& w, std::uint32_t session, TrainMode mode, std::size_t count) {
  if (session == 0) throw ProtocolError("TRAIN_STEP: session 0 (sessions are numbered from 1)");
  if (std::uint8_t(mode) > std::uint8_t(TrainMode::kEvaluate)) throw ProtocolError("TRAIN_STEP: unknown mode");
  if (count < 1 || count > kMaxTrainSamples)
    throw ProtocolError("TRAIN_STEP: " + std::to_string(count) + " samples (1.." + std::to_string(kMaxTrainSamples) +
                        " per request)");
  w.u32(session);
  w.u8(std::uint8_t(mode));
  w.u32(std::uint32_t(count));
}

std::uint32_t decode_session(Reader& r) {
  const std::uint32_t session = r.u32();
  if (session == 0) r.fail("session 0 (sessions are numbered from 1)");
  return session;
}

bool decode_flag(Reader& r, const char* what) {
  const std::uint8_t v = r.u8();
  if (v > 1) r.fail(std::string(what) + " " + std::to_string(v) + " (0 or 1)");
  return v == 1;
}

}  // namespace

void encode_train_sample(Writer& w, const TrainSample& s) {
  if (const std::string problem = train_sample_problem(s); !problem.empty())
    throw ProtocolError("training sample: " + problem);
  w.u8(std::uint8_t(s.history.size()));
  w.u8(s.repetitions);
  for (const auto& b : s.history) w.board(b);
  w.u16(std::uint16_t(s.moves.size()));
  for (std::size_t i = 0; i < s.moves.size(); ++i) {
    w.u16(s.moves[i].bits());
    w.f32(s.policy[i]);
  }
  for (float v : s.wdl) w.f32(v);
  w.f32(s.weight);
}

TrainSample decode_train_sample(Reader& r, std::size_t index) {
  const std::string name = "sample " + std::to_string(index);
  TrainSample s;
  const int n = r.u8();
  if (n < 1 || n > kMaxHistory) r.fail(name + ": a history count of " + std::to_string(n) + " (1..4)");
  s.repetitions = r.u8();
  if (s.repetitions > kMaxRepetitions)
    r.fail(name + ": a repetition count of " + std::to_string(s.repetitions) + " (0..2)");
  s.history.reserve(std::size_t(n));
  for (int j = 0; j < n; ++j) s.history.push_back(r.board(name + " board " + std::to_string(j)));
  const std::uint16_t moves = r.u16();
  if (moves < 1 || moves > kMaxMovesPerPosition)
    r.fail(name + ": " + std::to_string(moves) + " target moves (1..256)");
  r.need(std::size_t(moves) * 6, "the target moves");
  s.moves.reserve(moves);
  s.policy.reserve(moves);
  for (int i = 0; i < moves; ++i) {
    s.moves.emplace_back(r.u16());
    s.policy.push_back(r.f32());
  }
  for (float& v : s.wdl) v = r.f32();
  s.weight = r.f32();
  if (const std::string problem = train_sample_problem(s); !problem.empty()) r.fail(name + ": " + problem);
  return s;
}

void encode(Writer& w, const TrainStartRequest& m) {
  w.string(m.config);
  w.string(m.weights);
  w.u8(m.reference ? 1 : 0);
  if (m.reference) w.string(*m.reference);
  w.string(m.options);
  w.u8(m.state ? 1 : 0);
  if (m.state) w.string(*m.state);
  w.u8(m.optimizer ? 1 : 0);
  if (m.optimizer) w.string(*m.optimizer);
}
void decode(Reader& r, TrainStartRequest& m) {
  m.config = r.string("the configuration");
  m.weights = r.string("the weights");
  m.reference.reset();
  if (decode_flag(r, "has_reference")) m.reference = r.string("the reference weights");
  m.options = r.string("the options");
  m.state.reset();
  if (decode_flag(r, "has_state")) m.state = r.string("the state");
  m.optimizer.reset();
  if (decode_flag(r, "has_optimizer")) m.optimizer = r.string("the optimizer checkpoint");
  if (m.state && m.optimizer) r.fail("a resumed session keeps its own optimizer: give a state or an optimizer, not both");
}

void encode(Writer& w, const TrainStartReply& m) {
  if (m.session == 0) throw ProtocolError("TRAIN_START_REPLY: session 0");
  w.u32(m.session);
  w.i64(m.steps_done);
  w.string(m.device);
}
void decode(Reader& r, TrainStartReply& m) {
  m.session = decode_session(r);
  m.steps_done = r.i64();
  if (m.steps_done < 0) r.fail("steps done " + std::to_string(m.steps_done));
  m.device = r.string("the device");
}

void encode(Writer& w, const TrainStepRequest& m) {
  encode_step_header(w, m.session, m.mode, m.samples.size());
  for (const auto& s : m.samples) encode_train_sample(w, s);
}
void encode(Writer& w, const EncodedTrainStepRequest& m) {
  encode_step_header(w, m.session, m.mode, m.samples.size());
  for (const auto& s : m.samples) w.raw(s.data(), s.size());
}
void decode(Reader& r, TrainStepRequest& m) {
  m.session = decode_session(r);
  const std::uint8_t mode = r.u8();
  if (mode > std::uint8_t(TrainMode::kEvaluate)) r.fail("unknown mode " + std::to_string(mode) + " (0 step, 1 evaluate)");
  m.mode = TrainMode(mode);
  const std::uint32_t count = r.u32();
  if (count < 1 || count > kMaxTrainSamples)
    r.fail("count " + std::to_string(count) + " out of range (1.." + std::to_string(kMaxTrainSamples) + ")");
  if (std::uint64_t(count) * kMinTrainSampleBytes > r.remaining())
    r.fail("count says " + std::to_string(count) + " samples but only " + std::to_string(r.remaining()) +
           " bytes follow");
  m.samples.clear();
  m.samples.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) m.samples.push_back(decode_train_sample(r, i));
}

void encode(Writer& w, const TrainStepReply& m) {
  const TrainMetrics& t = m.metrics;
  w.i64(t.step);
  for (double v : {t.policy_loss, t.value_loss, t.kl, t.total_loss, t.accuracy, t.lr, t.grad_norm, t.kl_weight})
    w.f64(v);
  w.u32(t.positions);
}
void decode(Reader& r, TrainStepReply& m) {
  TrainMetrics& t = m.metrics;
  t.step = r.i64();
  for (double* v : {&t.policy_loss, &t.value_loss, &t.kl, &t.total_loss, &t.accuracy, &t.lr, &t.grad_norm,
                    &t.kl_weight})
    *v = r.f64();
  t.positions = r.u32();
}

void encode(Writer& w, const TrainSaveRequest& m) {
  if (m.session == 0) throw ProtocolError("TRAIN_SAVE: session 0 (sessions are numbered from 1)");
  if (m.flags & ~(kTrainSaveWeights | kTrainSaveState | kTrainSaveClose))
    throw ProtocolError("TRAIN_SAVE: unknown flags");
  w.u32(m.session);
  w.u8(m.flags);
}
void decode(Reader& r, TrainSaveRequest& m) {
  m.session = decode_session(r);
  m.flags = r.u8();
  if (m.flags & ~(kTrainSaveWeights | kTrainSaveState | kTrainSaveClose))
    r.fail("unknown flags " + hex16(m.flags) + " (1 weights, 2 state, 4 close)");
}

void encode(Writer& w, const TrainSaveReply& m) {
  w.i64(m.steps_done);
  w.string(m.weights);
  w.string(m.state);
}
void decode(Reader& r, TrainSaveReply& m) {
  m.steps_done = r.i64();
  if (m.steps_done < 0) r.fail("steps done " + std::to_string(m.steps_done));
  m.weights = r.string("the weights");
  m.state = r.string("the state");
}

void encode(Writer& w, const ErrorReply& m) {
  w.u16(std::uint16_t(m.code));
  w.string(m.message);
}
void decode(Reader& r, ErrorReply& m) {
  m.code = ErrorCode(r.u16());
  m.message = r.string("the message");
}

}  // namespace pgmate::worker::protocol
