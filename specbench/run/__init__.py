"""Running a plan: servers × workloads × concurrencies × repeats, and `serve`."""
