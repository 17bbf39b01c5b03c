"""`python -m sessionwatch` runs the CLI."""

from sessionwatch.cli.cli import main

raise SystemExit(main())
