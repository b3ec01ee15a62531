// Fixed-order matrix products for agentrl's numerics version 5 (and later), as torch operators (torch.ops.agentrl):
// agentrl/matmul.py builds and loads this file.
//
// C[m, n] = sum_k A[m, k] B[k, n], each output one chain of fused multiply-adds over k = 0, 1, ..., K-1 from +0
// (acc = fma(A[m, k], B[k, n], acc)), then times `scale` where asked, then plus bias[n] where given (each one IEEE
// rounding). Blocking is over outputs only (6 rows x 16 columns or 12 x 8 in registers, rows in panels that stay in
// cache), never over k: the bits depend on the operands and K alone, not on the CPU's caches, vendor or model. Built
// with -ffp-contract=off (no fusing the compiler chooses) and without -ffast-math; the instructions are AVX2 and FMA
// loads, stores, shuffles, multiplies, adds, fmas, compares and blends: IEEE-exact, the same on every x86-64 CPU that
// has them.
#include <ATen/core/Tensor.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/_softmax_backward_data.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

namespace {

inline __m256i lanes_below(int n) {  // lanes 0..n-1 set: masked loads of a partial column block read zeros beyond
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), index);
}

// acc[r][v] = sum_k a[r, k] b[k, 8v..8v+7], k in order, for MR rows and NV vectors of 8 columns.
template <int MR, int NV, bool PARTIAL>
__attribute__((always_inline)) inline void tile(int64_t K, const float* a, int64_t am, int64_t ak, const float* b,
                                                int64_t bk, __m256i last, __m256 out[MR][NV]) {
    __m256 acc[MR][NV];  // local: __m256 may alias the operands, so accumulating into `out` would store every step
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; ++k) {  // the accumulators stay in registers: the loops over r and v are unrolled
        const float* bp = b + k * bk;
        __m256 bv[NV];
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v)
            bv[v] = (PARTIAL && v == NV - 1) ? _mm256_maskload_ps(bp + 8 * v, last) : _mm256_loadu_ps(bp + 8 * v);
#pragma GCC unroll 12
        for (int r = 0; r < MR; ++r) {
            const __m256 av = _mm256_broadcast_ss(a + r * am + k * ak);
#pragma GCC unroll 2
            for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
        }
    }
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) out[r][v] = acc[r][v];
}

// The epilogues that full vectors of unit-stride output take without a test: PLAIN stores, BIASED adds the bias,
// SCALED multiplies by the scale, SCORES also hides n > m; everything else (a mask, both scale and bias) is GENERAL.
enum Kind { PLAIN, BIASED, SCALED, SCORES, GENERAL };

struct Epilogue {
    float scale;
    bool scaled;
    const float* bias;     // [N], or null
    bool causal;           // C[m, n] = -inf where n > m
    const uint8_t* mask;   // [M, N] of this batch entry (0: -inf), or null
    int64_t mask_row, mask_col;
    Kind kind;
};

Kind kind_of(bool scaled, const float* bias, bool causal, const void* mask, int64_t cn) {
    if (mask || cn != 1 || (scaled && bias) || (causal && (bias || !scaled))) return GENERAL;
    return scaled ? (causal ? SCORES : SCALED) : bias ? BIASED : PLAIN;
}

// Scale, bias, causal and user masks, then store rows m0.. of columns n0..n0+cols-1.
template <int MR, int NV, Kind KIND>
__attribute__((always_inline)) inline void finish(__m256 acc[MR][NV], const Epilogue& e, int64_t m0, int64_t n0,
                                                  int64_t cols, float* c, int64_t cm, int64_t cn) {
    const __m256 minus_inf = _mm256_set1_ps(-INFINITY);
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
        const int64_t n = n0 + 8 * v;
        const int64_t width = cols - 8 * v < 8 ? cols - 8 * v : 8;
        if (width <= 0) break;
        const __m256i column = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(n)), index);
        if (KIND != GENERAL && width == 8) {
            const __m256 bias = KIND == BIASED ? _mm256_loadu_ps(e.bias + n) : _mm256_setzero_ps();
#pragma GCC unroll 12
            for (int r = 0; r < MR; ++r) {
                __m256 x = acc[r][v];
                if (KIND == BIASED) x = _mm256_add_ps(x, bias);
                if (KIND == SCALED || KIND == SCORES) x = _mm256_mul_ps(x, _mm256_set1_ps(e.scale));
                if (KIND == SCORES && n + 7 > m0 + r) {
                    const __m256i hidden = _mm256_cmpgt_epi32(column, _mm256_set1_epi32(static_cast<int>(m0 + r)));
                    x = _mm256_blendv_ps(x, minus_inf, _mm256_castsi256_ps(hidden));
                }
                _mm256_storeu_ps(c + (m0 + r) * cm + n, x);
            }
            continue;
        }
        __m256 bias = _mm256_setzero_ps();
        if (e.bias)
            bias = width == 8 ? _mm256_loadu_ps(e.bias + n) : _mm256_maskload_ps(e.bias + n, lanes_below(width));
