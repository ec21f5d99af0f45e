"""Validation: JSON Schema per kind (schema.py), then the rules no schema can say (semantic.py)."""
