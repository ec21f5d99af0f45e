"""The runtime that generated rules packages carry, as ordinary modules (see core.py)."""
