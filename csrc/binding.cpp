// cockpit_attn Python binding: the only torch translation unit of the extension.
// It validates the tensors, fills the plain AttnParams and calls the launcher in attention.cu
// on torch's current CUDA stream. Building this file takes ~50 s (torch headers); it rarely
// changes, so kernel edits (attention.cu) recompile alone in seconds.

#include <torch/extension.h>

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attention.h"

namespace {

// Error messages are built from strings only. On the lent H200 image (torch 2.11+cu130), a
// TORCH_CHECK whose message streams an integer (an int64_t, or sizes()/strides()) from this
// extension segfaulted inside std::ostream's number formatting, while string, ScalarType and
// Device messages worked; std::to_string does not go through the stream's locale facets.
std::string dims(c10::IntArrayRef a) {
  std::string s = "[";
  for (size_t i = 0; i < a.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(a[i]);
  }
  return s + "]";
}

const char* dtype_name(const torch::Tensor& t) { return c10::toString(t.scalar_type()); }

cockpit_attn::Strides strides_of(const torch::Tensor& t) {
  return cockpit_attn::Strides{t.stride(0), t.stride(1), t.stride(2)};
}

void check_tensor(const torch::Tensor& t, const char* name) {
  TORCH_CHECK(t.defined(), "cockpit_attn.forward: ", name, " is undefined");
  TORCH_CHECK(t.is_cuda(), "cockpit_attn.forward: ", name, " must be a CUDA tensor, got device ",
              t.device().str());
  TORCH_CHECK(t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16,
              "cockpit_attn.forward: ", name, " must be float16 or bfloat16, got ", dtype_name(t));
  TORCH_CHECK(t.dim() == 4, "cockpit_attn.forward: ", name,
              " must be rank 4 (batch, heads, seqlen, head_dim), got shape ", dims(t.sizes()));
  TORCH_CHECK(t.is_contiguous(), "cockpit_attn.forward: ", name,
              " must be contiguous (call .contiguous() first), got strides ", dims(t.strides()),
              " for shape ", dims(t.sizes()));
  TORCH_CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0, "cockpit_attn.forward: ",
              name, " must be 16-byte aligned (a view with an odd storage offset?)");
}

// Checks q, k, v and returns the softmax scale to use.
double validate(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                const std::optional<double>& scale) {
  check_tensor(q, "q");
  check_tensor(k, "k");
  check_tensor(v, "v");
  TORCH_CHECK(k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type(),
              "cockpit_attn.forward: q, k and v must share a dtype, got ", dtype_name(q), ", ",
              dtype_name(k), ", ", dtype_name(v));
  TORCH_CHECK(k.device() == q.device() && v.device() == q.device(),
              "cockpit_attn.forward: q, k and v must be on the same device, got ",
              q.device().str(), ", ", k.device().str(), ", ", v.device().str());
  TORCH_CHECK(k.sizes() == q.sizes() && v.sizes() == q.sizes(),
              "cockpit_attn.forward: q, k and v must have the same shape (self-attention, "
              "Sq == Sk), got ",
              dims(q.sizes()), ", ", dims(k.sizes()), ", ", dims(v.sizes()));
  const int64_t head_dim = q.size(3);
  TORCH_CHECK(head_dim == 64 || head_dim == 128,
              "cockpit_attn.forward: head_dim must be 64 or 128, got ", std::to_string(head_dim));
  TORCH_CHECK(q.size(0) <= 65535 && q.size(1) <= 65535 && q.size(2) <= INT32_MAX,
              "cockpit_attn.forward: shape too large (batch and heads <= 65535, seqlen < 2^31), "
              "got ",
              dims(q.sizes()));
  const double softmax_scale =
      scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
  TORCH_CHECK(std::isfinite(softmax_scale), "cockpit_attn.forward: scale must be finite, got ",
              std::to_string(softmax_scale));
  return softmax_scale;
}

torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                      bool causal, std::optional<double> scale,
                      std::optional<torch::Tensor> out) {
  const double softmax_scale = validate(q, k, v, scale);
  const int64_t head_dim = q.size(3);

  const c10::cuda::CUDAGuard device_guard(q.device());
  // `out` lets a caller hand in its own buffer, e.g. one filled with NaN so that any element
  // the kernel fails to write shows up (the correctness gate does this).
  torch::Tensor o;
  if (out.has_value()) {
    o = *out;
    check_tensor(o, "out");
    TORCH_CHECK(o.scalar_type() == q.scalar_type() && o.device() == q.device() &&
                    o.sizes() == q.sizes(),
                "cockpit_attn.forward: out must match q in dtype, device and shape");
  } else {
    o = torch::empty_like(q, q.options().memory_format(at::MemoryFormat::Contiguous));
  }
  if (o.numel() == 0) return o;

  cockpit_attn::AttnParams p;
  p.q = q.data_ptr();
  p.k = k.data_ptr();
  p.v = v.data_ptr();
  p.o = o.data_ptr();
  p.q_stride = strides_of(q);
  p.k_stride = strides_of(k);
  p.v_stride = strides_of(v);
  p.o_stride = strides_of(o);
  p.batch = static_cast<int>(q.size(0));
  p.heads = static_cast<int>(q.size(1));
  p.seqlen = static_cast<int>(q.size(2));
  p.head_dim = static_cast<int>(head_dim);
  p.scale = static_cast<float>(softmax_scale);
  p.causal = causal;
  p.dtype = q.scalar_type() == at::kBFloat16 ? cockpit_attn::DType::kBFloat16
                                             : cockpit_attn::DType::kFloat16;

  const cudaError_t err =
      cockpit_attn::attention_forward(p, at::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(err == cudaSuccess, "cockpit_attn.forward: kernel launch failed: ",
              cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
  return o;
}

// Every kernel as the launcher launches it, and what the CUDA runtime says about it on the
// current device: the build gate's import check reads this (ptxas cannot see launch configs).
pybind11::list launch_info() {
  constexpr int kMax = 64;
  cockpit_attn::KernelLaunch kernels[kMax];
  const int n = std::min(cockpit_attn::attention_kernels(kernels, kMax), kMax);
  // The same kernels as a build for each target arch launches them (the L4 and Hopper, and any
  // arch tuned_config.h keeps a tile for): a build's tiles are its own arch's, so the build gate
  // judges another GPU by that GPU's build, not this one.
  int archs[16] = {89, 90};
  int n_archs = 2 + cockpit_attn::attention_tuned_archs(archs + 2, 14);
  std::vector<std::pair<int, std::vector<cockpit_attn::KernelLaunch>>> builds;
  for (int a = 0; a < n_archs; ++a) {
    bool seen = false;
    for (const auto& b : builds) seen = seen || b.first == archs[a];
    if (seen) continue;
    std::vector<cockpit_attn::KernelLaunch> as(kMax);
    as.resize(std::min(cockpit_attn::attention_kernels_for(archs[a], as.data(), kMax), kMax));
    builds.emplace_back(archs[a], std::move(as));
  }
  pybind11::list out;
  for (int i = 0; i < n; ++i) {
    const cockpit_attn::KernelLaunch& k = kernels[i];
    pybind11::dict d;
    d["kernel"] = std::string(k.kernel);
    d["template_args"] = std::string(k.template_args);
    d["label"] = std::string(k.label);
    d["threads_per_block"] = k.threads_per_block;
    d["dynamic_smem_bytes"] = k.dynamic_smem_bytes;
    d["smem_opt_in"] = k.smem_opt_in;
    pybind11::dict other;
    for (const auto& b : builds) {
      if (i >= static_cast<int>(b.second.size())) continue;
      const cockpit_attn::KernelLaunch& t = b.second[i];
      pybind11::dict e;
      e["template_args"] = std::string(t.template_args);
      e["label"] = std::string(t.label);
      e["threads_per_block"] = t.threads_per_block;
      e["dynamic_smem_bytes"] = t.dynamic_smem_bytes;
      e["smem_opt_in"] = t.smem_opt_in;
      other[pybind11::str("sm_" + std::to_string(b.first))] = e;
    }
    d["builds"] = other;
    d["build_arch"] = cockpit_attn::attention_build_arch();
    cockpit_attn::KernelOccupancy occ;
    const cudaError_t err = cockpit_attn::kernel_occupancy(k, &occ);
    if (err == cudaSuccess) {
      pybind11::dict dev;
      dev["blocks_per_sm"] = occ.blocks_per_sm;
      dev["num_regs"] = occ.num_regs;
      dev["local_bytes"] = occ.local_bytes;
      dev["static_smem_bytes"] = occ.static_smem_bytes;
      dev["max_dynamic_smem_bytes"] = occ.max_dynamic_smem_bytes;
      dev["binary_version"] = occ.binary_version;
      dev["ptx_version"] = occ.ptx_version;
      d["device"] = dev;
    } else {
      d["device_error"] = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    }
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "cockpit_attn: FlashAttention-2 style attention forward (fp16/bf16, D=64/128)";
  m.def("forward", &forward,
        "O = softmax(scale * Q K^T [causal mask]) V for (B, H, S, D) CUDA tensors, fp16 or "
        "bf16, D in {64, 128}; scale defaults to 1/sqrt(D)",
        pybind11::arg("q"), pybind11::arg("k"), pybind11::arg("v"), pybind11::arg("causal"),
        pybind11::arg("scale") = pybind11::none(), pybind11::arg("out") = pybind11::none());
  m.def("launch_info", &launch_info,
        "Every kernel as launched (threads, dynamic shared memory per block, opt-in) and, on a "
        "GPU, the CUDA runtime's registers and blocks per SM for it");
}