#pragma GCC unroll 12
        for (int r = 0; r < MR; ++r) {
            const int64_t m = m0 + r;
            __m256 x = acc[r][v];
            if (e.scaled) x = _mm256_mul_ps(x, _mm256_set1_ps(e.scale));
            if (e.bias) x = _mm256_add_ps(x, bias);
            if (e.causal && n + width - 1 > m) {
                const __m256i hidden = _mm256_cmpgt_epi32(column, _mm256_set1_epi32(static_cast<int>(m)));
                x = _mm256_blendv_ps(x, minus_inf, _mm256_castsi256_ps(hidden));
            }
            if (e.mask) {
                const uint8_t* row = e.mask + m * e.mask_row + n * e.mask_col;
                if (e.mask_col == 1 && width == 8) {  // 8 booleans at once
                    const __m256i flags = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row)));
                    const __m256i hidden = _mm256_cmpeq_epi32(flags, _mm256_setzero_si256());
                    x = _mm256_blendv_ps(x, minus_inf, _mm256_castsi256_ps(hidden));
                } else {
                    alignas(32) float values[8];
                    _mm256_store_ps(values, x);
                    for (int64_t j = 0; j < width; ++j)
                        if (!row[j * e.mask_col]) values[j] = -INFINITY;
                    x = _mm256_load_ps(values);
                }
            }
            float* out = c + m * cm + n * cn;
            if (cn == 1 && width == 8) {  // masked stores are slow on some CPUs: a partial vector goes lane by lane
                _mm256_storeu_ps(out, x);
            } else {
                alignas(32) float values[8];
                _mm256_store_ps(values, x);
                for (int64_t j = 0; j < width; ++j) out[j * cn] = values[j];
            }
        }
    }
}

template <int MR, int NV, bool PARTIAL>
void block(int64_t K, const float* a, int64_t am, int64_t ak, const float* b, int64_t bk, int64_t m0, int64_t n0,
           int64_t cols, const Epilogue& e, float* c, int64_t cm, int64_t cn) {
    __m256 acc[MR][NV];
    tile<MR, NV, PARTIAL>(K, a + m0 * am, am, ak, b + n0, bk, lanes_below(static_cast<int>(cols - 8 * (NV - 1))), acc);
    switch (e.kind) {
        case PLAIN: return finish<MR, NV, PLAIN>(acc, e, m0, n0, cols, c, cm, cn);
        case BIASED: return finish<MR, NV, BIASED>(acc, e, m0, n0, cols, c, cm, cn);
        case SCALED: return finish<MR, NV, SCALED>(acc, e, m0, n0, cols, c, cm, cn);
        case SCORES: return finish<MR, NV, SCORES>(acc, e, m0, n0, cols, c, cm, cn);
        default: return finish<MR, NV, GENERAL>(acc, e, m0, n0, cols, c, cm, cn);
    }
}

