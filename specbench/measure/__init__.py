"""One measured cell: the closed loop, the window between two idle scrapes, the summary."""
