"""The base of every persisted or configured pydantic model: frozen, unknown fields refused."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Immutable once validated; an unknown field is a validation error, never ignored."""

    model_config = ConfigDict(frozen=True, extra="forbid")
