// The pgmate-worker wire protocol: length-prefixed binary frames over a stream socket.
//
// Frame = 16-byte header + payload, every integer little-endian:
//   bytes 0..3    magic "PGMW"
//   bytes 4..5    protocol version (kVersion = 4)
//   bytes 6..7    message type (MessageType)
//   bytes 8..11   request id (chosen by the client, echoed in the reply)
//   bytes 12..15  payload length
// Strings and byte blobs are a u32 length + the bytes; chess boards travel as core's 32-byte
// packed board (chess::pack / chess::unpack, which validates), checkers boards as 13 bytes
// (u32 white, u32 black, u32 kings: core's internal square masks, then u8 side to move,
// 0 black, 1 white; validated like checkers::validate_position). Payload layouts are
// listed next to each message below. A network travels as its key (NetworkKey): u32
// database OID, i64 id, 32 bytes SHA-256 of the weights. f64 is an IEEE double; a "TrainSample"
// is the layout of encode_train_sample (below).
//
// Training sessions (TRAIN_START, TRAIN_STEP, TRAIN_SAVE) belong to the connection that
// started them: closing it drops them, and another connection cannot name them.
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
#include <optional>
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
inline constexpr std::uint16_t kVersion = 4;  // 2: networks named by NetworkKey; 3: training sessions;
                                              // 4: a new session may take an earlier run's optimizer
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
  kTrainStart = 9,     // string config, string weights, u8 has_reference [string reference weights],
                       // string options (TrainOptions JSON), u8 has_state [string state (a checkpoint)],
                       // u8 has_optimizer [string optimizer (a checkpoint whose optimizer a new session takes)]
  kTrainStep = 10,     // u32 session, u8 mode (TrainMode), u32 count (1..8192), count x TrainSample
  kTrainSave = 11,     // u32 session, u8 flags (kTrainSave*: send weights, send state, close)

  kHelloReply = 0x8001,          // u16 version, string server description
  kPerftReply = 0x8002,          // u64 nodes
  kLegalMovesReply = 0x8003,     // u32 count, count x (u16 n, n x u16 move)
  kEvaluateReply = 0x8004,       // key, u32 count, count x (f32 win, f32 draw, f32 loss, u16 n, n x u16 move, n x f32 prior)
  kLoadNetworkReply = 0x8005,    // empty
  kInitWeightsReply = 0x8006,    // bytes weights
  kStatusReply = 0x8007,         // string JSON
  kCheckersPerftReply = 0x8008,  // u64 nodes
  kTrainStartReply = 0x8009,     // u32 session, i64 steps done, string device
  kTrainStepReply = 0x800A,      // i64 step, 8 x f64 (policy, value, kl, total loss, accuracy, lr, grad norm,
                                 // kl weight), u32 positions
  kTrainSaveReply = 0x800B,      // i64 steps done, string weights, string state (each empty unless asked)
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
  kUnavailable = 4,    // no GPU, no network loaded, no training backend, ...
  kBackend = 5,        // the evaluation or training backend failed (a non-finite loss, ...)
  kShuttingDown = 6,   // the worker is stopping
  kInternal = 7,
  kBusy = 8,           // too many connections (request id 0), or too many training sessions
  kNotLoaded = 9,      // EVALUATE: the worker does not hold this network; send LOAD_NETWORK
  kTooLarge = 10,      // the request asks for more than the worker's limits allow (a TRAIN_SAVE_REPLY too large)
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
inline constexpr std::uint32_t kMaxTrainSamples = 8192;     // TRAIN_STEP (about 14 MiB at most)

