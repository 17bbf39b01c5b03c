"""The command line and the demo: the top room, above the integrations; nothing imports it back."""
