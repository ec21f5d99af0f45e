"""Emitters: the validated documents rendered through Jinja2 templates (Python package, HTML site)."""
