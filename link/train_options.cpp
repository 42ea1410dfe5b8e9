#include "link/train_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <stdexcept>

#include "common/flat_json.h"

namespace pgmate::worker::nn {
namespace {

const char* const kWhat = "train options";

[[noreturn]] void fail(const std::string& key, const std::string& problem) {
  throw std::invalid_argument(std::string(kWhat) + ": \"" + key + "\": " + problem);
}

std::string number_text(double v) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);  // shortest exact form
  return std::string(buffer, result.ptr);
}

double number(const FlatJsonField& f) {
  if (f.quoted || f.value == "true" || f.value == "false" || f.value == "null") {
    fail(f.key, "expected a number, got " + (f.quoted ? "the string \"" + f.value + "\"" : f.value));
  }
  char* end = nullptr;
  const double v = std::strtod(f.value.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) fail(f.key, "expected a finite number, got " + f.value);
  return v;
}

bool boolean(const FlatJsonField& f) {
  if (f.quoted || (f.value != "true" && f.value != "false")) fail(f.key, "expected true or false, got " + f.value);
  return f.value == "true";
}

std::string choice(const FlatJsonField& f, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (f.quoted && f.value == a) return f.value;
    list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
  }
  fail(f.key, "expected one of " + list + ", got " + (f.quoted ? "\"" + f.value + "\"" : f.value));
}

void check(bool ok, const char* key, double v, const std::string& rule) {
  if (!ok) fail(key, number_text(v) + " is out of range (" + rule + ")");
}

}  // namespace

void validate_train_options(const TrainOptions& o) {
  if (o.optimizer != "sgd" && o.optimizer != "adamw") fail("optimizer", "expected \"sgd\" or \"adamw\"");
  check(o.lr > 0 && o.lr <= 10, "lr", o.lr, "0 < lr <= 10");
  check(o.momentum >= 0 && o.momentum < 1, "momentum", o.momentum, "0 <= momentum < 1");
  if (o.nesterov && o.momentum == 0) fail("nesterov", "needs momentum > 0");
  check(o.beta1 >= 0 && o.beta1 < 1, "beta1", o.beta1, "0 <= beta1 < 1");
  check(o.beta2 >= 0 && o.beta2 < 1, "beta2", o.beta2, "0 <= beta2 < 1");
  check(o.eps > 0 && o.eps <= 1, "eps", o.eps, "0 < eps <= 1");
  check(o.weight_decay >= 0 && o.weight_decay <= 1, "weight_decay", o.weight_decay, "0..1");
  if (o.schedule != "constant" && o.schedule != "cosine" && o.schedule != "step") {
    fail("schedule", "expected \"constant\", \"cosine\" or \"step\"");
  }
  check(o.warmup_steps >= 0, "warmup_steps", double(o.warmup_steps), ">= 0");
  check(o.total_steps >= 0, "total_steps", double(o.total_steps), ">= 0");
  if (o.schedule == "cosine" && o.total_steps <= o.warmup_steps) {
    fail("total_steps", std::to_string(o.total_steps) + ": the cosine schedule needs total_steps > warmup_steps (" +
                            std::to_string(o.warmup_steps) + ")");
  }
  check(o.lr_min >= 0 && o.lr_min <= o.lr, "lr_min", o.lr_min, "0 <= lr_min <= lr");
  check(o.step_size >= 1, "step_size", double(o.step_size), ">= 1");
  check(o.gamma > 0 && o.gamma <= 1, "gamma", o.gamma, "0 < gamma <= 1");
  check(o.grad_clip >= 0, "grad_clip", o.grad_clip, ">= 0, 0 is off");
  check(o.label_smoothing >= 0 && o.label_smoothing < 1, "label_smoothing", o.label_smoothing, "0 <= eps < 1");
  check(o.value_weight >= 0 && o.value_weight <= 1000, "value_weight", o.value_weight, "0..1000");
  check(o.kl_weight >= 0 && o.kl_weight <= 1000, "kl_weight", o.kl_weight, "0..1000");
  check(o.kl_target >= 0, "kl_target", o.kl_target, ">= 0, 0 keeps kl_weight fixed");
  check(o.kl_factor > 1 && o.kl_factor <= 100, "kl_factor", o.kl_factor, "1 < kl_factor <= 100");
  check(o.kl_weight_max >= o.kl_weight && o.kl_weight_max <= 1000, "kl_weight_max", o.kl_weight_max,
        "kl_weight..1000");
  check(o.dropout >= 0 && o.dropout < 1, "dropout", o.dropout, "0 <= dropout < 1");
  if (o.precision != "auto" && o.precision != "fp32" && o.precision != "bf16") {
    fail("precision", "expected \"auto\", \"fp32\" or \"bf16\"");
  }
  check(o.seed >= 0, "seed", double(o.seed), ">= 0");
}

