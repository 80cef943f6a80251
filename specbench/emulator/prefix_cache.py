"""The emulator's prefix cache: which prompt blocks a request finds already computed.

A model of vLLM's automatic prefix caching, at its granularity: a prompt is cut into
full blocks of `block_size` tokens, each block identified by a hash chained over every
block before it, so a block is found only when the whole prefix up to it matches. A
request's hits are its leading blocks already cached, never its whole prompt (the last
token is always computed, as in vLLM), in tokens; its queries are its prompt tokens
(`vllm:prefix_cache_hits_total` / `vllm:prefix_cache_queries_total`). Its blocks are
cached once it is admitted. `reset()` forgets every block, as `/reset_prefix_cache` does.
"""

from __future__ import annotations

from collections.abc import Sequence


class PrefixCache:
    """Chained block hashes of every prompt seen since the last reset."""

    def __init__(self, block_size: int) -> None:
        if block_size < 1:
            raise ValueError(f"block_size must be positive, got {block_size}")
        self.block_size = block_size
        self._blocks: set[int] = set()

    def admit(self, tokens: Sequence[object]) -> int:
        """Cache `tokens`' full blocks; return the tokens found cached before (a multiple
        of `block_size`, below len(tokens))."""
        size = self.block_size
        usable = (len(tokens) - 1) // size if tokens else 0  # the last token is computed
        parent = 0
        hits = 0
        matching = True
        for index in range(len(tokens) // size):
            parent = hash((parent, tuple(tokens[index * size : (index + 1) * size])))
            if matching and index < usable and parent in self._blocks:
                hits += size
            else:
                matching = False
            self._blocks.add(parent)
        return hits

    def reset(self) -> None:
        self._blocks.clear()
