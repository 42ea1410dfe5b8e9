// make_torch_train_backend: the TrainBackend that serves TRAIN_* requests, each session an
// nn::Trainer (trainer.h) on the backend's device.
//
// Device: "cpu"; "cuda" / "cuda:N" (std::runtime_error when LibTorch has no CUDA or no such
// device); "auto" (cuda:0 when torch::cuda::is_available(), else cpu); anything else throws
// std::invalid_argument.
//
// Errors: the trainer's std::invalid_argument (bad configuration, weights, options, state
// or batch) passes as it is; a LibTorch error becomes a std::runtime_error with its message
// without the backtrace; on CUDA, an error that leaves the context dead becomes DeviceLost,
// as for evaluation (torch_backend.cpp).
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <torch/torch.h>

#include "worker/nn/torch_compat.h"
#include "link/train_options.h"
#include "worker/nn/trainer.h"
#include "worker/backend/train_backend.h"

namespace pgmate::worker {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// "cpu" or "cuda:N", checked against this LibTorch and machine.
std::string resolve_device(const std::string& name) {
  if (name == "cpu") return name;
  if (name == "auto") return torch::cuda::is_available() ? "cuda:0" : "cpu";
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    int index = 0;
    if (name.size() > 5) {
      const std::string digits = name.substr(5);
      if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument("torch train backend: bad device \"" + name + "\"");
      index = std::stoi(digits);
    }
    if (!torch::cuda::is_available())
      throw std::runtime_error("torch train backend: device \"" + name +
                               "\" requested but LibTorch has no CUDA device (this build or machine is CPU-only)");
    if (index >= static_cast<int>(torch::cuda::device_count()))
      throw std::runtime_error("torch train backend: no CUDA device " + std::to_string(index));
    return "cuda:" + std::to_string(index);
  }
  throw std::invalid_argument("torch train backend: unknown device \"" + name +
                              "\" (expected cpu, cuda, cuda:N or auto)");
}

// Runs f, translating LibTorch's errors (see the top of the file).
template <class F>
auto translated(bool cuda, F&& f) -> decltype(f()) {
  const auto check_device = [cuda](const std::string& message) {
    std::string cause;
    if (cuda && torch_compat::cuda_context_lost(&cause)) throw DeviceLost(cause + " (" + first_line(message) + ")");
  };
  try {
    return f();
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const c10::Error& e) {
    check_device(e.what());
    throw std::runtime_error(first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    check_device(e.what());
    throw;
  }
}

class TorchTrainSession final : public TrainSession {
 public:
  TorchTrainSession(nn::Trainer trainer, bool cuda) : trainer_(std::move(trainer)), cuda_(cuda) {}

  nn::StepMetrics step(const nn::TrainBatch& batch) override {
    return translated(cuda_, [&] { return trainer_.step(batch); });
  }
  nn::EvalMetrics evaluate(const nn::TrainBatch& batch) override {
    return translated(cuda_, [&] { return trainer_.evaluate(batch); });
  }
  std::string weights() const override {
    return translated(cuda_, [&] { return trainer_.weights(); });
  }
  std::string state() const override {
    return translated(cuda_, [&] { return trainer_.state(); });
  }
  std::int64_t steps_done() const override { return trainer_.steps_done(); }
  std::string device() const override { return trainer_.device(); }

 private:
  nn::Trainer trainer_;
  const bool cuda_;
};

class TorchTrainBackend final : public TrainBackend {
 public:
  explicit TorchTrainBackend(std::string device) : device_(std::move(device)), cuda_(device_ != "cpu") {}

  std::string device() const override { return device_; }

  std::unique_ptr<TrainSession> start(const std::string& config_json, const std::string& weights,
                                      const std::optional<std::string>& reference_weights,
                                      const std::string& options_json,
                                      const std::optional<std::string>& state,
                                      const std::optional<std::string>& optimizer) override {
    // Resuming with no options keeps the saved ones.
    std::optional<nn::TrainOptions> options;
    if (!state || !options_json.empty()) options = nn::parse_train_options(options_json);
    return translated(cuda_, [&] {
      nn::Trainer trainer = state ? nn::Trainer::resume(*state, reference_weights, device_, options)
                                  : nn::Trainer(config_json, weights, reference_weights, *options, device_);
      if (!state && optimizer) trainer.take_optimizer(*optimizer);
      return std::make_unique<TorchTrainSession>(std::move(trainer), cuda_);
    });
  }

 private:
  const std::string device_;
  const bool cuda_;
};

}  // namespace

std::unique_ptr<TrainBackend> make_torch_train_backend(const std::string& device) {
  return std::make_unique<TorchTrainBackend>(resolve_device(device));
}

}  // namespace pgmate::worker
