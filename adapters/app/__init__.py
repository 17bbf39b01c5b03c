"""The application core: one module per use case, units of work any scheduler can run."""
