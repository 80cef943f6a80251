# ruff: noqa: E501  (prompt lines are kept whole, as the upstream code has them)
"""Prompt texts of SPEED-Bench's resolvers, character for character.

Each is the text NVIDIA's Model-Optimizer `specdec_bench/datasets/speed.py` builds prompts
from (commit pinned in `specbench.data.prepare.sources`), written one line per literal so its
trailing spaces stay visible. They are data: a different space moves the o200k token cut.
"""

from __future__ import annotations

#: Ada-LEval's StackSelect instruction (arXiv 2404.06480), before the question.
STACKSELECT_INTRO = (
    "\n"
    "You are an AI assistant. Your job is to find out the most helpful answer to a given question.\n"
    "Each time, you will be provided with a question and n answers to this question.\n"
    "Each answer begins with an 'A' and a number(e.g. A4), which represents its designation.\n"
    "You need to determine which answer is the most helpful one to the question.\n"
    "The case sample is shown below and you should give me the answer in the format exactly the same as the sample.\n"
    "\n"
    "However, you should NOT focus on the content of sample answer.\n"
    "\n"
    "Sample Input (format only):\n"
    "\n"
    "The question is given below.\n"
    "XXX(The content of question)\n"
    "Possible answers are given below.\n"
    "A1:\n"
    "XXX(The content of answer 1)\n"
    "A2:\n"
    "XXX(The content of answer 2)\n"
    ".\n"
    ".\n"
    ".\n"
    "An:\n"
    "XXX(The content of answer n)\n"
    "Now the answers are over, please decide which answer is the most helpful one to the question. \n"
    "You must give me the designation of the MOST helpful answer and the reason why you choose this answer.\n"
    "For every other answer, you must give me the reason why you do not choose this answer.\n"
    "\n"
    "Sample Output (format only):\n"
    "\n"
    "Answer: The designation of the most helpful answer.(e.g. A4 means answer 4 is the most helpful answer)\n"
    "Explanation:\n"
    "A4: The reason why you choose this answer.\n"
    "A1: The reason why you do not choose this answer.\n"
    "A2: The reason why you do not choose this answer.\n"
    ".\n"
    ".\n"
    ".\n"
    "An: The reason why you do not choose this answer.\n"
)

#: The lines after StackSelect's answers.
STACKSELECT_END = (
    "Now the answers are over, please decide which answer is the most helpful one to the question. \n"
    "You must give me the designation of the MOST helpful answer and the reason why you choose this answer.\n"
    "For every other answer, you must give me the reason why you do not choose this answer.\n"
)

#: The instruction Ada-LEval's TextSort prompts open with.
TEXTSORT_ORIGINAL = (
    "\n"
    "    You are an AI assistant. Your job is to sort multiple book sections into the correct order.\n"
    "    Each time, you will be provided with 4 pieces of text.\n"
    "    These texts form a continuous part of a book, but are provided in random order.\n"
    "    You need to find the correct order and return the answer in a string.\n"
    "    For example, if you output [4, 1, 3, 2], that means the correct order is: Part 4 -> Part 1 -> Part 3 -> Part 2.\n"
    "    You will also be provided with the neighboring paragraphs before and after the 4 pieces of texts. \n"
    "\n"
    "    The case sample is shown below and you should give me the answer in the format exactly the same as the sample. \n"
    "\n"
    "    However, you should NOT focus on the content of sample answer. \n"
    "\n"
    "    Please do NOT output any extra content. \n"
    "    Sample Input (format only): \n"
    "\n"
    "    Before: XXX (Text before the continuous book part)\n"
    "\n"
    "\n"
    "    Part 1: XXX\n"
    "\n"
    "\n"
    "    Part 2: XXX\n"
    "\n"
    "\n"
    "    Part 3: XXX\n"
    "\n"
    "\n"
    "    Part 4: XXX\n"
    "\n"
    "\n"
    "    After: XXX (Text after the continuous book part)\n"
    "\n"
    "\n"
    "    Sample Output (format only): \n"
    "\n"
    "    Answer: [4, 1, 3, 2] \n"
    "\n"
    "\n"
    "\n"
)

