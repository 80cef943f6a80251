"""The results directory: layout, atomic writes, records, summary and manifest.

`from specbench import store` gives the file-level API of `specbench.store.files`.
"""

from specbench.store.files import (
    FAILURE,
    MANIFEST,
    METRICS_AFTER,
    METRICS_BEFORE,
    REQUESTS,
    SUMMARY,
    RecordWriter,
    cell_dir,
    dataset_dir_name,
    is_complete,
    read_json,
    read_records,
    read_summary,
    slug,
    write_atomic,
    write_json,
)

__all__ = [
    "FAILURE",
    "MANIFEST",
    "METRICS_AFTER",
    "METRICS_BEFORE",
    "REQUESTS",
    "SUMMARY",
    "RecordWriter",
    "cell_dir",
    "dataset_dir_name",
    "is_complete",
    "read_json",
    "read_records",
    "read_summary",
    "slug",
    "write_atomic",
    "write_json",
]
