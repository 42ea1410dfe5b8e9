// The pgmate-worker wire protocol: length-prefixed binary frames over a stream socket.
//
// Frame = 16-byte header + payload, every integer little-endian:
//   bytes 0..3    magic "PGMW"
//   bytes 4..5    protocol version (kVersion = 2)
//   bytes 6..7    message type (MessageType)
//   bytes 8..11   request id (chosen by the client, echoed in the reply)
//   bytes 12..15  payload length
// Strings and byte blobs are a u32 length + the bytes; chess boards travel as core's 32-byte
// packed board (chess::pack / chess::unpack, which validates), checkers boards as 13 bytes
// (u32 white, u32 black, u32 kings: core's internal square masks, then u8 side to move,
// 0 black, 1 white; validated like checkers::validate_position). Payload layouts are
// listed next to each message below. A network travels as its key (NetworkKey): u32
// database OID, i64 id, 32 bytes SHA-256 of the weights.
//
// Decoders validate everything and throw ProtocolError (never crash, never read past the
// buffer, never allocate more than the payload justifies). A header error is a framing
// error (the stream cannot be trusted any more: the server answers ERROR and closes); a
// payload error leaves the stream in sync (the server answers ERROR and keeps going).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkers/board.h"
#include "chess/board.h"
#include "chess/packed.h"

namespace pgmate::worker::protocol {

static_assert(std::endian::native == std::endian::little, "the worker protocol code assumes a little-endian host");

inline constexpr char kMagic[4] = {'P', 'G', 'M', 'W'};
inline constexpr std::uint16_t kVersion = 2;  // 2: networks named by NetworkKey
inline constexpr std::size_t kHeaderSize = 16;
inline constexpr std::size_t kPackedSize = 32;
inline constexpr std::size_t kCheckersBoardSize = 13;  // 3 x u32 masks + u8 side

// Requests have the high bit clear; each reply is request | 0x8000; ERROR is 0xFFFF.
enum class MessageType : std::uint16_t {
  kHello = 1,          // u16 version, string token
  kPerft = 2,          // packed board, u8 depth, u8 device (PerftDevice)
  kLegalMoves = 3,     // u32 count, count x packed board
  kEvaluate = 4,       // key, u32 count, count x (u8 history count 1..4, u8 repetitions 0..2, that many packed boards)
  kLoadNetwork = 5,    // key, string config, bytes weights
  kInitWeights = 6,    // string config, u64 seed
  kStatus = 7,         // u32 database (0: every database's networks)
  kCheckersPerft = 8,  // checkers board (13 bytes), u8 depth, u8 device (PerftDevice), u8 rule (0 any, 1 longest)

