"""The categories of the datasets specbench knows, and how tables and figures name them.

SPEED-Bench's qualitative split has 11 categories and its throughput splits 3 entropy
tiers; MT-Bench has 8 categories (one, `extraction`, of its own). Pure and import-free,
so the analysis layer reads display names without loading any dataset code.
"""

from __future__ import annotations

#: SPEED-Bench qualitative categories → the name model cards print.
QUALITATIVE_CATEGORY_NAMES: dict[str, str] = {
    "coding": "Coding",
    "humanities": "Humanities",
    "math": "Math",
    "multilingual": "Multilingual",
    "qa": "QA",
    "rag": "RAG",
    "reasoning": "Reasoning",
    "roleplay": "Roleplay",
    "stem": "STEM",
    "summarization": "Summarization",
    "writing": "Writing",
}
#: SPEED-Bench qualitative categories, in the dataset's (alphabetical) order.
QUALITATIVE_CATEGORIES = tuple(QUALITATIVE_CATEGORY_NAMES)
#: SPEED-Bench throughput splits: the entropy tier is each row's category.
ENTROPY_TIERS = ("low_entropy", "mixed", "high_entropy")
#: MT-Bench categories, in FastChat's order.
MT_BENCH_CATEGORIES = (
    "writing",
    "roleplay",
    "reasoning",
    "math",
    "coding",
    "extraction",
    "stem",
    "humanities",
)

#: Every category with a display name of its own; others are worded by `category_name`.
CATEGORY_NAMES: dict[str, str] = {**QUALITATIVE_CATEGORY_NAMES, "extraction": "Extraction"}


def category_name(category: str) -> str:
    """`rag` → `RAG`; unknown categories in sentence case (`low_entropy` → `Low entropy`)."""
    return CATEGORY_NAMES.get(category, category.replace("_", " ").capitalize())
