"""`python -m sessionwatch` runs the CLI."""

from sessionwatch.adapters.entry.cli import main

raise SystemExit(main())
