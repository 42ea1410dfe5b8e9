#include "worker/nn/trainer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <torch/torch.h>

#include "worker/nn/network.h"
#include "worker/nn/optimizer.h"
#include "link/safetensors.h"
#include "worker/nn/torch_compat.h"

namespace pgmate::worker::nn {
namespace {

const char* const kCheckpointKey = "pgmate_checkpoint";
const char* const kCheckpointVersion = "1";
const char* const kOptionsKey = "pgmate_train_options";
const char* const kStepKey = "pgmate_step";
const char* const kOptimizerStepKey = "pgmate_optimizer_step";
const char* const kKlWeightKey = "pgmate_kl_weight";
const char* const kReferenceKey = "pgmate_reference_checksum";
const char* const kNoReference = "none";
const char* const kNetworkPrefix = "network.";
const char* const kOptimizerPrefix = "optimizer.";

[[noreturn]] void bad_batch(const std::string& what) { throw std::invalid_argument("training batch: " + what); }
[[noreturn]] void bad_state(const std::string& what) { throw std::invalid_argument("training state: " + what); }

torch::Device parse_device(const std::string& name) {
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    int index = 0;
    if (name.size() > 5) {
      const std::string digits = name.substr(5);
      if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) {
        throw std::invalid_argument("trainer: bad device \"" + name + "\"");
      }
      index = std::stoi(digits);
    }
    if (!torch::cuda::is_available()) {
      throw std::runtime_error("trainer: device \"" + name + "\" requested but LibTorch has no CUDA device");
    }
    if (index >= static_cast<int>(torch::cuda::device_count())) {
      throw std::runtime_error("trainer: no CUDA device " + std::to_string(index));
    }
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw std::invalid_argument("trainer: unknown device \"" + name + "\" (expected cpu, cuda or cuda:N)");
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Dropout's seed for step k: a function of (seed, k) only, so a resumed run repeats it.
std::uint64_t step_seed(std::int64_t seed, std::int64_t step) {
  return splitmix64(static_cast<std::uint64_t>(seed) ^ splitmix64(static_cast<std::uint64_t>(step)));
}

std::string number_text(double v) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

std::vector<std::uint64_t> unsigned_shape(const torch::Tensor& t) {
  std::vector<std::uint64_t> out;
  for (auto d : t.sizes()) out.push_back(static_cast<std::uint64_t>(d));
  return out;
}

// The batch as tensors on the device. Legal slots are padded to the longest list:
// `legal` marks real entries; `softmax_mask` also admits column 0 of a position without
// legal slots, so that its softmax is finite (its target is all zero, so it adds nothing).
struct BatchTensors {
  torch::Tensor planes;        // [N, 72, 8, 8]
  torch::Tensor slots;         // [N, L] int64
  torch::Tensor legal;         // [N, L] bool
  torch::Tensor softmax_mask;  // [N, L] bool
  torch::Tensor target;        // [N, L]
  torch::Tensor legal_count;   // [N] float
  torch::Tensor has_legal;     // [N] bool
  torch::Tensor wdl;           // [N, 3]
  torch::Tensor weight;        // [N], normalised to sum 1
};

// Host arrays gathered into one byte buffer, each part 64-byte aligned so that it can be
// viewed as its own type (and vectorised kernels read it at full width).
class HostPack {
 public:
  template <class T>
  std::size_t add(const T* data, std::size_t count) {
    const std::size_t at = bytes_;
    parts_.push_back({reinterpret_cast<const char*>(data), count * sizeof(T), at});
    bytes_ = (at + count * sizeof(T) + 63) / 64 * 64;
    return at;
  }
  // Pinned, copied to the device without blocking (the host allocator keeps the pinned block
  // until the copy is done).
  torch::Tensor to(const torch::Device& device) const {
    torch::Tensor host = torch::empty({static_cast<std::int64_t>(bytes_)},
                                      torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(true));
    auto* base = static_cast<char*>(host.data_ptr());
    for (const Part& p : parts_)
      if (p.bytes) std::memcpy(base + p.at, p.data, p.bytes);
    return host.to(device, torch::kUInt8, /*non_blocking=*/true);
  }
  static torch::Tensor view(const torch::Tensor& packed, std::size_t at, torch::ScalarType type,
                            std::vector<std::int64_t> shape) {
    std::int64_t elements = 1;
    for (std::int64_t d : shape) elements *= d;
    const auto bytes = elements * static_cast<std::int64_t>(c10::elementSize(type));
    return packed.narrow(0, static_cast<std::int64_t>(at), bytes).view(type).view(shape);
  }

