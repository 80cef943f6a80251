"""stats.student_t: Student's t quantiles against the printed tables."""

from __future__ import annotations

import pytest

from specbench.stats.student_t import student_t_quantile


@pytest.mark.parametrize(
    ("df", "expected"), [(1, 12.7062047), (2, 4.3026527), (4, 2.7764451), (29, 2.0452296)]
)
def test_student_t_quantile_matches_tables(df: int, expected: float) -> None:
    assert student_t_quantile(0.975, df) == pytest.approx(expected, abs=1e-6)