template <int NV, bool PARTIAL>
void rows(int mr, int64_t K, const float* a, int64_t am, int64_t ak, const float* b, int64_t bk, int64_t m0,
          int64_t n0, int64_t cols, const Epilogue& e, float* c, int64_t cm, int64_t cn) {
    switch (mr) {  // MR rows of NV vectors: 12 accumulators at most (16 registers)
        case 1: return block<1, NV, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
        case 2: return block<2, NV, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
        case 3: return block<3, NV, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
        case 4: return block<4, NV, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
        case 5: return block<5, NV, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
        case 6: return block<6, NV, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
    }
    if constexpr (NV == 1) {  // one vector of columns: 12 rows (two vectors take 6 at most)
        switch (mr) {
            case 7: return block<7, 1, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
            case 8: return block<8, 1, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
            case 9: return block<9, 1, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
            case 10: return block<10, 1, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
            case 11: return block<11, 1, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
            default: return block<12, 1, PARTIAL>(K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
        }
    }
}

inline void transpose8(__m256 r[8]) {  // r[i][j] <- r[j][i]: moves, nothing computed
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20), r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20), r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31), r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31), r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// panel [K, ldp] = B [K, N] (strides bk, bn) with unit column stride, zeros in columns N..ldp-1 (ldp: N rounded up
// to 8): the same values, nothing summed. B transposed in memory (bk == 1) goes 8 x 8 blocks at a time.
void pack(int64_t K, int64_t N, const float* b, int64_t bk, int64_t bn, float* panel, int64_t ldp) {
    for (int64_t n0 = 0; n0 < N; n0 += 8) {
        const int64_t w = N - n0 < 8 ? N - n0 : 8;
        for (int64_t k0 = 0; k0 < K; k0 += 8) {
            const int64_t h = K - k0 < 8 ? K - k0 : 8;
            if (bk == 1 && w == 8 && h == 8) {
                __m256 r[8];
#pragma GCC unroll 8
                for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(b + (n0 + i) * bn + k0);
                transpose8(r);
#pragma GCC unroll 8
                for (int j = 0; j < 8; ++j) _mm256_storeu_ps(panel + (k0 + j) * ldp + n0, r[j]);
                continue;
            }
            for (int64_t k = k0; k < k0 + h; ++k)
                for (int64_t i = 0; i < 8; ++i) panel[k * ldp + n0 + i] = i < w ? b[k * bk + (n0 + i) * bn] : 0.0f;
        }
    }
}

void hide(float* c, int64_t cn, int64_t from, int64_t to) {  // c[from..to-1] = -inf (a row of C, column stride cn)
    int64_t n = from;
    if (cn == 1)
        for (; n + 8 <= to; n += 8) _mm256_storeu_ps(c + n, _mm256_set1_ps(-INFINITY));
    for (; n < to; ++n) c[n * cn] = -INFINITY;
}

