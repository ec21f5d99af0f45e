"""The limits on what one file may hold (docs/diagnostics.md, "Limits"): far beyond any rules text, and
they keep every later stage cheap. Both parsers keep them."""

MAX_DIGITS = 15  # E104: up to 999 trillion; every such number is exact as a float, in JSON and in JavaScript
MAX_STRING = 100_000  # E105: characters in one quoted string as written; the longest field takes 20,000
MAX_SYNTAX_ERRORS = 100  # E106: syntax errors reported in one file before the rest of it is left unread
MAX_ROWS = 10_000  # E107: rows in one table, counted while parsing so that a longer one is never held whole
