#include "harness/lesson/checks.h"

#include <cmath>

#include <fmt/format.h>

namespace kvbench::lesson {

namespace {
// Rounding slack at a band's edge, so that a value exactly on the stated tolerance passes.
constexpr double kEdge = 1e-9;

std::string ci_text(const std::optional<stats::Interval>& ci) {
  return ci ? fmt::format("[95% CI {:.4g}, {:.4g}]", ci->lower, ci->upper) : "(no CI)";
}

CheckResult result(Verdict v, std::string tolerance, std::string why) {
  return CheckResult{v, std::move(tolerance), std::move(why)};
}
}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::inconclusive:
      break;
  }
  return "inconclusive";
}

CheckResult check_ttft_rises(const TtftInput& in) {
  const std::string tol =
      "95% CI of the TTFT slope (drift removed) above 0, and the longest prompt's median TTFT "
      "above the shortest's";
  if (!in.slope_ms_per_ktok || !in.slope_ci || !in.median_short_ms || !in.median_long_ms) {
    return result(Verdict::inconclusive, tol, "no TTFT fit or no medians: too few calls succeeded");
  }
  const std::string numbers = fmt::format(
      "slope {:.4g} ms per 1,000 tokens {}; median {:.4g} ms -> {:.4g} ms", *in.slope_ms_per_ktok,
      ci_text(in.slope_ci), *in.median_short_ms, *in.median_long_ms);
  const bool longer_slower = *in.median_long_ms > *in.median_short_ms;
  if (in.slope_ci->upper < 0 || !longer_slower) {
    return result(Verdict::fail, tol, numbers + ": TTFT did not rise with prompt length");
  }
  if (in.slope_ci->lower > 0) {
    return result(Verdict::pass, tol, numbers + ": TTFT rose with prompt length");
  }
  return result(Verdict::inconclusive, tol, numbers + ": the CI holds 0");
}

CheckResult check_decode_falls(const DecodeInput& in) {
  const std::string tol =
      "95% CI of the decode-rate slope per 1,000 prompt tokens, elapsed time in the fit, below 0";
  if (!in.slope_tps_per_ktok || !in.slope_ci) {
    return result(Verdict::inconclusive, tol, "no decode-rate fit: too few calls succeeded");
  }
  const std::string numbers = fmt::format("slope {:.4g} tok/s per 1,000 tokens {}",
                                          *in.slope_tps_per_ktok, ci_text(in.slope_ci));
  if (in.slope_ci->upper < 0) {
    return result(Verdict::pass, tol, numbers + ": decoding slowed with prompt length");
  }
  if (in.slope_ci->lower > 0) {
    return result(Verdict::fail, tol, numbers + ": decoding got faster with prompt length");
  }
  return result(Verdict::inconclusive, tol,
                numbers + ": the CI holds 0, the slope cannot be told from noise");
}

CheckResult check_relative(const RatioInput& in) {
  const std::string tol = fmt::format("measured within {:.0f}% of expected", 100 * in.tolerance);
  if (!in.measured || !in.expected || *in.expected == 0) {
    return result(Verdict::inconclusive, tol, fmt::format("no measured {}", in.what));
  }
  const double ratio = *in.measured / *in.expected;
  const std::string numbers =
      fmt::format("{} {:.4g}{} against {:.4g} expected (ratio {:.3f})", in.what, *in.measured,
                  in.ci ? fmt::format(" {}", ci_text(in.ci)) : std::string{}, *in.expected, ratio);
  if (std::abs(ratio - 1) <= in.tolerance + kEdge) {
    return result(Verdict::pass, tol, numbers);
  }
  const double lo = *in.expected * (1 - in.tolerance);
  const double hi = *in.expected * (1 + in.tolerance);
  if (in.ci && in.ci->upper >= lo && in.ci->lower <= hi) {
    return result(Verdict::inconclusive, tol, numbers + ": outside, but the CI reaches the band");
  }
  return result(Verdict::fail, tol, numbers + ": outside the tolerance");
}

double reuse_ratio_with_attention(double f, double rho) {
  return (1.0 - f) * (1.0 + rho * (1.0 + f) / 2.0) / (1.0 + rho / 2.0);
}

