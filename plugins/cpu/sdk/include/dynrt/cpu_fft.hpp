// A complex FFT of any length for the cpu impls of the spectral ops (dft,
// stft): mixed-radix
// Cooley-Tukey (decimation in time, the smallest prime factor first) when
// every prime factor of the length is small, Bluestein's chirp-z transform
// (three FFTs of a power of two >= 2n - 1) when one is not, so no length
// costs O(n^2). Double precision throughout; twiddles from one table of the
// n-th roots of unity, each computed directly (no recurrence), so the error
// stays near the reference's. A plan is built once per length and reused for
// every line of a call; transform() is const and may run on several threads
// with a scratch buffer each.
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

namespace dynrt::cpu_fft {

using cplx = std::complex<double>;

// Prime factors above this go through Bluestein (a radix-p pass costs p per element).
constexpr size_t kMaxRadix = 31;

inline size_t smallest_factor(size_t n) {
    for (size_t p = 2; p * p <= n; ++p)
        if (n % p == 0) return p;
    return n;
}

inline bool small_factors_only(size_t n) {
    while (n > 1) {
        const size_t p = smallest_factor(n);
        if (p > kMaxRadix) return false;
        n /= p;
    }
    return true;
}

// exp(-2 pi i j / n) for j in [0, n), each from its own angle.
inline std::vector<cplx> roots_of(size_t n) {
    std::vector<cplx> w(n);
    const double pi2 = 2.0 * 3.14159265358979323846;
    for (size_t j = 0; j < n; ++j) {
        const double a = -pi2 * static_cast<double>(j) / static_cast<double>(n);
        w[j] = cplx(std::cos(a), std::sin(a));
    }
    return w;
}

class Plan {
public:
    explicit Plan(size_t n) : n_(n) {
        if (small_factors_only(n)) {
            roots_ = roots_of(n);
            return;
        }
        // Bluestein: x_k' = x_k c_k with the chirp c_k = exp(-i pi k^2 / n),
        // convolved with conj(c) (length m, circular), times c_k again.
        m_ = 1;
        while (m_ < 2 * n - 1) m_ *= 2;
        inner_ = std::make_unique<Plan>(m_);
        chirp_.resize(n);
        const double pi = 3.14159265358979323846;
        for (size_t k = 0; k < n; ++k) {
            const size_t k2 = (k * k) % (2 * n);   // exact: the angle's period is 2n
            const double a = -pi * static_cast<double>(k2) / static_cast<double>(n);
            chirp_[k] = cplx(std::cos(a), std::sin(a));
        }
        std::vector<cplx> b(m_, cplx(0, 0)), scratch(m_);
        b[0] = std::conj(chirp_[0]);
        for (size_t k = 1; k < n; ++k) b[k] = b[m_ - k] = std::conj(chirp_[k]);
        kernel_.resize(m_);
        inner_->transform(b.data(), kernel_.data(), scratch.data());
    }

    size_t size() const { return n_; }
    // Scratch elements transform() needs.
    size_t scratch_size() const { return inner_ ? 3 * m_ : n_; }

    // out = forward DFT of in (n elements each; in and out must differ).
    void transform(const cplx* in, cplx* out, cplx* scratch) const {
        if (!inner_) {
            mixed_radix(in, 1, n_, out, scratch, 1);
            return;
        }
        cplx* a = scratch;
        cplx* fa = scratch + m_;
        cplx* rest = scratch + 2 * m_;
        for (size_t k = 0; k < n_; ++k) a[k] = in[k] * chirp_[k];
        for (size_t k = n_; k < m_; ++k) a[k] = cplx(0, 0);
        inner_->transform(a, fa, rest);
        // Inverse FFT of fa * kernel by the conjugate trick: conj(FFT(conj(.))) / m.
        for (size_t k = 0; k < m_; ++k) fa[k] = std::conj(fa[k] * kernel_[k]);
        inner_->transform(fa, a, rest);
        const double inv_m = 1.0 / static_cast<double>(m_);
        for (size_t k = 0; k < n_; ++k) out[k] = std::conj(a[k]) * inv_m * chirp_[k];
    }

private:
    // DFT of the n elements in[0], in[stride], ... into out[0..n), n = n_ / step.
    void mixed_radix(const cplx* in, size_t stride, size_t n, cplx* out, cplx* tmp, size_t step) const {
        if (n == 1) {
            out[0] = in[0];
            return;
        }
        const size_t p = smallest_factor(n), m = n / p;
        for (size_t r = 0; r < p; ++r) mixed_radix(in + r * stride, stride * p, m, out + r * m, tmp, step * p);
        // out[r*m + k] holds the DFT (length m) of subsequence r; combine:
        // X[k + q m] = sum_r w_n^(r (k + q m)) * F_r[k].
        for (size_t k = 0; k < m; ++k) {
            for (size_t r = 0; r < p; ++r) tmp[r] = out[r * m + k];
            for (size_t q = 0; q < p; ++q) {
                const size_t e = k + q * m;
                cplx acc = tmp[0];
                for (size_t r = 1; r < p; ++r) acc += tmp[r] * roots_[((r * e) % n) * step];
                out[e] = acc;
            }
        }
    }

    size_t n_ = 0, m_ = 0;
    std::vector<cplx> roots_;   // the n_-th roots (mixed radix)
    std::vector<cplx> chirp_, kernel_;
    std::unique_ptr<Plan> inner_;   // the power-of-two plan (Bluestein)
};

}   // namespace dynrt::cpu_fft
