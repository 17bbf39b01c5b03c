"""Read models of sessionwatch as pure folds over the stored events, and the queries over them.

Imports the domain only; the durable copies of these views live in the adapters.
"""
