"""History moved as stored events: export, import and the reference-gateway importer."""