// Largest payload accepted per frame type.
struct Limits {
  std::uint32_t max_payload = 16u << 20;        // every other type
  std::uint32_t max_large_payload = 64u << 20;  // LOAD_NETWORK, INIT_WEIGHTS_REPLY (weights)
  std::uint32_t max_state_payload = 256u << 20; // TRAIN_START, TRAIN_SAVE_REPLY (weights and optimizer state)
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

// ---- training ----

// One training position and its targets. Layout (encode_train_sample):
//   u8 history count (1..4), u8 repetitions (0..2), that many packed boards (the position
//   first, then up to 3 earlier ones, newest first), u16 n (1..256), n x (u16 move, f32
//   probability), f32 win, f32 draw, f32 loss, f32 weight.
// Moves are chess::Move's 16 bits; the worker matches them to the legal moves of history[0]
// by from, to and promotion (chess::board_free), so the kind bits may be left out. Targets
// are from the side to move's point of view; probabilities and WDL need not sum to 1 (the
// worker normalises them) but must be finite, >= 0 and not all 0; the weight is finite and
// >= 0 (0: no influence).
struct TrainSample {
  std::vector<chess::Board> history;
  std::uint8_t repetitions = 0;
  std::vector<chess::Move> moves;
  std::vector<float> policy;  // one probability per move
  float wdl[3] = {0, 1, 0};
  float weight = 1;
};

struct TrainStartRequest {
  static constexpr MessageType kType = MessageType::kTrainStart;
  std::string config;   // the network's configuration JSON (ignored with a state)
  std::string weights;  // its safetensors bytes (ignored with a state)
  std::optional<std::string> reference;  // weights for the KL term
  std::string options;  // TrainOptions JSON; with a state, replaces the saved options ("": keep them)
  std::optional<std::string> state;      // a checkpoint to resume from
  // Without a state: a checkpoint of an earlier run whose optimizer (moments, step count)
  // the new session continues (nn::Trainer::take_optimizer).
  std::optional<std::string> optimizer;
};
struct TrainStartReply {
  static constexpr MessageType kType = MessageType::kTrainStartReply;
  std::uint32_t session = 0;  // > 0
  std::int64_t steps_done = 0;
  std::string device;  // where the session trains: "cpu", "cuda:0"
};

enum class TrainMode : std::uint8_t {
  kStep = 0,      // one optimizer step on the samples
  kEvaluate = 1,  // the samples' losses in eval mode; nothing changes
};

struct TrainStepRequest {
  static constexpr MessageType kType = MessageType::kTrainStep;
  std::uint32_t session = 0;
  TrainMode mode = TrainMode::kStep;
  std::vector<TrainSample> samples;  // 1..kMaxTrainSamples
};
// The same frame built from samples already encoded by encode_train_sample (copied as they
// are: a caller that sends a sample several times encodes it once). Encode only; the
// worker decodes a TrainStepRequest. The spans must outlive the encoding.
struct EncodedTrainStepRequest {
  static constexpr MessageType kType = MessageType::kTrainStep;
  std::uint32_t session = 0;
  TrainMode mode = TrainMode::kStep;
  std::span<const std::span<const std::uint8_t>> samples;
};

struct TrainMetrics {
  std::int64_t step = 0;  // the step's index (0-based); -1 for an evaluation
  double policy_loss = 0, value_loss = 0, kl = 0, total_loss = 0;
  double accuracy = 0;    // weighted share of positions whose most likely legal move is the target's
  double lr = 0, grad_norm = 0, kl_weight = 0;  // 0 for an evaluation
  std::uint32_t positions = 0;
  bool operator==(const TrainMetrics&) const = default;
};
struct TrainStepReply {
  static constexpr MessageType kType = MessageType::kTrainStepReply;
  TrainMetrics metrics;
};

// TRAIN_SAVE flags.
inline constexpr std::uint8_t kTrainSaveWeights = 1;  // send the weights (network.h's safetensors file)
inline constexpr std::uint8_t kTrainSaveState = 2;    // send the checkpoint (Trainer::state)
inline constexpr std::uint8_t kTrainSaveClose = 4;    // close the session once answered

struct TrainSaveRequest {
  static constexpr MessageType kType = MessageType::kTrainSave;
  std::uint32_t session = 0;
  std::uint8_t flags = 0;  // kTrainSave* bits; others are refused
};
struct TrainSaveReply {
  static constexpr MessageType kType = MessageType::kTrainSaveReply;
  std::int64_t steps_done = 0;
  std::string weights;  // empty unless asked
  std::string state;    // empty unless asked
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
  double f64();
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
  void f64(double v);
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
void encode(Writer& w, const TrainStartRequest& m);
void encode(Writer& w, const TrainStartReply& m);
void encode(Writer& w, const TrainStepRequest& m);
void encode(Writer& w, const EncodedTrainStepRequest& m);
void encode(Writer& w, const TrainStepReply& m);
void encode(Writer& w, const TrainSaveRequest& m);
void encode(Writer& w, const TrainSaveReply& m);
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
void decode(Reader& r, TrainStartRequest& m);
void decode(Reader& r, TrainStartReply& m);
void decode(Reader& r, TrainStepRequest& m);
void decode(Reader& r, TrainStepReply& m);
void decode(Reader& r, TrainSaveRequest& m);
void decode(Reader& r, TrainSaveReply& m);
void decode(Reader& r, ErrorReply& m);

// One TrainSample (layout above). The encoder throws ProtocolError for a sample the decoder
// would refuse; the decoder's errors name the sample ("sample 12: ...") by `index`.
void encode_train_sample(Writer& w, const TrainSample& sample);
TrainSample decode_train_sample(Reader& r, std::size_t index);

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
