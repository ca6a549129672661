#pragma once
// Thin wrappers over Boost.Math distributions, so every quantile in kvbench comes from one
// tested place. Nothing here is a hand-written distribution function. Every function throws
// kvbench::Error for degrees of freedom <= 0 or a probability outside (0, 1).

namespace kvbench::stats {

// The p-quantile of Student's t with df degrees of freedom (df > 0, 0 < p < 1).
// Example: t_quantile(0.975, 27) = 2.0518...
double t_quantile(double p, double df);

// P(T <= t) for Student's t with df degrees of freedom (df > 0).
double t_cdf(double t, double df);

// Two-sided p-value 2·P(T > |t|) for Student's t with df degrees of freedom; NaN t gives NaN.
double t_two_sided_p(double t, double df);

// The p-quantile of the standard normal (0 < p < 1).
double normal_quantile(double p);

// Upper tail P(F > f) of Fisher's F with (df1, df2) degrees of freedom; NaN f gives NaN.
double f_upper_tail(double f, double df1, double df2);

}  // namespace kvbench::stats