  kHelloReply = 0x8001,          // u16 version, string server description
  kPerftReply = 0x8002,          // u64 nodes
  kLegalMovesReply = 0x8003,     // u32 count, count x (u16 n, n x u16 move)
  kEvaluateReply = 0x8004,       // key, u32 count, count x (f32 win, f32 draw, f32 loss, u16 n, n x u16 move, n x f32 prior)
  kLoadNetworkReply = 0x8005,    // empty
  kInitWeightsReply = 0x8006,    // bytes weights
  kStatusReply = 0x8007,         // string JSON
  kCheckersPerftReply = 0x8008,  // u64 nodes
  kError = 0xFFFF,               // u16 code (ErrorCode), string message
};

bool is_known_type(std::uint16_t type);
bool is_request(MessageType type);
MessageType reply_type(MessageType request);
// "HELLO", "EVALUATE_REPLY", ...; "type 0x1234" for unknown values.
std::string type_name(MessageType type);
std::string type_name(std::uint16_t type);

enum class ErrorCode : std::uint16_t {
  kBadFrame = 1,       // framing error: the connection is closed after the reply
  kBadRequest = 2,     // malformed or invalid request payload
  kUnauthorized = 3,   // missing or wrong token (TCP)
  kUnavailable = 4,    // no GPU, no network loaded, ...
  kBackend = 5,        // the evaluation backend failed
  kShuttingDown = 6,   // the worker is stopping
  kInternal = 7,
  kBusy = 8,           // too many requests in flight on this connection
  kNotLoaded = 9,      // EVALUATE: the worker does not hold this network; send LOAD_NETWORK
  kTooLarge = 10,      // the request asks for more than the worker's limits allow
};
std::string error_code_name(ErrorCode code);

class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Per-request item limits. The client splits larger calls into several requests, so these
// only bound the size of one frame (worst-case replies stay below 16 MiB).
inline constexpr std::uint32_t kMaxLegalMovesBoards = 16384;
inline constexpr std::uint32_t kMaxEvaluateInputs = 8192;
inline constexpr int kMaxHistory = 4;
inline constexpr int kMaxPerftDepth = 20;  // chess and checkers
inline constexpr std::uint32_t kMaxMovesPerPosition = 256;  // chess::kMaxMoves

// Largest payload accepted per frame type.
struct Limits {
  std::uint32_t max_payload = 16u << 20;        // every other type
  std::uint32_t max_large_payload = 64u << 20;  // LOAD_NETWORK, INIT_WEIGHTS_REPLY (weights)
  std::uint32_t max_payload_for(MessageType type) const;
};

using Bytes = std::vector<std::uint8_t>;

struct FrameHeader {
  MessageType type = MessageType::kStatus;
  std::uint32_t request_id = 0;
  std::uint32_t payload_length = 0;
};

// Validates magic, version, type and length (against `limits`). `bytes` must hold at
// least kHeaderSize bytes (throws ProtocolError otherwise).
FrameHeader decode_header(std::span<const std::uint8_t> bytes, const Limits& limits = {});
void encode_header(const FrameHeader& header, std::uint8_t* out /* kHeaderSize bytes */);
Bytes encode_frame(MessageType type, std::uint32_t request_id, std::span<const std::uint8_t> payload);

// ---- messages ----

enum class PerftDevice : std::uint8_t { kAuto = 0, kCpu = 1, kGpu = 2 };

struct Hello {
  static constexpr MessageType kType = MessageType::kHello;
  std::uint16_t version = kVersion;
  std::string token;
};
struct HelloReply {
  static constexpr MessageType kType = MessageType::kHelloReply;
  std::uint16_t version = kVersion;
  std::string server;
};
struct PerftRequest {
  static constexpr MessageType kType = MessageType::kPerft;
  chess::Board board{};
  int depth = 0;  // 0..kMaxPerftDepth
  PerftDevice device = PerftDevice::kAuto;
};
struct PerftReply {
  static constexpr MessageType kType = MessageType::kPerftReply;
  std::uint64_t nodes = 0;
};
// CHECKERS_PERFT: perft of an American checkers position under a capture rule (wire
// codes: 0 any capture sequence, 1 only the longest; checkers::CaptureRule's values).
struct CheckersPerftRequest {
  static constexpr MessageType kType = MessageType::kCheckersPerft;
  checkers::Board board{};
  int depth = 0;  // 0..kMaxPerftDepth
  PerftDevice device = PerftDevice::kAuto;
  checkers::CaptureRule rule = checkers::CaptureRule::kAny;
};
struct CheckersPerftReply {
  static constexpr MessageType kType = MessageType::kCheckersPerftReply;
  std::uint64_t nodes = 0;
};
struct LegalMovesRequest {
  static constexpr MessageType kType = MessageType::kLegalMoves;
  std::vector<chess::Board> boards;  // at most kMaxLegalMovesBoards
};
struct LegalMovesReply {
  static constexpr MessageType kType = MessageType::kLegalMovesReply;
  std::vector<std::vector<chess::Move>> moves;
};
// A network's identity: the database it is stored in, its pgmate.networks id and the
// SHA-256 of its weights (the row's weights_sha256). A changed row is another key; two
// databases' "network 1" are two keys. The id must be positive.
struct NetworkKey {
  std::uint32_t database = 0;  // OID of the database (0: none, e.g. tools and tests)
  std::int64_t id = 0;
  std::array<std::uint8_t, 32> sha256{};
  bool operator==(const NetworkKey&) const = default;
  std::string sha256_hex() const;
  std::string describe() const;  // "network 7 (database 16384, weights 1a2b3c4d5e6f7081...)"
};
struct NetworkKeyHash {
  std::size_t operator()(const NetworkKey& k) const;
};

inline constexpr int kMaxRepetitions = 2;  // the encoder's repetition plane saturates here

struct EvaluateRequest {
  static constexpr MessageType kType = MessageType::kEvaluate;
  NetworkKey network;
  // Per input: the position first, then up to 3 previous ones, newest first.
  std::vector<std::vector<chess::Board>> inputs;  // at most kMaxEvaluateInputs
  // Per input: how often the position occurred before in its game (0..2); empty: all 0.
  std::vector<std::uint8_t> repetitions;
};
struct EvalResult {
  float win = 0, draw = 0, loss = 0;
  std::vector<chess::Move> moves;
  std::vector<float> priors;  // one per move
};
struct EvaluateReply {
  static constexpr MessageType kType = MessageType::kEvaluateReply;
  NetworkKey network;  // the network that answered
  std::vector<EvalResult> results;
};
struct LoadNetworkRequest {
  static constexpr MessageType kType = MessageType::kLoadNetwork;
  NetworkKey network;
  std::string config;
  std::string weights;
};
struct LoadNetworkReply {
  static constexpr MessageType kType = MessageType::kLoadNetworkReply;
};
struct InitWeightsRequest {
  static constexpr MessageType kType = MessageType::kInitWeights;
  std::string config;
  std::uint64_t seed = 0;
};
struct InitWeightsReply {
  static constexpr MessageType kType = MessageType::kInitWeightsReply;
  std::string weights;
};
struct StatusRequest {
  static constexpr MessageType kType = MessageType::kStatus;
  std::uint32_t database = 0;  // list only this database's networks; 0: every database's
};
struct StatusReply {
  static constexpr MessageType kType = MessageType::kStatusReply;
  std::string json;
};
struct ErrorReply {
  static constexpr MessageType kType = MessageType::kError;
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

// Cursor over a payload; every read checks the remaining length.
class Reader {
 public:
  Reader(std::span<const std::uint8_t> data, MessageType type) : data_(data), type_(type) {}
  std::uint8_t u8();
  std::uint16_t u16();
  std::uint32_t u32();
  std::uint64_t u64();
  std::int64_t i64() { return std::int64_t(u64()); }
  float f32();
  std::string string(const char* what);
  chess::Board board(const std::string& what);
  checkers::Board checkers_board(const std::string& what);
  NetworkKey network_key();
  std::size_t remaining() const { return data_.size() - pos_; }
  std::size_t offset() const { return pos_; }
  // Throws unless at least `n` bytes remain.
  void need(std::size_t n, const char* what);
  // Throws when bytes are left over.
  void finish();
  [[noreturn]] void fail(const std::string& why) const;

