"""Integrations with the places agents run: each module needs its own extra and imports it lazily."""
