"""The shell of sessionwatch: event stores, read-model tables, the `SessionWatch` façade, the CLI.

Everything that touches a file, a connection, a clock or a log lives here.
"""
