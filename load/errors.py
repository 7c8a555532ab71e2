"""Errors of the load stage (re-exported from the one error tree)."""

from agentlake.errors import CatalogLocked, CatalogUnusable

__all__ = ["CatalogLocked", "CatalogUnusable"]
