"""File-name slugs: `bounded_slug` keeps names from unbounded text under the file-name limit."""

from __future__ import annotations

from specbench.common.naming import SLUG_LIMIT, bounded_slug, slug


def test_short_text_is_its_slug_and_long_text_keeps_its_end_and_a_digest() -> None:
    assert bounded_slug("/data/my set.jsonl · max_tokens=16") == "data-my-set.jsonl-max_tokens-16"
    deep = "/" + "folder/" * 40
    one, two = bounded_slug(f"{deep}a/tiny.jsonl"), bounded_slug(f"{deep}b-tiny.jsonl")
    assert len(one) <= SLUG_LIMIT and len(two) <= SLUG_LIMIT
    assert one.endswith("-a-tiny.jsonl") and two.endswith("-b-tiny.jsonl")
    # Same slug, different text: the digest of the text tells them apart.
    assert slug(f"{deep}a/tiny.jsonl") == slug(f"{deep}a:tiny.jsonl")
    assert bounded_slug(f"{deep}a/tiny.jsonl") != bounded_slug(f"{deep}a:tiny.jsonl")
    assert bounded_slug(f"{deep}a/tiny.jsonl") == one  # deterministic
