"""The pure domain of sessionwatch: keys, signals, the Session stream and the notice rules.

Nothing here performs I/O, reads a clock or imports the adapters; time and ids arrive in commands.
"""