 private:
  struct Part {
    const char* data;
    std::size_t bytes, at;
  };
  std::vector<Part> parts_;
  std::size_t bytes_ = 0;
};

BatchTensors to_tensors(const TrainBatch& b, const torch::Device& device) {
  if (b.size <= 0) bad_batch("size " + std::to_string(b.size) + " (at least one position)");
  const auto n = static_cast<std::size_t>(b.size);
  if (b.planes.size() != n * kInputPlanes * kBoardSquares) {
    bad_batch("planes has " + std::to_string(b.planes.size()) + " floats, expected size x 72 x 64 = " +
              std::to_string(n * kInputPlanes * kBoardSquares));
  }
  if (b.legal_slots.size() != n) bad_batch("legal_slots has " + std::to_string(b.legal_slots.size()) + " lists, expected " + std::to_string(n));
  if (b.policy.size() != n) bad_batch("policy has " + std::to_string(b.policy.size()) + " lists, expected " + std::to_string(n));
  if (b.wdl.size() != n * kWdlSize) bad_batch("wdl has " + std::to_string(b.wdl.size()) + " floats, expected size x 3");
  if (!b.weight.empty() && b.weight.size() != n) {
    bad_batch("weight has " + std::to_string(b.weight.size()) + " values, expected " + std::to_string(n) + " or none");
  }
  std::size_t width = 1;
  for (std::size_t i = 0; i < n; ++i) width = std::max(width, b.legal_slots[i].size());
  std::vector<std::int64_t> slots(n * width, 0);
  std::vector<std::uint8_t> legal(n * width, 0), softmax_mask(n * width, 0), has_legal(n, 0);
  std::vector<float> target(n * width, 0.0f), count(n, 0.0f);
  std::vector<char> seen(kPolicySize, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& list = b.legal_slots[i];
    const auto& probs = b.policy[i];
    if (probs.size() != list.size()) {
      bad_batch("position " + std::to_string(i) + ": policy has " + std::to_string(probs.size()) +
                " values for " + std::to_string(list.size()) + " legal slots");
    }
    for (std::size_t k = 0; k < list.size(); ++k) {
      const int slot = list[k];
      if (slot < 0 || slot >= kPolicySize) bad_batch("position " + std::to_string(i) + ": slot " + std::to_string(slot) + " outside 0..4671");
      if (seen[static_cast<std::size_t>(slot)]) bad_batch("position " + std::to_string(i) + ": slot " + std::to_string(slot) + " repeated");
      seen[static_cast<std::size_t>(slot)] = 1;
      // NaN passes: the step refuses a non-finite loss, with the weights unchanged.
      if (probs[k] < 0) bad_batch("position " + std::to_string(i) + ": negative policy target");
      slots[i * width + k] = slot;
      legal[i * width + k] = softmax_mask[i * width + k] = 1;
      target[i * width + k] = probs[k];
    }
    for (int slot : list) seen[static_cast<std::size_t>(slot)] = 0;
    count[i] = static_cast<float>(list.size());
    has_legal[i] = !list.empty();
    if (list.empty()) softmax_mask[i * width] = 1;
  }
  std::vector<float> weight = b.weight.empty() ? std::vector<float>(n, 1.0f) : b.weight;
  double weight_sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (weight[i] < 0 || !std::isfinite(weight[i])) bad_batch("weight of position " + std::to_string(i) + " is not a finite value >= 0");
    weight_sum += weight[i];
  }
  if (!(weight_sum > 0)) bad_batch("the weights sum to 0");
  for (float& w : weight) w = static_cast<float>(w / weight_sum);

