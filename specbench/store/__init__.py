"""The results directory: layout (both ways), atomic writes, records, summary, manifest.

`from specbench import store` gives the file names, the layout and the file-level API.
"""

from specbench.store.files import (
    RecordWriter,
    read_json,
    read_records,
    read_summary,
    records_disagree,
    write_atomic,
    write_json,
)
from specbench.store.layout import (
    ENERGY,
    FAILURE,
    MANIFEST,
    METRICS_AFTER,
    METRICS_BEFORE,
    REQUESTS,
    SUMMARY,
    WINDOW_SAMPLES,
    CellKey,
    cell_key_of,
    cell_path,
    check_name,
    is_complete,
    selection_key,
    summary_key,
)

__all__ = [
    "ENERGY",
    "FAILURE",
    "MANIFEST",
    "METRICS_AFTER",
    "METRICS_BEFORE",
    "REQUESTS",
    "SUMMARY",
    "WINDOW_SAMPLES",
    "CellKey",
    "RecordWriter",
    "cell_key_of",
    "cell_path",
    "check_name",
    "is_complete",
    "read_json",
    "read_records",
    "read_summary",
    "records_disagree",
    "selection_key",
    "summary_key",
    "write_atomic",
    "write_json",
]
