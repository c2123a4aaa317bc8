"""artifact: see docs/design.md for what this stage does."""
