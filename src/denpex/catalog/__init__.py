"""The catalog: one TOML file per failure kind, validated against `schema.Entry`."""

from denpex.catalog.loader import Catalog, load

__all__ = ["Catalog", "load"]