  const auto n64 = static_cast<std::int64_t>(n), w64 = static_cast<std::int64_t>(width);
  if (!device.is_cuda()) {
    // Tensors of their own: measured faster on the CPU than views into one buffer (about
    // 15% of a step of the shipped network in bf16).
    const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
    const auto u8 = torch::TensorOptions().dtype(torch::kUInt8);
    BatchTensors t;
    t.planes = torch::from_blob(const_cast<float*>(b.planes.data()), {n64, kInputPlanes, 8, 8}, f32).clone();
    t.slots = torch::from_blob(slots.data(), {n64, w64}, torch::TensorOptions().dtype(torch::kInt64)).clone();
    t.legal = torch::from_blob(legal.data(), {n64, w64}, u8).to(torch::kBool);
    t.softmax_mask = torch::from_blob(softmax_mask.data(), {n64, w64}, u8).to(torch::kBool);
    t.target = torch::from_blob(target.data(), {n64, w64}, f32).clone();
    t.legal_count = torch::from_blob(count.data(), {n64}, f32).clone();
    t.has_legal = torch::from_blob(has_legal.data(), {n64}, u8).to(torch::kBool);
    t.wdl = torch::from_blob(const_cast<float*>(b.wdl.data()), {n64, kWdlSize}, f32).clone();
    t.weight = torch::from_blob(weight.data(), {n64}, f32).clone();
    return t;
  }
  // On CUDA one pinned buffer and one asynchronous copy: a copy from pageable memory would
  // wait for the device to finish the previous step, once per tensor.
  HostPack pack;
  const std::size_t at_planes = pack.add(b.planes.data(), b.planes.size());
  const std::size_t at_slots = pack.add(slots.data(), slots.size());
  const std::size_t at_legal = pack.add(legal.data(), legal.size());
  const std::size_t at_mask = pack.add(softmax_mask.data(), softmax_mask.size());
  const std::size_t at_target = pack.add(target.data(), target.size());
  const std::size_t at_count = pack.add(count.data(), count.size());
  const std::size_t at_has_legal = pack.add(has_legal.data(), has_legal.size());
  const std::size_t at_wdl = pack.add(b.wdl.data(), b.wdl.size());
  const std::size_t at_weight = pack.add(weight.data(), weight.size());
  const torch::Tensor packed = pack.to(device);
  BatchTensors t;
  t.planes = HostPack::view(packed, at_planes, torch::kFloat32, {n64, kInputPlanes, 8, 8});
  t.slots = HostPack::view(packed, at_slots, torch::kInt64, {n64, w64});
  t.legal = HostPack::view(packed, at_legal, torch::kBool, {n64, w64});
  t.softmax_mask = HostPack::view(packed, at_mask, torch::kBool, {n64, w64});
  t.target = HostPack::view(packed, at_target, torch::kFloat32, {n64, w64});
  t.legal_count = HostPack::view(packed, at_count, torch::kFloat32, {n64});
  t.has_legal = HostPack::view(packed, at_has_legal, torch::kBool, {n64});
  t.wdl = HostPack::view(packed, at_wdl, torch::kFloat32, {n64, kWdlSize});
  t.weight = HostPack::view(packed, at_weight, torch::kFloat32, {n64});
  return t;
}

struct LossParts {
  torch::Tensor policy, value, kl, total;  // scalars
  torch::Tensor accuracy;                  // scalar
};

// log-softmax over the legal slots; 0 outside them (never -inf, so products stay finite).
torch::Tensor legal_log_softmax(const torch::Tensor& logits, const BatchTensors& b) {
  const auto legal_logits = logits.to(torch::kFloat32).gather(1, b.slots)
                                .masked_fill(b.softmax_mask.logical_not(), -std::numeric_limits<float>::infinity());
  return torch::log_softmax(legal_logits, 1).masked_fill(b.softmax_mask.logical_not(), 0.0);
}

// Scalars on the device, read back to the host in one copy (float64).
std::vector<double> read_values(const std::vector<torch::Tensor>& scalars) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (const torch::Tensor& t : scalars) parts.push_back(t.detach().to(torch::kFloat64).reshape({1}));
  const torch::Tensor host = torch::cat(parts).to(torch::kCPU).contiguous();
  const double* p = host.data_ptr<double>();
  return std::vector<double>(p, p + host.numel());
}

