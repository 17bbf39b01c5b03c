"""The session tools' façade over the host's ports."""
