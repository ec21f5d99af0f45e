"""The rules as one JavaScript ES module per ruleset (rules.js), from the same IR as the Python package."""