// A non-negative decimal of a checkpoint's metadata.
std::int64_t checkpoint_count(const std::string& text, const char* what) {
  std::int64_t value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || value < 0) {
    bad_state(std::string("bad ") + what + " \"" + text + "\"");
  }
  return value;
}

// A checkpoint (Trainer::state) taken apart and checked: its metadata, the network's tensors
// and the optimizer's. Points into the checkpoint's bytes, which must outlive it.
struct ParsedCheckpoint {
  SafetensorsView view;
  NetworkConfig config;
  TrainOptions options;
  std::int64_t step = 0, optimizer_step = 0;
  double kl_weight = 0;
  std::vector<SafetensorsInput> network;  // as a weights file's tensors (names without the prefix)
  std::unordered_map<std::string, const SafetensorsTensor*> optimizer;

  const std::string& meta(const char* key) const {
    const std::string* v = view.metadata_value(key);
    if (!v) bad_state(std::string("no \"") + key + "\" metadata");
    return *v;
  }
};

ParsedCheckpoint parse_checkpoint(const std::string& state) {
  ParsedCheckpoint c;
  try {
    c.view = parse_safetensors(state);
  } catch (const std::invalid_argument& e) {
    bad_state(e.what());
  }
  if (c.meta(kCheckpointKey) != kCheckpointVersion) {
    bad_state("unsupported " + std::string(kCheckpointKey) + " \"" + c.meta(kCheckpointKey) + "\"");
  }
  try {
    c.config = parse_network_config(c.meta(kWeightsConfigKey));
    c.options = parse_train_options(c.meta(kOptionsKey));
  } catch (const std::invalid_argument& e) {
    bad_state(e.what());
  }
  c.step = checkpoint_count(c.meta(kStepKey), "step");
  const std::string* optimizer_step = c.view.metadata_value(kOptimizerStepKey);
  c.optimizer_step = optimizer_step ? checkpoint_count(*optimizer_step, "optimizer step") : c.step;
  {
    const std::string& text = c.meta(kKlWeightKey);
    const auto r = std::from_chars(text.data(), text.data() + text.size(), c.kl_weight);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(c.kl_weight) || c.kl_weight < 0) {
      bad_state("bad kl weight \"" + text + "\"");
    }
  }
  const std::string network_prefix = kNetworkPrefix, optimizer_prefix = kOptimizerPrefix;
  for (const SafetensorsTensor& t : c.view.tensors) {
    if (t.name.rfind(network_prefix, 0) == 0) {
      c.network.push_back({t.name.substr(network_prefix.size()), t.dtype, t.shape, c.view.bytes(t)});
    } else if (t.name.rfind(optimizer_prefix, 0) == 0) {
      c.optimizer.emplace(t.name, &t);
    } else {
      bad_state("unexpected tensor \"" + t.name + "\"");
    }
  }
  return c;
}

}  // namespace

