"""`python -m sessionwatch` runs the CLI."""

from sessionwatch.adapters.cli import main

raise SystemExit(main())