 private:
  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
  MessageType type_;
};

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v);
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void i64(std::int64_t v) { u64(std::uint64_t(v)); }
  void f32(float v);
  void string(const std::string& s);
  void board(const chess::Board& b);
  void checkers_board(const checkers::Board& b);  // throws ProtocolError for an invalid position
  void network_key(const NetworkKey& k);
  void raw(const void* data, std::size_t n);
  Bytes& bytes() { return out_; }

 private:
  Bytes out_;
};

void encode(Writer& w, const Hello& m);
void encode(Writer& w, const HelloReply& m);
void encode(Writer& w, const PerftRequest& m);
void encode(Writer& w, const PerftReply& m);
void encode(Writer& w, const CheckersPerftRequest& m);
void encode(Writer& w, const CheckersPerftReply& m);
void encode(Writer& w, const LegalMovesRequest& m);
void encode(Writer& w, const LegalMovesReply& m);
void encode(Writer& w, const EvaluateRequest& m);
void encode(Writer& w, const EvaluateReply& m);
void encode(Writer& w, const LoadNetworkRequest& m);
void encode(Writer& w, const LoadNetworkReply& m);
void encode(Writer& w, const InitWeightsRequest& m);
void encode(Writer& w, const InitWeightsReply& m);
void encode(Writer& w, const StatusRequest& m);
void encode(Writer& w, const StatusReply& m);
void encode(Writer& w, const ErrorReply& m);

void decode(Reader& r, Hello& m);
void decode(Reader& r, HelloReply& m);
void decode(Reader& r, PerftRequest& m);
void decode(Reader& r, PerftReply& m);
void decode(Reader& r, CheckersPerftRequest& m);
void decode(Reader& r, CheckersPerftReply& m);
void decode(Reader& r, LegalMovesRequest& m);
void decode(Reader& r, LegalMovesReply& m);
void decode(Reader& r, EvaluateRequest& m);
void decode(Reader& r, EvaluateReply& m);
void decode(Reader& r, LoadNetworkRequest& m);
void decode(Reader& r, LoadNetworkReply& m);
void decode(Reader& r, InitWeightsRequest& m);
void decode(Reader& r, InitWeightsReply& m);
void decode(Reader& r, StatusRequest& m);
void decode(Reader& r, StatusReply& m);
void decode(Reader& r, ErrorReply& m);

// The payload of a message, without the header.
template <class M>
Bytes encode_payload(const M& message) {
  Writer w;
  encode(w, message);
  return std::move(w.bytes());
}

// A whole frame: header + payload. Throws ProtocolError if the payload exceeds the
// u32 length field.
template <class M>
Bytes encode_frame(std::uint32_t request_id, const M& message) {
  Writer w;
  w.bytes().resize(kHeaderSize);  // the header, written once the payload length is known
  encode(w, message);
  Bytes& out = w.bytes();
  const std::size_t payload = out.size() - kHeaderSize;
  if (payload > 0xFFFFFFFFu) throw ProtocolError(type_name(M::kType) + " payload too large for a frame");
  encode_header(FrameHeader{M::kType, request_id, std::uint32_t(payload)}, out.data());
  return std::move(out);
}

// Decodes a whole payload: every field validated, no trailing bytes allowed.
template <class M>
M decode_payload(std::span<const std::uint8_t> payload) {
  Reader r(payload, M::kType);
  M m;
  decode(r, m);
  r.finish();
  return m;
}

}  // namespace pgmate::worker::protocol
