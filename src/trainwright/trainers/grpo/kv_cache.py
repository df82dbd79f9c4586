"""A decoding KV cache that does not copy itself at every step.

Why: ``transformers``' ``DynamicLayer`` appends each new token's keys/values with ``torch.cat``, so
every decoding step allocates and fills a fresh ``(B, heads, length, head_dim)`` tensor per layer and
per keys/values: the whole cache is copied once per generated token (and, on CPU, each copy above the
allocator's mmap threshold is fresh, page-faulted memory). When the final length is known up front,
as in a GRPO round (prompt width + ``max_completion_length``), the keys/values can live in one buffer
of that length, each step writing its new columns in place; the cache then exposes the filled part as
a view. Attention reads the same numbers either way, so logits (and sampled tokens) are bit-identical
(``tests/trainers/grpo/test_kv_cache.py``).
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache, DynamicLayer


class PreallocatedLayer(DynamicLayer):
    """A ``DynamicLayer`` whose ``keys`` / ``values`` are views of buffers holding ``capacity`` positions.

    Everything that replaces ``keys`` / ``values`` from outside (``crop``, ``batch_select_indices``,
    ``reorder_cache``, offloading) keeps working: an update that finds them no longer a prefix view of
    its buffers, or a buffer too short, moves them into a fresh buffer first (one copy, as a
    ``DynamicLayer`` makes at every step).
    """

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, capacity: int) -> None:
        super().__init__()
        self.device = keys.device
        self.capacity = max(int(capacity), keys.shape[-2])
        self._key_buffer, self._value_buffer = self._allocate(keys, values, self.capacity)
        self.keys, self.values = self._filled(keys.shape[-2])
        self.is_initialized = True

    @staticmethod
    def _allocate(
        keys: torch.Tensor, values: torch.Tensor, capacity: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        key_buffer = keys.new_empty((*keys.shape[:-2], capacity, keys.shape[-1]))
        value_buffer = values.new_empty((*values.shape[:-2], capacity, values.shape[-1]))
        key_buffer[..., : keys.shape[-2], :] = keys
        value_buffer[..., : values.shape[-2], :] = values
        return key_buffer, value_buffer

    def _filled(self, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self._key_buffer[..., :length, :], self._value_buffer[..., :length, :]

    def _is_prefix_view(self) -> bool:
        keys, values, buffer = self.keys, self.values, self._key_buffer
        return (
            keys is not None
            and values is not None
            and keys.data_ptr() == buffer.data_ptr()
            and values.data_ptr() == self._value_buffer.data_ptr()
            and keys.shape[:-2] == buffer.shape[:-2]
            and keys.stride() == buffer.stride()
            and values.stride() == self._value_buffer.stride()
        )

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the new positions after the cached ones, in place; return all cached keys / values."""
        start = self.keys.shape[-2]
        end = start + key_states.shape[-2]
        if not self._is_prefix_view() or end > self._key_buffer.shape[-2]:
            self.capacity = max(self.capacity, end)
            self._key_buffer, self._value_buffer = self._allocate(self.keys, self.values, self.capacity)
        self._key_buffer[..., start:end, :] = key_states
        self._value_buffer[..., start:end, :] = value_states
        self.keys, self.values = self._filled(end)
        return self.keys, self.values


def preallocated_cache(keys_values: list[tuple[torch.Tensor, torch.Tensor]], capacity: int) -> DynamicCache:
    """A ``DynamicCache`` holding ``keys_values`` (one ``(keys, values)`` pair per layer) in
    :class:`PreallocatedLayer` s of ``capacity`` positions (the prompt width plus the new tokens)."""
    cache = DynamicCache()
    cache.layers = [PreallocatedLayer(keys, values, capacity) for keys, values in keys_values]
    return cache
