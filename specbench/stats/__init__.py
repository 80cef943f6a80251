"""Statistics, one home: pure functions of numbers and arrays (numpy, no pandas).

- `student_t`: Student's t distribution and the t interval of a mean.
- `bootstrap`: cluster bootstraps (stratified, by contiguous blocks), percentile
  intervals, weighted quantiles of resampled values, a ratio of means.
- `standard_errors`: a ratio's error over resamples, a mean of repeats', a change's.
- `significance`: the gate's one-sided t test (Welch degrees of freedom, Bonferroni).
- `power`: the worsening that test catches, and the error it needs to catch one.
- `launches`: intervals over server launches (Student t), one launch's (labelled so), one
  launch's widened by an earlier campaign's between-launch variance, and a ratio's.

A stage below every stage that measures or reads results (`measure`, `analysis`,
`gate`); it imports nothing of specbench.
"""