#: What SPEED-Bench puts in its place (write the parts out, not their order).
TEXTSORT_REPLACEMENT = (
    "\n"
    "You are an AI assistant. Your job is to sort multiple book sections into the correct order.    \n"
    "    Each time, you will be provided with 4 pieces of text.\n"
    "    These texts form a continuous part of a book, but are provided in random order.    \n"
    "    You need to find the correct order and write the all the parts in the correct order.    \n"
    "    For example, if the correct order is: Part 4 -> Part 1 -> Part 3 -> Part 2, you need to answer with a continous text of all the parts in the correct order.\n"
    "    You should NOT change the text, just write it in the order it should appear.   \n"
    "    You will also be provided with the neighboring paragraphs before and after the 4 pieces of texts.\n"
    "    You should NOT output the before and after paragraphs, just the text in the correct order.\n"
    "    \n"
    "    The case sample is shown below and you should give me the answer in the format exactly the same as the sample. \n"
    "    \n"
    "    However, you should NOT focus on the content of sample answer. \n"
    "    \n"
    "    Please do NOT output any extra content. \n"
    "\n"
    "    Sample Input (format only): \n"
    "    \n"
    "    Before: BBB (Text before the continuous book part)\n"
    "    \n"
    "    \n"
    "    Part 1: XXX\n"
    "\n"
    "\n"
    "    Part 2: YYY\n"
    "    \n"
    "    \n"
    "    Part 3: ZZZ\n"
    "    \n"
    "    \n"
    "    Part 4: WWW\n"
    "\n"
    "\n"
    "    After: AAA (Text after the continuous book part)\n"
    "    \n"
    "    Sample Output (format only): \n"
    "    \n"
    "    Answer: \n"
    "\n"
    "\n"
    "    WWW\n"
    "\n"
    "    XXX\n"
    "\n"
    "    ZZZ\n"
    "\n"
    "    YYY\n"
    "    "
)

#: The dialogue-completion prompt after BAMBOO (arXiv 2309.13345), before the contents.
BAMBOO_HEAD = (
    "\n"
    "I want you to act as a long dialogue completer. \n"
    "Given a long dialogue(s), your objectives are:\n"
    "1. Add one speaker mentioned in the past dialogue(s) at the end of the last sentence of each dialogue (between START CONTENT and END CONTENT) to complete the sentence and ensure its semantic integrity.  At here, the added word must be a person's name which appears in the dialogue.\n"
    "2. Continue the dialogue(s) with one or more speakers who appeared in the dialogue(s) before. Be coherent with the previous dialogue(s) and be creative in your response.\n"
    "The content of the dialogue(s) is given below.\n"
    "\n"
    "\n"
)

#: After the contents.
BAMBOO_TAIL = "\n"

#: ChatRAG-Bench's first turn (a `str.format` template: context, question).
CHATRAG = (
    "Please give a full and complete answer for the questions. \n"
    "\n"
    "Context:\n"
    "{context}\n"
    "\n"
    "Question:\n"
    "{question}"
)

#: CoSER's role-play prompt (a `str.format` template).
COSER = (
    "You are {character} from {book_name}.\n"
    "==={character}'s Profile===\n"
    "{character_profile}\n"
    "===Current Scenario===\n"
    "{scenario}\n"
    "===Information about the other Characters===\n"
    "{other_character_profiles_str}\n"
    "===Your Inner Thoughts===\n"
    "{motivation}\n"
    "\n"
    "===Requirements===\n"
    "Your output should include **thought**, **speech**, and **action**. Use [your thought]\n"
    "for thoughts, which others can't see, e.g. [I'm terrified, but I must appear strong.]. Use\n"
    "(your action) for actions, which others can see, such as (watches silently, trying to control\n"
    "her fear and anger)."
)

#: MMLU-Pro's instruction (arXiv 2406.01574; a `str.format` template: subject).
MMLU_PRO_HEAD = (
    'The following are multiple choice questions (with answers) about {subject}. Think step by step and then finish your answer with "the answer is (X)" where X is the correct letter choice.\n'
    "\n"
)

#: The few-shot HLE throughput prompt, before the category name.
HLE_HEAD = (
    "Please answer the question below.\n"
    "\n"
    "Here are some examples of question and answer pairs in the category of "
)


def _stripped(text: str, *, dedent: bool = False) -> str:
    return "\n".join(line.strip() if dedent else line.rstrip() for line in text.split("\n"))


#: NeMo-Skills' `speed-bench/prepare.py` (NVIDIA-NeMo/Skills at the commit pinned in
#: `registry`) holds the same three triple-quoted prompts with every line's trailing spaces
#: removed, and TextSort's also without its indentation; the escaped one-line strings are
#: the same in both. Different whitespace moves the o200k cut of the throughput prompts.
NEMO_SKILLS = {
    "STACKSELECT_INTRO": _stripped(STACKSELECT_INTRO),
    "TEXTSORT_REPLACEMENT": _stripped(TEXTSORT_REPLACEMENT, dedent=True),
    "BAMBOO_HEAD": _stripped(BAMBOO_HEAD),
}


def pick(name: str, flavour: str) -> str:
    """A prompt text as the given flavour's code holds it."""
    if flavour == "nemo-skills" and name in NEMO_SKILLS:
        return NEMO_SKILLS[name]
    return str(globals()[name])
