"""The upstream monitor's thread and the transcript providers it asks."""