struct Trainer::Impl {
  NetworkConfig config;
  TrainOptions options;
  torch::Device device{torch::kCPU};
  Network network{nullptr};
  Network reference{nullptr};
  std::string reference_checksum = kNoReference;
  std::vector<std::pair<std::string, torch::Tensor>> parameters;
  OptimizerState optimizer;  // the same parameters, in the same order, and their buffers
  std::int64_t step = 0;
  std::int64_t optimizer_step = 0;  // AdamW's bias correction; above step when taken from another run
  double kl_weight = 0;
  at::Generator generator;
  bool autocast = false;

  Impl(const NetworkConfig& c, Network net, const std::optional<std::string>& reference_weights,
       const TrainOptions& o, const std::string& device_name)
      : config(c), options(o), device(parse_device(device_name)), network(std::move(net)), kl_weight(o.kl_weight) {
    validate_train_options(options);
    // bf16 autocast: asked for, or by default on CUDA (the CPU trains in fp32 unless asked).
    autocast = options.precision == "bf16" || (device.is_cuda() && options.precision == "auto");
    if (options.kl_weight > 0 && !reference_weights) {
      throw std::invalid_argument("train options: \"kl_weight\": " + number_text(options.kl_weight) +
                                  " needs reference weights");
    }
    if (reference_weights) {
      reference = load_network(config, *reference_weights);  // checks the configuration
      const SafetensorsView view = parse_safetensors(*reference_weights);
      reference_checksum = *view.metadata_value(kWeightsChecksumKey);  // load_network required it
      reference->to(device);
      reference->eval();
      for (auto& p : reference->parameters()) p.set_requires_grad(false);
    }
    network->to(device);
    network->train();
    network->set_head_dropout(options.dropout);
    generator = torch_compat::make_generator(device, step_seed(options.seed, 0));
    network->set_dropout_generator(generator);
    for (const auto& item : network->named_parameters(/*recurse=*/true)) {
      parameters.emplace_back(item.key(), item.value());
      // Weight decay shrinks weights, not the gains and biases of normalisation layers and
      // heads (one dimension) nor the attention's positional embedding.
      optimizer.parameters.push_back(item.value());
      optimizer.decayed.push_back(item.value().dim() > 1 && item.key().find("position") == std::string::npos);
      optimizer.first_moment.push_back(torch::zeros_like(item.value()));
      if (options.optimizer == "adamw") optimizer.second_moment.push_back(torch::zeros_like(item.value()));
    }
  }

  // training: the step's losses (label smoothing). with_kl: the KL to the reference, which
  // only training uses (a held-out measurement makes no reference pass unless asked).
  LossParts losses(const BatchTensors& b, bool training, bool with_kl) {
    NetworkOutput out;
    torch::Tensor reference_log_p;
    const bool with_reference = reference && with_kl;
    {
      torch_compat::CudaAutocastScope cuda_autocast(autocast && device.is_cuda());
      torch_compat::CpuAutocastScope cpu_autocast(autocast && !device.is_cuda());
      out = network->forward(b.planes);
      if (with_reference) {
        torch::NoGradGuard no_grad;
        reference_log_p = legal_log_softmax(reference->forward(b.planes).policy, b);
      }
    }
    const torch::Tensor log_p = legal_log_softmax(out.policy, b);
    torch::Tensor target = b.target;
    if (training && options.label_smoothing > 0) {
      const double eps = options.label_smoothing;
      const auto uniform = b.legal.to(torch::kFloat32) / b.legal_count.clamp_min(1).unsqueeze(1);
      target = target * (1 - eps) + uniform * eps;
    }
    LossParts parts;
    parts.policy = (-(target * log_p).sum(1) * b.weight).sum();
    const auto wdl_log_p = torch::log_softmax(out.wdl.to(torch::kFloat32), 1);
    parts.value = (-(b.wdl * wdl_log_p).sum(1) * b.weight).sum();
    if (with_reference) {
      parts.kl = ((log_p.exp() * (log_p - reference_log_p)).sum(1) * b.weight).sum();
    } else {
      parts.kl = torch::zeros({}, log_p.options());
    }
    const double kl_w = with_reference ? kl_weight : 0.0;
    parts.total = parts.policy + options.value_weight * parts.value + kl_w * parts.kl;

    torch::NoGradGuard no_grad;
    const auto not_legal = b.legal.logical_not();
    const auto predicted = log_p.detach().masked_fill(not_legal, -std::numeric_limits<float>::infinity()).argmax(1);
    const auto wanted = b.target.masked_fill(not_legal, -1.0f).argmax(1);
    const auto counted = b.weight * b.has_legal.to(torch::kFloat32);
    const auto correct = (predicted == wanted).to(torch::kFloat32) * counted;
    const auto denominator = counted.sum();
    parts.accuracy = torch::where(denominator > 0, correct.sum() / denominator.clamp_min(1e-30),
                                  torch::zeros_like(denominator));
    return parts;
  }