// C [M, N] = A [M, K] @ B [K, N], then the epilogue, for one batch entry. B has unit column stride; `padded`: its
// rows are readable up to N rounded up to 8 (a panel), else partial vectors are masked. Rows go in panels over every
// column block, so that A's rows stay in cache while B's columns stream.
void gemm(int64_t M, int64_t N, int64_t K, const float* a, int64_t am, int64_t ak, const float* b, int64_t bk,
          bool padded, const Epilogue& e, float* c, int64_t cm, int64_t cn) {
    const int NV = N > 8 ? 2 : 1;
    const int MR = NV == 2 ? 6 : 12;
    const int64_t step = 8 * NV;
    const int64_t panel_rows = 16 * MR;
    for (int64_t m1 = 0; m1 < M; m1 += panel_rows) {
        const int64_t m2 = M - m1 < panel_rows ? M : m1 + panel_rows;
        for (int64_t n0 = 0; n0 < N; n0 += step) {
            const int64_t cols = N - n0 < step ? N - n0 : step;
            const int64_t vectors = (cols + 7) / 8;
            const bool partial = !padded && cols % 8;
            for (int64_t m0 = m1; m0 < m2; m0 += MR) {
                const int mr = static_cast<int>(m2 - m0 < MR ? m2 - m0 : MR);
                if (e.causal && n0 > m0 + mr - 1) continue;  // every output of the block hidden: -inf below
                if (vectors == 2) {
                    if (partial) rows<2, true>(mr, K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
                    else rows<2, false>(mr, K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
                } else {
                    if (partial) rows<1, true>(mr, K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
                    else rows<1, false>(mr, K, a, am, ak, b, bk, m0, n0, cols, e, c, cm, cn);
                }
            }
        }
        if (e.causal)  // the blocks skipped above: from the first column block past each row block's last row
            for (int64_t m0 = m1; m0 < m2; m0 += MR) {
                const int64_t last = (m2 - m0 < MR ? m2 : m0 + MR) - 1;
                const int64_t from = (last / step + 1) * step;
                for (int64_t m = m0; m <= last && from < N; ++m) hide(c + m * cm, cn, from, N);
            }
    }
}

thread_local std::vector<float> panel_buffer;  // B repacked with unit column stride, where it has another

// C [b1, b2, M, N] = A [b1, b2, M, K] @ B [b1, b2, K, N] (any strides, 0 for a broadcast batch dimension), then the
// epilogue: times scale (scaled), plus bias [N] (dense; non-null), -inf where n > m (causal) or mask[.., m, n] == 0
// (mask non-null). Each output is its own fma chain over k in order: see the file's head.
struct View {
    const void* data;
    int64_t b1, b2, row, col;
};

void matmul(int64_t nb1, int64_t nb2, int64_t M, int64_t N, int64_t K, View A, View B, View C, const float* bias,
            float scale, bool scaled, bool causal, View mask) {
    const bool packed = B.col != 1;
    const int64_t ldp = (N + 7) / 8 * 8;
    float* panel = nullptr;
    if (packed) {
        std::vector<float>& buffer = panel_buffer;  // one thread-local lookup a call
        if (buffer.size() < static_cast<size_t>(K * ldp)) buffer.resize(static_cast<size_t>(K * ldp));
        panel = buffer.data();
    }
    const float* packed_from = nullptr;  // the B whose panel is current: a broadcast B is packed once
    for (int64_t i = 0; i < nb1; ++i) {
        for (int64_t j = 0; j < nb2; ++j) {
            const float* ab = static_cast<const float*>(A.data) + i * A.b1 + j * A.b2;
            const float* bb = static_cast<const float*>(B.data) + i * B.b1 + j * B.b2;
            float* cb = const_cast<float*>(static_cast<const float*>(C.data)) + i * C.b1 + j * C.b2;
            if (packed && bb != packed_from) {
                pack(K, N, bb, B.row, B.col, panel, ldp);
                packed_from = bb;
            }
            const uint8_t* mb =
                mask.data ? static_cast<const uint8_t*>(mask.data) + i * mask.b1 + j * mask.b2 : nullptr;
            Epilogue e{scale, scaled, bias, causal, mb, mask.row, mask.col, kind_of(scaled, bias, causal, mb, C.col)};
            if (packed) gemm(M, N, K, ab, A.row, A.col, panel, ldp, true, e, cb, C.row, C.col);
            else gemm(M, N, K, ab, A.row, A.col, bb, B.row, false, e, cb, C.row, C.col);
        }
    }
}

// t ([rows, cols] with up to two batch dimensions in front) as a View over the batch [nb1, nb2]: 0 stride where t
// broadcasts.
View view(const at::Tensor& t, int64_t nb1, int64_t nb2) {
    const int64_t d = t.dim();
    View v{t.data_ptr(), 0, 0, t.stride(d - 2), t.stride(d - 1)};
    if (d >= 3 && t.size(d - 3) != 1) v.b2 = t.stride(d - 3);
    if (d >= 4 && t.size(d - 4) != 1) v.b1 = t.stride(d - 4);
    return v;
}

// product(a [..., M, K], b [..., K, N]) -> [..., M, N]: at most two batch dimensions, broadcast; float32, CPU.
at::Tensor product(const at::Tensor& a, const at::Tensor& b, std::optional<double> scale,
                   const std::optional<at::Tensor>& bias, bool causal, const std::optional<at::Tensor>& mask) {
    TORCH_CHECK(a.dim() >= 2 && b.dim() >= 2 && a.dim() <= 4 && b.dim() <= 4, "product: 2 to 4 dimensions, got ",
                a.sizes(), " and ", b.sizes());
    TORCH_CHECK(a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat && a.device().is_cpu() &&
                    b.device().is_cpu(), "product: float32 tensors on the CPU");
    const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
    TORCH_CHECK(b.size(-2) == K, "product: ", a.sizes(), " @ ", b.sizes(), " do not chain");
    const int64_t batch_dims = std::max(a.dim(), b.dim()) - 2;
    int64_t nb[2] = {1, 1};
    for (int64_t i = 0; i < batch_dims; ++i) {  // i-th batch dimension from the right
        const int64_t sa = a.dim() - 3 - i >= 0 ? a.size(a.dim() - 3 - i) : 1;
        const int64_t sb = b.dim() - 3 - i >= 0 ? b.size(b.dim() - 3 - i) : 1;
        TORCH_CHECK(sa == sb || sa == 1 || sb == 1, "product: batch dimensions ", a.sizes(), " and ", b.sizes());
        nb[1 - i] = std::max(sa, sb);
    }
    std::vector<int64_t> shape;
    for (int64_t i = 2 - batch_dims; i < 2; ++i) shape.push_back(nb[i]);
    shape.push_back(M);
    shape.push_back(N);
    at::Tensor out = at::empty(shape, a.options());
    if (out.numel() == 0) return out;
    const float* bias_data = nullptr;
    if (bias) {
        TORCH_CHECK(bias->dim() == 1 && bias->size(0) == N && bias->stride(0) == 1 &&
                    bias->scalar_type() == at::kFloat, "product: bias must be dense float32 [N]");
        bias_data = bias->data_ptr<float>();
    }
    View m{nullptr, 0, 0, 0, 0};
    at::Tensor expanded;
    if (mask) {
        TORCH_CHECK(mask->scalar_type() == at::kBool, "product: the mask is boolean");
        expanded = mask->expand(shape);
        m = view(expanded, nb[0], nb[1]);
    }
    matmul(nb[0], nb[1], M, N, K, view(a, nb[0], nb[1]), view(b, nb[0], nb[1]), view(out, nb[0], nb[1]), bias_data,
           scale ? static_cast<float>(*scale) : 1.0f, scale.has_value(), causal, m);
    return out;
}

float attention_scale(const at::Tensor& q) {  // 1 / sqrt(D), rounded to float32 once
    return static_cast<float>(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
}

// softmax(q k^T / sqrt(D), masked) v: q [B, H, T, D], k, v [B, H, S, D] -> (y [B, H, T, D], p [B, H, T, S]).
std::tuple<at::Tensor, at::Tensor> attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                             bool causal, const std::optional<at::Tensor>& mask) {
    at::Tensor scores = product(q, k.transpose(-1, -2), attention_scale(q), std::nullopt, causal, mask);
    at::Tensor p = at::_softmax(scores, -1, false);
    return {product(p, v, std::nullopt, std::nullopt, false, std::nullopt), p};
}

// attention's gradients: dy [B, H, T, D] -> (dq, dk, dv).
std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_backward(const at::Tensor& dy, const at::Tensor& q,
                                                                  const at::Tensor& k, const at::Tensor& v,
                                                                  const at::Tensor& p) {
    const float scale = attention_scale(q);
    at::Tensor dp = product(dy, v.transpose(-1, -2), std::nullopt, std::nullopt, false, std::nullopt);
    at::Tensor ds = at::_softmax_backward_data(dp, p, -1, at::kFloat);
    return {product(ds, k, scale, std::nullopt, false, std::nullopt),
            product(ds.transpose(-1, -2), q, scale, std::nullopt, false, std::nullopt),
            product(p.transpose(-1, -2), dy, std::nullopt, std::nullopt, false, std::nullopt)};
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// y = x W^T + b: x [..., I], weight [O, I], bias [O] or none -> [..., O]; its gradients on the kernel too.
struct Linear : torch::autograd::Function<Linear> {
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                              const std::optional<at::Tensor>& bias) {
        ctx->save_for_backward({x, weight});
        ctx->saved_data["biased"] = bias.has_value();
        std::vector<int64_t> shape = x.sizes().vec();
        shape.back() = weight.size(0);
        return product(x.reshape({-1, x.size(-1)}), weight.t(), std::nullopt, bias, false, std::nullopt).view(shape);
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const at::Tensor &x = saved[0], &weight = saved[1];
        const at::Tensor dy = grads[0].reshape({-1, weight.size(0)});  // [n, O]
        const at::Tensor xs = x.reshape({-1, weight.size(1)});  // [n, I]
        at::Tensor dx, dw, db;
        if (ctx->needs_input_grad(0))
            dx = product(dy, weight, std::nullopt, std::nullopt, false, std::nullopt).view(x.sizes());
        if (ctx->needs_input_grad(1))  // [O, I], summed over the n rows in order
            dw = product(dy.t(), xs, std::nullopt, std::nullopt, false, std::nullopt);
        if (ctx->saved_data["biased"].toBool() && ctx->needs_input_grad(2))  // the n rows in order: 1 x dy
            db = product(at::ones({1}, dy.options()).expand({1, dy.size(0)}), dy, std::nullopt, std::nullopt, false,
                         std::nullopt).view(-1);
        return {dx, dw, db};
    }
};

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias) {
    return Linear::apply(x, weight, bias);
}

// K linear layers of one shape, each on its own consecutive rows: x [N, I], weight [K, O, I], bias [K, O] or none,
// layer k on rows offsets[k] to offsets[k + 1] - 1 -> [N, O]. Each layer's product, and each of its gradients, is the
// call Linear makes for it alone on its rows: a layer's numbers do not depend on the other layers or their rows.
struct Segmented : torch::autograd::Function<Segmented> {
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                              const std::optional<at::Tensor>& bias, std::vector<int64_t> offsets) {
        TORCH_CHECK(x.dim() == 2 && weight.dim() == 3 && static_cast<int64_t>(offsets.size()) == weight.size(0) + 1 &&
                        offsets.front() == 0 && offsets.back() == x.size(0),
                    "segmented linear: x [N, I], weight [K, O, I] and K + 1 offsets from 0 to N, got ", x.sizes(),
                    ", ", weight.sizes(), " and ", offsets.size(), " offsets");
        ctx->save_for_backward({x, weight});
        ctx->saved_data["biased"] = bias.has_value();
        ctx->saved_data["offsets"] = offsets;
        std::vector<at::Tensor> parts;
        for (int64_t k = 0; k < weight.size(0); ++k)
            parts.push_back(product(x.narrow(0, offsets[k], offsets[k + 1] - offsets[k]), weight[k].t(), std::nullopt,
                                    bias ? std::optional<at::Tensor>((*bias)[k]) : std::nullopt, false,
                                    std::nullopt));
        return at::cat(parts);
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const at::Tensor &x = saved[0], &weight = saved[1];
        const std::vector<int64_t> offsets = ctx->saved_data["offsets"].toIntVector();
        const at::Tensor dy = grads[0].contiguous();  // [N, O]
        const bool biased = ctx->saved_data["biased"].toBool();
        std::vector<at::Tensor> dx, dw, db;
        for (int64_t k = 0; k < weight.size(0); ++k) {
            const int64_t rows = offsets[k + 1] - offsets[k];
            const at::Tensor dyk = dy.narrow(0, offsets[k], rows), xk = x.narrow(0, offsets[k], rows);
            if (ctx->needs_input_grad(0)) dx.push_back(product(dyk, weight[k], std::nullopt, std::nullopt, false,
                                                               std::nullopt));
            if (ctx->needs_input_grad(1))  // [O, I], summed over the layer's rows in order
                dw.push_back(product(dyk.t(), xk, std::nullopt, std::nullopt, false, std::nullopt));
            if (biased && ctx->needs_input_grad(2))  // the layer's rows in order: 1 x dy
                db.push_back(product(at::ones({1}, dy.options()).expand({1, rows}), dyk, std::nullopt, std::nullopt,
                                     false, std::nullopt).view(-1));
        }
        return {dx.empty() ? at::Tensor() : at::cat(dx), dw.empty() ? at::Tensor() : at::stack(dw),
                db.empty() ? at::Tensor() : at::stack(db), at::Tensor()};
    }
};

at::Tensor segmented(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                     std::vector<int64_t> offsets) {
    return Segmented::apply(x, weight, bias, offsets);
}

// softmax(q k^T / sqrt(D), masked) v: q [B, H, T, D], k, v [B, H, S, D] -> [B, H, T, D]; its gradients too.
struct Attention : torch::autograd::Function<Attention> {
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              bool causal, const std::optional<at::Tensor>& mask) {
        auto [y, p] = attention(q, k, v, causal, mask);
        ctx->save_for_backward({q, k, v, p});
        return y;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        auto [dq, dk, dv] = attention_backward(grads[0], saved[0], saved[1], saved[2], saved[3]);
        return {dq, dk, dv, at::Tensor(), at::Tensor()};
    }
};

at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                  const std::optional<at::Tensor>& mask) {
    return Attention::apply(q, k, v, causal, mask);
}

}  // namespace

TORCH_LIBRARY(agentrl, m) {  // linear, segmented and attention: autograd functions (their backward on the kernel)
    m.def("product(Tensor a, Tensor b, float? scale=None, Tensor? bias=None, bool causal=False, Tensor? mask=None) "
          "-> Tensor", &product);
    m.def("linear(Tensor x, Tensor weight, Tensor? bias=None) -> Tensor", &linear);
    m.def("segmented(Tensor x, Tensor weight, Tensor? bias, int[] offsets) -> Tensor", &segmented);
    m.def("attention(Tensor q, Tensor k, Tensor v, bool causal=False, Tensor? mask=None) -> Tensor", &attend);
}