TrainOptions parse_train_options(const std::string& json) {
  TrainOptions o;
  for (const FlatJsonField& f : parse_flat_json(json, kWhat)) {
    const std::string& k = f.key;
    const auto integer = [&](std::int64_t lo) { return flat_json_int(f, lo, std::int64_t{1} << 53, kWhat); };
    if (k == "optimizer") o.optimizer = choice(f, {"sgd", "adamw"});
    else if (k == "lr") o.lr = number(f);
    else if (k == "momentum") o.momentum = number(f);
    else if (k == "nesterov") o.nesterov = boolean(f);
    else if (k == "beta1") o.beta1 = number(f);
    else if (k == "beta2") o.beta2 = number(f);
    else if (k == "eps") o.eps = number(f);
    else if (k == "weight_decay") o.weight_decay = number(f);
    else if (k == "schedule") o.schedule = choice(f, {"constant", "cosine", "step"});
    else if (k == "warmup_steps") o.warmup_steps = integer(0);
    else if (k == "total_steps") o.total_steps = integer(0);
    else if (k == "lr_min") o.lr_min = number(f);
    else if (k == "step_size") o.step_size = integer(1);
    else if (k == "gamma") o.gamma = number(f);
    else if (k == "grad_clip") o.grad_clip = number(f);
    else if (k == "label_smoothing") o.label_smoothing = number(f);
    else if (k == "value_weight") o.value_weight = number(f);
    else if (k == "kl_weight") o.kl_weight = number(f);
    else if (k == "kl_target") o.kl_target = number(f);
    else if (k == "kl_factor") o.kl_factor = number(f);
    else if (k == "kl_weight_max") o.kl_weight_max = number(f);
    else if (k == "dropout") o.dropout = number(f);
    else if (k == "precision") o.precision = choice(f, {"auto", "fp32", "bf16"});
    else if (k == "seed") o.seed = integer(0);
    else {
      throw std::invalid_argument(std::string(kWhat) + ": unknown key \"" + k +
                                  "\" (known: optimizer, lr, momentum, nesterov, beta1, beta2, eps, weight_decay, "
                                  "schedule, warmup_steps, total_steps, lr_min, step_size, gamma, grad_clip, "
                                  "label_smoothing, value_weight, kl_weight, kl_target, kl_factor, kl_weight_max, "
                                  "dropout, precision, seed)");
    }
  }
  validate_train_options(o);
  return o;
}

std::string to_json(const TrainOptions& o) {
  const auto str = [](const std::string& s) { return "\"" + s + "\""; };
  return "{\"optimizer\":" + str(o.optimizer) + ",\"lr\":" + number_text(o.lr) +
         ",\"momentum\":" + number_text(o.momentum) + ",\"nesterov\":" + (o.nesterov ? "true" : "false") +
         ",\"beta1\":" + number_text(o.beta1) + ",\"beta2\":" + number_text(o.beta2) + ",\"eps\":" + number_text(o.eps) +
         ",\"weight_decay\":" + number_text(o.weight_decay) + ",\"schedule\":" + str(o.schedule) +
         ",\"warmup_steps\":" + std::to_string(o.warmup_steps) + ",\"total_steps\":" + std::to_string(o.total_steps) +
         ",\"lr_min\":" + number_text(o.lr_min) + ",\"step_size\":" + std::to_string(o.step_size) +
         ",\"gamma\":" + number_text(o.gamma) + ",\"grad_clip\":" + number_text(o.grad_clip) +
         ",\"label_smoothing\":" + number_text(o.label_smoothing) + ",\"value_weight\":" + number_text(o.value_weight) +
         ",\"kl_weight\":" + number_text(o.kl_weight) + ",\"kl_target\":" + number_text(o.kl_target) +
         ",\"kl_factor\":" + number_text(o.kl_factor) + ",\"kl_weight_max\":" + number_text(o.kl_weight_max) +
         ",\"dropout\":" + number_text(o.dropout) + ",\"precision\":" + str(o.precision) +
         ",\"seed\":" + std::to_string(o.seed) + "}";
}

double scheduled_lr(const TrainOptions& o, std::int64_t step) {
  if (step < o.warmup_steps) return o.lr * double(step + 1) / double(o.warmup_steps);
  const std::int64_t t = step - o.warmup_steps;
  if (o.schedule == "cosine") {
    const double span = double(o.total_steps - o.warmup_steps);
    const double progress = std::min(double(t), span) / span;
    return o.lr_min + (o.lr - o.lr_min) * 0.5 * (1 + std::cos(std::numbers::pi * progress));
  }
  if (o.schedule == "step") return o.lr * std::pow(o.gamma, double(t / o.step_size));
  return o.lr;
}

}  // namespace pgmate::worker::nn
