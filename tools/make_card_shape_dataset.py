"""Write the synthetic dataset of `suites/emulator-card-shape.toml` (deterministic).

Shaped like SPEED-Bench qualitative as the AMD card measured it: 11 categories of 400
conversations (4,400; the card has 880), a quarter of them two-turn, and answer lengths
that vary by category (and within it). Each turn carries `<|emulator_output_tokens=N|>`,
which the emulator honours as that turn's answer length (capped by max_tokens). Run:
`python tools/make_card_shape_dataset.py > tests/fixtures/card_shape/conversations.jsonl`
"""

from __future__ import annotations

import json
import random
import sys

#: Category → mean answer length in (emulated) tokens: ~4× between the shortest and longest,
#: like the card's qualitative categories at a 2,048-token cap, scaled down ~85×.
MEAN_OUTPUT_TOKENS = {
    "coding": 21,
    "humanities": 17,
    "math": 15,
    "multilingual": 14,
    "qa": 8,
    "rag": 9,
    "reasoning": 23,
    "roleplay": 12,
    "stem": 18,
    "summarization": 6,
    "writing": 24,
}
#: 5× the card's 80 per category: the median of a mixture whose category means span 4×
#: needs ~3,500 requests for a 2% confidence half-width, more than 880 conversations hold.
PER_CATEGORY = 400


def main() -> None:
    rng = random.Random(19)
    for category, mean in MEAN_OUTPUT_TOKENS.items():
        for index in range(PER_CATEGORY):
            num_turns = 2 if rng.random() < 0.25 else 1
            turns = []
            for turn in range(num_turns):
                length = max(2, round(mean * rng.uniform(0.8, 1.2)))
                words = " ".join(f"w{rng.randrange(1000)}" for _ in range(rng.randrange(2, 8)))
                turns.append(
                    f"{category} question {index} turn {turn}: {words} "
                    f"<|emulator_output_tokens={length}|>"
                )
            row = {"question_id": f"{category}-{index:03d}", "category": category, "turns": turns}
            sys.stdout.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