std::optional<double> fit_attention_rho(const std::vector<std::pair<double, double>>& points) {
  if (points.size() < 2) {
    return std::nullopt;
  }
  const auto sse = [&](double rho) {
    double sum = 0;
    for (const auto& [f, ratio] : points) {
      const double d = ratio - reuse_ratio_with_attention(f, rho);
      sum += d * d;
    }
    return sum;
  };
  // R is monotone in rho for every f, so the sum of squares is unimodal: a fine grid is enough.
  double best = 0;
  for (int i = 1; i <= 4000; ++i) {
    const double rho = kRhoMax * i / 4000.0;
    if (sse(rho) < sse(best)) {
      best = rho;
    }
  }
  return best;
}

CheckResult check_reuse(const ReuseInput& in) {
  const double lo = in.at_most ? -INFINITY : in.expected - in.tolerance;
  double hi = in.expected + in.tolerance;
  std::string tol = in.at_most
                        ? fmt::format("median second/cold ratio at most {:.2f}", hi)
                        : fmt::format("median second/cold ratio within {:.2f} of 1 - f = {:.2f}",
                                      in.tolerance, in.expected);
  if (!in.at_most && in.rho) {
    const double f = 1.0 - in.expected;
    const double attention = reuse_ratio_with_attention(f, *in.rho) + kRhoSlack;
    if (attention > hi) {
      hi = attention;
      tol = fmt::format(
          "median second/cold ratio from 1 - f - {:.2f} = {:.2f} up to {:.2f}, the prediction "
          "with re-read tokens attending over the prefix (rho {:.2f} fitted over all positions, "
          "at most {:.0f}) + {:.2f}",
          in.tolerance, lo, hi, *in.rho, kRhoMax, kRhoSlack);
    }
  }
  if (!in.median_ratio || in.pairs == 0) {
    return result(Verdict::inconclusive, tol, "no complete cold/second pair");
  }
  const std::string numbers = fmt::format("median ratio {:.3f} {} over {} pair{}", *in.median_ratio,
                                          ci_text(in.ci), in.pairs, in.pairs == 1 ? "" : "s");
  if (*in.median_ratio >= lo - kEdge && *in.median_ratio <= hi + kEdge) {
    return result(Verdict::pass, tol, numbers);
  }
  if (in.ci && in.ci->upper >= lo && in.ci->lower <= hi) {
    return result(Verdict::inconclusive, tol, numbers + ": outside, but the CI reaches the band");
  }
  return result(Verdict::fail, tol, numbers + ": outside the band");
}

CheckResult check_trap(const TrapInput& in) {
  const std::string tol = fmt::format(
      "cold / cached median TTFT at least {:.0f}x (fail below {:.0f}x)", kTrapPass, kTrapFail);
  if (in.hits == 0) {
    return in.cold > 0 ? result(Verdict::fail, tol,
                                fmt::format("none of {} repeated calls was served from the prompt "
                                            "cache",
                                            in.cold))
                       : result(Verdict::inconclusive, tol, "no repeated call succeeded");
  }
  if (in.cold == 0 || !in.hit_ttft_ms || !in.cold_ttft_ms || *in.hit_ttft_ms <= 0) {
    return result(Verdict::inconclusive, tol, "no cold read of the same prompt to compare with");
  }
  const double speedup = *in.cold_ttft_ms / *in.hit_ttft_ms;
  const std::string numbers =
      fmt::format("{} cold read{} {:.4g} ms, {} cached {:.4g} ms: {:.1f}x", in.cold,
                  in.cold == 1 ? "" : "s", *in.cold_ttft_ms, in.hits, *in.hit_ttft_ms, speedup);
  if (speedup >= kTrapPass) {
    return result(Verdict::pass, tol, numbers);
  }
  if (speedup < kTrapFail) {
    return result(Verdict::fail, tol, numbers + ": not much faster");
  }
  return result(Verdict::inconclusive, tol, numbers + ": faster, but not by the margin");
}

}  // namespace kvbench::lesson
