"""CoSER (Neph0s/CoSER, the test set of the hub repo by URL): a role-play scene prompt.

The character is drawn by a generator seeded 12347 in every call; the other characters are
listed in the order `datasets` reads the profile keys (a struct merged over all rows, missing
keys null), which is why `datasets` >= 4.7 is required.
"""

from __future__ import annotations

from typing import Any

from specbench.data.prepare import templates
from specbench.data.prepare.context import Context, index_row


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    import numpy as np

    url = row["source"].replace("tree", "raw") + "/test/test_set.json"
    rows = ctx.cached(("json", url), lambda: ctx.upstream.json([url]))
    scene = index_row(rows, int(row["src_id"].split("_")[1]), row["question_id"])
    character = str(np.random.default_rng(seed=12347).choice(scene["major_characters"]))
    profiles = scene["character_profiles"]
    motivation = next(
        (k["motivation"] for k in scene["key_characters"] if k["name"] == character),
        "No motivation provided",
    )
    others = "\n\n".join(
        f"{name}: {profile}"
        for name, profile in profiles.items()
        if name != character and profile is not None
    )
    return [
        templates.COSER.format(
            character=character,
            character_profile=profiles[character],
            book_name=scene["book"],
            scenario=scene["scenario"],
            other_character_profiles_str=others,
            motivation=motivation,
        )
    ]
