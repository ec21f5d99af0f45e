"""rulesdsl: tabletop role-playing rules as data, compiled to a Python package and an HTML reference."""

__version__ = "0.5.0"