  void clear_gradients() {
    for (auto& [name, p] : parameters) p.mutable_grad() = torch::Tensor();
  }

  StepMetrics train_step(const TrainBatch& batch) {
    torch_compat::StreamScope stream(device);
    const BatchTensors b = to_tensors(batch, device);
    network->train();
    generator.set_current_seed(step_seed(options.seed, step));
    clear_gradients();
    const LossParts parts = losses(b, /*training=*/true, /*with_kl=*/true);
    parts.total.backward();
    std::vector<torch::Tensor> gradients;
    for (auto& [name, p] : parameters) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);  // unused by this batch
      gradients.push_back(p.grad());
    }

    // The step's one read from the device: the losses, the accuracy and the gradients' norm
    // together (each read would wait for the device, which then idles while the host queues
    // the next kernels). A non-finite loss or gradient still leaves the weights unchanged.
    const std::vector<double> read = read_values({parts.policy, parts.value, parts.kl, parts.total,
                                                  parts.accuracy, squared_norm(gradients)});
    StepMetrics m;
    m.step = step;
    m.positions = batch.size;
    m.policy_loss = read[0];
    m.value_loss = read[1];
    m.kl = read[2];
    m.total_loss = read[3];
    m.accuracy = read[4];
    m.grad_norm = std::sqrt(read[5]);
    m.kl_weight = reference ? kl_weight : 0.0;
    m.lr = scheduled_lr(options, step);
    if (!std::isfinite(m.total_loss)) {
      clear_gradients();
      throw std::runtime_error("training step " + std::to_string(step) + ": the loss is not finite (policy " +
                               number_text(m.policy_loss) + ", value " + number_text(m.value_loss) + ", kl " +
                               number_text(m.kl) + "); the weights are unchanged");
    }
    if (!std::isfinite(m.grad_norm)) {
      clear_gradients();
      throw std::runtime_error("training step " + std::to_string(step) +
                               ": the gradients are not finite; the weights are unchanged");
    }
    if (options.grad_clip > 0 && m.grad_norm > options.grad_clip) {
      torch::NoGradGuard no_grad;
      at::_foreach_mul_(gradients, options.grad_clip / (m.grad_norm + 1e-6));  // clip_grad_norm_'s rule
    }
    apply_update(options, m.lr, optimizer_step, optimizer, gradients);
    clear_gradients();
    ++step;
    ++optimizer_step;
    if (reference && options.kl_target > 0) {
      if (m.kl > options.kl_target * options.kl_factor) {
        kl_weight = std::min(kl_weight * options.kl_factor, options.kl_weight_max);
      } else if (m.kl < options.kl_target / options.kl_factor) {
        kl_weight = std::max(kl_weight / options.kl_factor, options.kl_weight);
      }
    }
    return m;
  }

  EvalMetrics evaluate(const TrainBatch& batch, bool with_kl) {
    torch_compat::StreamScope stream(device);
    const BatchTensors b = to_tensors(batch, device);
    torch::NoGradGuard no_grad;
    network->eval();
    LossParts parts;
    try {
      parts = losses(b, /*training=*/false, with_kl);
    } catch (...) {
      network->train();
      throw;
    }
    network->train();
    const std::vector<double> read = read_values({parts.policy, parts.value, parts.kl, parts.total, parts.accuracy});
    EvalMetrics m;
    m.policy_loss = read[0];
    m.value_loss = read[1];
    m.kl = read[2];
    m.total_loss = read[3];
    m.accuracy = read[4];
    m.kl_weight = reference ? kl_weight : 0.0;
    m.positions = batch.size;
    return m;
  }

  // The optimizer's buffers of a checkpoint: exactly one per parameter and kind, of its
  // shape, finite. All are read before any is replaced, so a bad one changes nothing.
  void load_optimizer(const ParsedCheckpoint& c) {
    if (c.options.optimizer != options.optimizer) {
      bad_state("saved with optimizer \"" + c.options.optimizer + "\", used with \"" + options.optimizer + "\"");
    }
    std::unordered_map<std::string, const SafetensorsTensor*> left = c.optimizer;
    const auto read = [&](const char* suffix) {
      std::vector<torch::Tensor> buffers;
      for (const auto& [parameter, p] : parameters) {
        const std::string name = kOptimizerPrefix + parameter + suffix;
        const auto it = left.find(name);
        if (it == left.end()) bad_state("missing tensor \"" + name + "\"");
        const SafetensorsTensor& t = *it->second;
        if (t.dtype != "F32" || t.shape != unsigned_shape(p)) {
          bad_state("tensor \"" + name + "\" is not F32 of its parameter's shape");
        }
        const std::string_view data = c.view.bytes(t);
        torch::Tensor cpu = torch::empty(p.sizes(), torch::kFloat32);
        std::memcpy(cpu.data_ptr(), data.data(), data.size());
        if (!torch::isfinite(cpu).all().item<bool>()) bad_state("tensor \"" + name + "\" holds NaN or infinity");
        buffers.push_back(cpu.to(device));
        left.erase(it);
      }
      return buffers;
    };
    std::vector<torch::Tensor> first, second;
    if (options.optimizer == "sgd") {
      first = read(".momentum");
    } else {
      first = read(".exp_avg");
      second = read(".exp_avg_sq");
    }
    if (!left.empty()) bad_state("unexpected tensor \"" + left.begin()->first + "\"");
    optimizer.first_moment = std::move(first);
    optimizer.second_moment = std::move(second);
    optimizer_step = c.optimizer_step;
  }

  std::string state() const {
    const std::string weights = save_network(network);
    const SafetensorsView view = parse_safetensors(weights);
    SafetensorsMetadata metadata;
    for (const char* key : {kWeightsFormatKey, kWeightsConfigKey, kWeightsChecksumKey}) {
      metadata.emplace_back(key, *view.metadata_value(key));
    }
    metadata.emplace_back(kCheckpointKey, kCheckpointVersion);
    metadata.emplace_back(kOptionsKey, to_json(options));
    metadata.emplace_back(kStepKey, std::to_string(step));
    metadata.emplace_back(kOptimizerStepKey, std::to_string(optimizer_step));
    metadata.emplace_back(kKlWeightKey, number_text(kl_weight));
    metadata.emplace_back(kReferenceKey, reference_checksum);

    std::vector<SafetensorsInput> inputs;
    for (const SafetensorsTensor& t : view.tensors) {
      inputs.push_back({kNetworkPrefix + t.name, t.dtype, t.shape, view.bytes(t)});
    }
    std::vector<torch::Tensor> keep;
    const auto add_buffers = [&](const std::vector<torch::Tensor>& buffers, const char* suffix) {
      for (std::size_t i = 0; i < buffers.size(); ++i) {
        keep.push_back(buffers[i].detach().to(torch::kCPU, torch::kFloat32).contiguous());
        const torch::Tensor& c = keep.back();
        inputs.push_back({kOptimizerPrefix + parameters[i].first + suffix, "F32", unsigned_shape(c),
                          std::string_view(static_cast<const char*>(c.data_ptr()), c.nbytes())});
      }
    };
    if (options.optimizer == "sgd") {
      add_buffers(optimizer.first_moment, ".momentum");
    } else {
      add_buffers(optimizer.first_moment, ".exp_avg");
      add_buffers(optimizer.second_moment, ".exp_avg_sq");
    }
    return write_safetensors(metadata, inputs);
  }
};

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Trainer::Trainer(const std::string& config_json, const std::string& weights,
                 const std::optional<std::string>& reference_weights, const TrainOptions& options,
                 const std::string& device) {
  const NetworkConfig config = parse_network_config(config_json);
  impl_ = std::make_unique<Impl>(config, load_network(config, weights), reference_weights, options, device);
}

