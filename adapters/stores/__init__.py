"""Stores: memory, SQLite and PostgreSQL behind one port, and what the SQL ones share."""