Trainer Trainer::resume(const std::string& state, const std::optional<std::string>& reference_weights,
                        const std::string& device, const std::optional<TrainOptions>& options) {
  const ParsedCheckpoint c = parse_checkpoint(state);
  const TrainOptions chosen = options.value_or(c.options);
  if (chosen.optimizer != c.options.optimizer) {
    bad_state("saved with optimizer \"" + c.options.optimizer + "\", resumed with \"" + chosen.optimizer + "\"");
  }
  std::string given_reference = kNoReference;
  if (reference_weights) {
    try {
      const SafetensorsView view = parse_safetensors(*reference_weights);
      if (const std::string* checksum = view.metadata_value(kWeightsChecksumKey)) given_reference = *checksum;
    } catch (const std::invalid_argument&) {
      // load_network names the problem below.
    }
  }
  if (given_reference != c.meta(kReferenceKey)) {
    bad_state("trained against reference weights " + c.meta(kReferenceKey) + ", resumed with " + given_reference);
  }

  // The weights: the network.* tensors as a weights file, checked by load_network.
  SafetensorsMetadata weights_metadata;
  for (const char* key : {kWeightsFormatKey, kWeightsConfigKey, kWeightsChecksumKey}) {
    weights_metadata.emplace_back(key, c.meta(key));
  }
  Network network{nullptr};
  try {
    network = load_network(c.config, write_safetensors(weights_metadata, c.network));
  } catch (const std::invalid_argument& e) {
    bad_state(e.what());
  }

  auto impl = std::make_unique<Impl>(c.config, std::move(network), reference_weights, chosen, device);
  impl->step = c.step;
  impl->kl_weight = c.kl_weight;
  impl->load_optimizer(c);
  return Trainer(std::move(impl));
}

void Trainer::take_optimizer(const std::string& state) {
  const ParsedCheckpoint c = parse_checkpoint(state);
  if (!(c.config == impl_->config)) {
    bad_state("the optimizer was trained with a network of another configuration (" +
              c.meta(kWeightsConfigKey) + ")");
  }
  impl_->load_optimizer(c);
}

Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;
Trainer::~Trainer() = default;

StepMetrics Trainer::step(const TrainBatch& batch) { return impl_->train_step(batch); }
EvalMetrics Trainer::evaluate(const TrainBatch& batch, bool with_kl) { return impl_->evaluate(batch, with_kl); }
std::string Trainer::weights() const { return save_network(impl_->network); }
std::string Trainer::state() const { return impl_->state(); }
std::int64_t Trainer::steps_done() const { return impl_->step; }
std::int64_t Trainer::optimizer_steps() const { return impl_->optimizer_step; }
double Trainer::kl_weight() const { return impl_->kl_weight; }
const TrainOptions& Trainer::options() const { return impl_->options; }
const NetworkConfig& Trainer::config() const { return impl_->config; }
std::string Trainer::device() const { return impl_->device.str(); }

}  // namespace pgmate::worker::nn
